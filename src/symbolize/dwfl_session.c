/* dwfl_session.c -- see dwfl_session.h.
 *
 * Each module file gets its own Dwfl, reported at base 0 with
 * add_p_vaddr, so a dwfl address is the ELF virtual address (the offset
 * the segment gives us) and modules of different processes, or a module
 * unloaded and another loaded at its place, can never overlap.  Debug
 * info: dwfl_standard_find_debuginfo looks in the file, under
 * /usr/lib/debug/.build-id, follows .gnu_debuglink, and asks debuginfod
 * when DEBUGINFOD_URLS is set. */
#include "dwfl_session.h"

#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

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

/* Why the file at path cannot be used as it is, or NULL. */
static const char *file_problem(const char *path)
{
    if (path[0] != '/')
        return "no file (JIT/vdso)";
    if (ends_with(path, " (deleted)"))
        return "file deleted";
    struct stat st;
    if (stat(path, &st) != 0)
        return "file deleted";
    if (!S_ISREG(st.st_mode))
        return "no file (JIT/vdso)";
    return NULL;
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

void mt_dwfl_open(mt_dwfl_session *s, const char *path, const uint8_t *build_id,
                  unsigned build_id_len)
{
    memset(s, 0, sizeof *s);
    s->unresolved = file_problem(path);
    if (s->unresolved)
        return;
    s->dwfl = dwfl_begin(&offline_callbacks);
    if (!s->dwfl) {
        s->unresolved = "no symbols";
        return;
    }
    dwfl_report_begin(s->dwfl);
    s->mod = dwfl_report_elf(s->dwfl, path, path, -1, 0, true);
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (!s->mod)
        s->unresolved = "bad ELF file";
    else if (!same_build_id(s->mod, build_id, build_id_len))
        s->unresolved = "binary replaced";
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
