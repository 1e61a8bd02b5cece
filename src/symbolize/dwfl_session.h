/* dwfl_session.h -- one module file opened with libdwfl, offline: the
 * addresses it is asked about are ELF virtual addresses in the file. */
#ifndef MEMTOP_DWFL_SESSION_H
#define MEMTOP_DWFL_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include "cu_index.h"
#include "debuginfod_query.h"
#include "symbolizer.h"

/* What the find_debuginfo callback needs (reached through the module's
 * userdata, so it must not move: allocated apart from the session). */
typedef struct mt_debug_ctx {
    Dwfl *dwfl;
    mt_debuginfod *debuginfod;
    const char *note; /* why no debug file was found, if a server was not asked */
    char root[32];    /* "" or the target's root, "/proc/PID/root" */
} mt_debug_ctx;

typedef struct mt_dwfl_session {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    mt_cu_index scopes;     /* CUs indexed so far */
    const char *unresolved; /* why every address of the module is unknown, or NULL */
    bool symtab_only;       /* its DWARF names other files (untrusted module): not read */
    mt_debug_ctx *debug;
} mt_dwfl_session;

/* Opens m's file: its path when that file has m's build-id, else (the
 * file replaced, deleted, or in another mount namespace) the file the
 * live process m->pid maps (proc_file.h) when it has m's build-id.  If
 * none, s->unresolved says why and s->dwfl is NULL.  d (shared by the
 * sessions, outliving them) bounds debuginfod. */
void mt_dwfl_open(mt_dwfl_session *s, const mt_sym_module *m, mt_debuginfod *d);

/* Why an address of the module has no name: "no symbols", or why its
 * debug file was not fetched. */
const char *mt_dwfl_no_symbols(const mt_dwfl_session *s);

/* A descriptor of the file at name that its owner cannot change under the
 * reader (safe_file.h), or -1 with *why; resolve: name is a path the
 * target named, resolved into canon (PATH_MAX bytes) first; else a
 * /proc/PID name of the file (proc_file.h), always copied.  *trusted: the
 * file and every directory above canon are root's or ours. */
int mt_dwfl_open_file(const char *name, bool resolve, char *canon, bool *trusted, const char **why);

/* Drops the module's libdwfl session (s->unresolved, s->debug stay). */
void mt_dwfl_close(mt_dwfl_session *s);

/* Everything. */
void mt_dwfl_free(mt_dwfl_session *s);

#endif
