/* dwfl_session.c -- see dwfl_session.h.
 *
 * Each module file gets its own Dwfl, reported at base 0 with
 * add_p_vaddr, so a dwfl address is the ELF virtual address (the offset
 * the segment gives us) and modules of different processes, or a module
 * unloaded and another loaded at its place, can never overlap.
 *
 * The path comes from a segment another user may have written, so libdwfl
 * never opens it: it gets a descriptor from safe_file.c (the file itself
 * when only root or the viewer can change it, else a sealed copy).  Debug
 * info: when every directory on the canonical path is root's or the
 * viewer's, dwfl_standard_find_debuginfo looks in the file, under
 * /usr/lib/debug/.build-id, follows .gnu_debuglink, and asks debuginfod
 * when DEBUGINFOD_URLS is set: nobody else can plant a file or a FIFO
 * where it looks.  Otherwise guarded_find_debuginfo looks in the same
 * places (build-id, then the debuglink next to the file, in .debug/ and
 * under /usr/lib/debug) but opens each candidate through safe_file.c,
 * copies it if need be, and takes it only when its build-id is the
 * module's; no dwz alternate file, no debuginfod then.  And libdw itself
 * opens files named in DWARF (dwz alternate, split .dwo) when a DIE needs
 * them: an untrusted module whose DWARF names any is symbolized from its
 * symbol table only (dwarf_refs.c). */
#include "dwfl_session.h"

#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_refs.h"
#include "safe_file.h"

static char *debuginfo_path = NULL; /* NULL: elfutils' default search path */

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* fd of candidate if it is a regular file whose build-id is want. */
static int debug_candidate(const char *candidate, const unsigned char *want, int len)
{
    struct stat st;
    const char *why;
    int fd = mt_open_regular(candidate, &st, &why);
    if (fd < 0)
        return -1;
    fd = mt_stable_fd(fd, &st, MT_COPY_LIMIT, &why);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *id = NULL;
    bool same = elf && dwelf_elf_gnu_build_id(elf, &id) == len && memcmp(id, want, len) == 0;
    elf_end(elf);
    if (!same) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Where dwfl_standard_find_debuginfo looks, in its order, for the debug
 * file of a module with build-id id at file_name; how many paths. */
static int candidate_paths(char out[4][PATH_MAX], const unsigned char *id, int len,
                           const char *file_name, const char *debuglink)
{
    int at = snprintf(out[0], PATH_MAX, "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (int i = 1; i < len && at < PATH_MAX - 8; i++)
        at += snprintf(out[0] + at, PATH_MAX - at, "%02x", id[i]);
    snprintf(out[0] + at, PATH_MAX - at, ".debug");
    const char *slash = strrchr(file_name, '/');
    int dir = slash ? (int)(slash - file_name) : 0;
    if (debuglink && debuglink[0] == '/') {
        snprintf(out[1], PATH_MAX, "%s", debuglink);
        return 2;
    }
    if (!debuglink || !slash)
        return 1;
    snprintf(out[1], PATH_MAX, "%.*s/%s", dir, file_name, debuglink);
    snprintf(out[2], PATH_MAX, "%.*s/.debug/%s", dir, file_name, debuglink);
    snprintf(out[3], PATH_MAX, "/usr/lib/debug%.*s/%s", dir, file_name, debuglink);
    return 4;
}

/* The debug file of a module whose directories another user can change. */
static int guarded_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                  GElf_Addr base, const char *file_name, const char *debuglink,
                                  GElf_Word crc, char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base;
    /* A dwz alternate file is asked for by name with no CRC: not looked
     * for (its build-id is not the module's; the module's own debug file
     * found by build-id must not pass for it). */
    if (!file_name || (debuglink && crc == 0))
        return -1;
    const unsigned char *id;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &id, &vaddr);
    if (len <= 0)
        return -1; /* nothing to check a separate file against */
    char paths[4][PATH_MAX];
    int n = candidate_paths(paths, id, len, file_name, debuglink);
    for (int i = 0; i < n; i++) {
        int fd = debug_candidate(paths[i], id, len);
        if (fd >= 0) {
            *debuginfo_file_name = strdup(paths[i]);
            return fd;
        }
    }
    return -1; /* never leave a name behind: libdwfl would open it */
}

static const Dwfl_Callbacks guarded_callbacks = {
    .find_elf = dwfl_build_id_find_elf, /* not used: modules are reported with a descriptor */
    .find_debuginfo = guarded_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* A descriptor of the module's file for libdwfl, or -1 with s->unresolved;
 * *trusted: the file and every directory above it are root's or ours. */
static int open_module(mt_dwfl_session *s, const char *path, char *canon, bool *trusted)
{
    if (path[0] != '/') {
        s->unresolved = "no file (JIT/vdso)";
        return -1;
    }
    if (ends_with(path, " (deleted)") || !realpath(path, canon)) {
        s->unresolved = "file deleted";
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    int fd = mt_open_regular(canon, &st, &why);
    int stable = fd < 0 ? -1 : mt_stable_fd(fd, &st, MT_COPY_LIMIT, &why);
    if (stable < 0)
        s->unresolved = why;
    *trusted = stable >= 0 && stable == fd && mt_path_trusted(canon);
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

/* Finds the module's DWARF now (before any DIE is read) and says whether
 * it names files of its own. */
static bool names_files(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    return dw && mt_dwarf_names_files(dw);
}

void mt_dwfl_open(mt_dwfl_session *s, const char *path, const uint8_t *build_id,
                  unsigned build_id_len)
{
    memset(s, 0, sizeof *s);
    char canon[PATH_MAX];
    bool trusted = false;
    int fd = open_module(s, path, canon, &trusted);
    if (fd < 0)
        return;
    s->dwfl = dwfl_begin(trusted ? &offline_callbacks : &guarded_callbacks);
    if (!s->dwfl) {
        close(fd);
        s->unresolved = "no symbols";
        return;
    }
    dwfl_report_begin(s->dwfl);
    s->mod = dwfl_report_elf(s->dwfl, path, canon, fd, 0, true);
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (!s->mod) {
        close(fd); /* libdwfl owns fd only on success */
        s->unresolved = "bad ELF file";
    } else if (!same_build_id(s->mod, build_id, build_id_len))
        s->unresolved = "binary replaced";
    else if (!trusted)
        s->symtab_only = names_files(s->mod);
    if (s->unresolved)
        mt_dwfl_close(s);
}

void mt_dwfl_close(mt_dwfl_session *s)
{
    mt_cu_index_free(&s->scopes);
    if (s->dwfl)
        dwfl_end(s->dwfl);
    s->dwfl = NULL;
    s->mod = NULL;
}
