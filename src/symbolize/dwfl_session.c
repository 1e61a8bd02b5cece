/* dwfl_session.c -- see dwfl_session.h.
 *
 * Each module file gets its own Dwfl, reported at base 0 with
 * add_p_vaddr, so a dwfl address is the ELF virtual address (the offset
 * the segment gives us) and modules of different processes, or a module
 * unloaded and another loaded at its place, can never overlap.
 *
 * The path comes from a segment another user may have written, so libdwfl
 * never opens it: it gets a descriptor from safe_file.c (the file itself
 * when only root or the viewer can change it, else a sealed copy).  When
 * that path no longer holds the file the target maps (deleted, replaced by
 * an upgrade, or in another mount namespace), the target's own names for
 * it are tried (proc_file.h), and any file is taken only when its build-id
 * is the one the target published.
 *
 * Debug info: when the file came from its own path and every directory on
 * the canonical path is root's or the viewer's, dwfl_standard_find_debuginfo
 * looks in the file, under /usr/lib/debug/.build-id, follows
 * .gnu_debuglink (checked by build-id, else CRC), finds dwz alternate files
 * and asks debuginfod when DEBUGINFOD_URLS is set (bounded:
 * debuginfod_query.h): nobody else can plant a file or a FIFO where it
 * looks, and writing that search again would only repeat it.  Otherwise
 * (another user's directories, or a file reached through /proc/PID)
 * debug_find.c looks in the same places, opens each candidate through
 * safe_file.c and takes it only when its build-id is the module's; then
 * debuginfod.  For a target in another mount namespace both also look
 * under its root.  .gnu_debugdata (MiniDebugInfo: an xz-compressed symbol
 * table in the file) is read by libdwfl itself in every case.  And libdw
 * opens files named in DWARF (dwz alternate, split .dwo) when a DIE needs
 * them: an untrusted module whose DWARF names any is symbolized from its
 * symbol table only (dwarf_refs.c). */
#include "dwfl_session.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debug_find.h"
#include "dwarf_refs.h"
#include "proc_file.h"
#include "safe_file.h"

static char *debuginfo_path = NULL; /* NULL: elfutils' default search path */

/* A dwz alternate file is asked for by name with no CRC: not looked for
 * by memtop (its build-id is not the module's; the module's own debug
 * file found by build-id must not pass for it). */
static bool asks_for_alt(const char *debuglink, GElf_Word crc)
{
    return debuglink && crc == 0;
}

/* Keeps the first reason a module's debug file was not fetched (libdwfl
 * asks again, e.g. for a dwz alternate file, once servers are shunned). */
static void note(mt_debug_ctx *c, const char *why)
{
    if (!c->note)
        c->note = why;
}

/* The debug file of a module reached through untrusted directories or
 * /proc/PID: memtop's own search, then a debuginfod server. */
static int guarded_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                  GElf_Addr base, const char *file_name, const char *debuglink,
                                  GElf_Word crc, char **debuginfo_file_name)
{
    (void)modname, (void)base;
    mt_debug_ctx *c = *userdata;
    const unsigned char *id;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &id, &vaddr);
    if (!c || !file_name || asks_for_alt(debuglink, crc) || len <= 0)
        return -1; /* nothing to check a separate file against */
    int fd = mt_debug_find(c->root, id, len, file_name, debuglink, debuginfo_file_name);
    if (fd >= 0)
        return fd;
    bool asked = mt_debuginfod_ready(c->debuginfod);
    fd = mt_debuginfod_fetch(c->debuginfod, c->dwfl, id, len);
    note(c, asked ? mt_debuginfod_done(c->debuginfod) : mt_debuginfod_skipped(c->debuginfod));
    if (fd >= 0 && (fd = mt_debug_check_fd(fd, id, len)) >= 0)
        *debuginfo_file_name = strdup("debuginfod");
    return fd; /* never leave a name behind when -1: libdwfl would open it */
}

/* elfutils' standard search, with its debuginfod query bounded; while
 * servers are shunned (a query timed out), the local search alone; then
 * the target's root. */
static int trusted_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                  GElf_Addr base, const char *file_name, const char *debuglink,
                                  GElf_Word crc, char **debuginfo_file_name)
{
    mt_debug_ctx *c = *userdata;
    mt_debuginfod *d = c->debuginfod;
    int fd = -1;
    if (!d->enabled || mt_debuginfod_ready(d)) {
        mt_debuginfod_arm(d, c->dwfl);
        fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
                                          debuginfo_file_name);
        note(c, mt_debuginfod_done(d));
        if (fd >= 0 || !c->root[0])
            return fd;
    } else if (!asks_for_alt(debuglink, crc)) {
        note(c, mt_debuginfod_skipped(d));
    }
    mt_debuginfod shunned = {0}; /* no server twice */
    c->debuginfod = &shunned;
    fd = guarded_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
                                debuginfo_file_name);
    c->debuginfod = d;
    return fd;
}

static const Dwfl_Callbacks trusted_callbacks = {
    .find_elf = dwfl_build_id_find_elf, /* not used: modules are reported with a descriptor */
    .find_debuginfo = trusted_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks guarded_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = guarded_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int mt_dwfl_open_file(const char *name, bool resolve, char *canon, bool *trusted, const char **why)
{
    *trusted = false;
    if (resolve && (ends_with(name, " (deleted)") || !realpath(name, canon))) {
        *why = "file deleted";
        return -1;
    }
    struct stat st;
    int fd = mt_open_regular(resolve ? canon : name, &st, why);
    int stable = fd < 0    ? -1
                 : resolve ? mt_stable_fd(fd, &st, MT_COPY_LIMIT, why)
                           : mt_copy_fd(fd, &st, MT_COPY_LIMIT, why);
    *trusted = resolve && stable >= 0 && stable == fd && mt_path_trusted(canon);
    return stable;
}

static bool same_build_id(Dwfl_Module *mod, const uint8_t *want, unsigned len)
{
    if (len == 0)
        return true; /* nothing recorded: nothing to check against */
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    return n > 0 && (unsigned)n == len && memcmp(bits, want, len) == 0;
}

/* Reports fd (file_name: where it is, for its debuglink) as s's module if
 * its build-id is m's; false with *why.  fd is consumed. */
static bool report(mt_dwfl_session *s, const mt_sym_module *m, const char *file_name, int fd,
                   bool trusted, const char **why)
{
    s->dwfl = dwfl_begin(trusted ? &trusted_callbacks : &guarded_callbacks);
    if (!s->dwfl) {
        close(fd);
        *why = "no symbols";
        return false;
    }
    dwfl_report_begin(s->dwfl);
    s->mod = dwfl_report_elf(s->dwfl, m->path, file_name, fd, 0, true);
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (!s->mod) {
        close(fd); /* libdwfl owns fd only on success */
        *why = "bad ELF file";
    } else if (!same_build_id(s->mod, m->build_id, m->build_id_len)) {
        *why = "binary replaced";
    } else {
        void **userdata;
        dwfl_module_info(s->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
        *userdata = s->debug;
        s->debug->dwfl = s->dwfl;
        return true;
    }
    dwfl_end(s->dwfl);
    s->dwfl = NULL;
    s->mod = NULL;
    return false;
}

/* Finds the module's DWARF now (before any DIE is read) and says whether
 * it names files of its own. */
static bool names_files(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    return dw && mt_dwarf_names_files(dw);
}

/* The file the live target maps, through its own names for it; only
 * with a build-id to check.  *trusted false: not a canonical path. */
static bool open_through_target(mt_dwfl_session *s, const mt_sym_module *m, bool *trusted)
{
    char alts[MT_PROC_ALT_MAX][PATH_MAX];
    int n = m->build_id_len ? mt_proc_module_alts(m->pid, m->path, m->start, m->end, alts) : 0;
    for (int i = 0; i < n; i++) {
        const char *why;
        int fd = mt_dwfl_open_file(alts[i], false, NULL, trusted, &why);
        if (fd >= 0 && report(s, m, alts[0], fd, false, &why))
            return true;
    }
    return false;
}

void mt_dwfl_open(mt_dwfl_session *s, const mt_sym_module *m, mt_debuginfod *d)
{
    memset(s, 0, sizeof *s);
    if (m->path[0] != '/') {
        s->unresolved = "no file (JIT/vdso)";
        return;
    }
    s->debug = calloc(1, sizeof *s->debug);
    if (!s->debug) {
        s->unresolved = "out of memory";
        return;
    }
    s->debug->debuginfod = d;
    mt_proc_root(m->pid, s->debug->root, sizeof s->debug->root);
    char canon[PATH_MAX];
    bool trusted = false;
    const char *why = NULL;
    int fd = mt_dwfl_open_file(m->path, true, canon, &trusted, &why);
    bool ok = fd >= 0 && report(s, m, canon, fd, trusted, &why);
    if (!ok && !open_through_target(s, m, &trusted))
        s->unresolved = why;
    else if (!trusted)
        s->symtab_only = names_files(s->mod);
    if (s->unresolved)
        mt_dwfl_close(s);
}

const char *mt_dwfl_no_symbols(const mt_dwfl_session *s)
{
    return s->debug && s->debug->note ? s->debug->note : "no symbols";
}

void mt_dwfl_close(mt_dwfl_session *s)
{
    mt_cu_index_free(&s->scopes);
    if (s->dwfl)
        dwfl_end(s->dwfl);
    s->dwfl = NULL;
    s->mod = NULL;
}

void mt_dwfl_free(mt_dwfl_session *s)
{
    mt_dwfl_close(s);
    free(s->debug);
    s->debug = NULL;
}
