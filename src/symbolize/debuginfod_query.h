/* debuginfod_query.h -- asking a debuginfod server for a module's debug
 * file, bounded in time.
 *
 * libdwfl (dwfl_standard_find_debuginfo) already asks debuginfod, through
 * libdebuginfod, when DEBUGINFOD_URLS is set and nothing is found locally;
 * but a query has no bound of its own but DEBUGINFOD_TIMEOUT (90 s without
 * progress, per server) and every module without local debug info asks
 * again.  The symbolizer runs in the viewer's worker thread, so a slow
 * server only delays names; still a `--batch` or an export must end, and a
 * dead server must not cost its timeout for each of a process's modules.
 * So memtop installs a progress callback on libdwfl's own client
 * (dwfl_get_debuginfod_client) that aborts a query after the bound
 * (DEBUGINFOD_MAXTIME seconds when set, else MT_DEBUGINFOD_TIMEOUT_S) or
 * when the symbolizer is cancelled, and after a query that timed out, asks
 * no server for MT_DEBUGINFOD_BACKOFF_S (modules then say why they have no
 * names).  A file a server sent lands in the viewer's own cache
 * (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and is taken
 * only when its build-id is the module's. */
#ifndef MEMTOP_DEBUGINFOD_QUERY_H
#define MEMTOP_DEBUGINFOD_QUERY_H

#include <stdbool.h>
#include <time.h>

#include <elfutils/libdwfl.h>

#define MT_DEBUGINFOD_TIMEOUT_S 10
#define MT_DEBUGINFOD_BACKOFF_S 300

/* Used by the thread that symbolizes; only cancelled is written by others. */
typedef struct mt_debuginfod {
    bool enabled;        /* DEBUGINFOD_URLS set, not empty */
    unsigned timeout_s;  /* bound of one query */
    bool cancelled;      /* atomic: mt_debuginfod_cancel */
    const char *aborted; /* why the query under way was aborted, or NULL */
    struct timespec quiet_until, deadline;
} mt_debuginfod;

/* Reads DEBUGINFOD_URLS and DEBUGINFOD_MAXTIME. */
void mt_debuginfod_init(mt_debuginfod *d);

/* Whether a query may be made now: enabled, not cancelled, not backing
 * off after a timeout. */
bool mt_debuginfod_ready(const mt_debuginfod *d);

/* Before libdwfl may query: bounds the queries of dwfl's client from now. */
void mt_debuginfod_arm(mt_debuginfod *d, Dwfl *dwfl);

/* Why a module's debug file was not asked for while !mt_debuginfod_ready
 * (a reason for a module without names), or NULL when not enabled. */
const char *mt_debuginfod_skipped(const mt_debuginfod *d);

/* After: when the query timed out, no server is asked for a while.  The
 * reason to show for a module left without names, or NULL. */
const char *mt_debuginfod_done(mt_debuginfod *d);

/* A descriptor of the debug file with this build-id from a server (through
 * dwfl's client, armed), or -1. */
int mt_debuginfod_fetch(mt_debuginfod *d, Dwfl *dwfl, const unsigned char *id, int len);

/* Any thread: aborts the query under way and every later one. */
void mt_debuginfod_cancel(mt_debuginfod *d);

#endif
