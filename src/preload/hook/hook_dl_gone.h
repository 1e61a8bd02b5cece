/* hook_dl_gone.h -- which modules a dlclose unloaded, and the retirement of
 * the traces into them (hook_dl.c). */
#ifndef MT_HOOK_DL_GONE_H
#define MT_HOOK_DL_GONE_H

#include "table_trace_index.h"

/* The modules loaded before a real dlclose: their address ranges (memtop's
 * memory, from mmap) and the loader's counts then (its load count only
 * sizes the listing; its unload count tells whether the dlclose unloaded
 * anything). */
typedef struct mt_dl_listing {
    mt_code_range *r;
    uint32_t n, cap;
    uint32_t count;                /* the next trace id, read before the listing */
    bool truncated;                /* more modules than room: some not listed */
    unsigned long long adds, subs; /* the loader's load and unload counts */
} mt_dl_listing;

/* Lists the loaded modules into l (before the real dlclose).  l->r is NULL
 * when no memory could be had: then mt_dl_retire_gone does nothing. */
void mt_dl_list(mt_dl_listing *l);

/* After the real dlclose: retires the traces into the modules of l that
 * are no longer loaded (mt_traces_retire), then frees l. */
void mt_dl_retire_gone(mt_dl_listing *l);

#endif
