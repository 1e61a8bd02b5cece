/* shm_modules.h -- the module map (executable, shared objects, vdso),
 * parsed incrementally into private memory, with address lookup. */
#ifndef MEMTOP_SHM_MODULES_H
#define MEMTOP_SHM_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "shm_segment.h"

typedef struct mt_module_info {
    uint64_t bias, start, end;
    uint64_t load_seq, unload_seq; /* unload_seq 0 while loaded */
    uint32_t unload_trace;         /* the next trace id at its unload; 0: loaded or not known */
    uint32_t build_id_len;
    uint8_t build_id[MT_BUILD_ID_MAX];
    char path[MT_PATH_MAX]; /* NUL-terminated */
} mt_module_info;

typedef struct mt_holders mt_holders; /* shm_modules_holders.c */

typedef struct mt_modules {
    mt_module_info *items; /* in segment order */
    size_t count, cap;
    size_t *order;       /* indices sorted by start */
    uint64_t *max_end;   /* max_end[k] = max end of order[0..k] */
    size_t index_cap;    /* entries order and max_end have room for */
    int pid;             /* the process mapping them, as we see it (mt_segment_pid); 0: none */
    uint64_t gen;        /* changes with items: mt_modules_changed */
    mt_holders *holders; /* the lookups' index, built for a gen; NULL: not yet */
} mt_modules;

void mt_modules_init(mt_modules *m);
void mt_modules_free(mt_modules *m);

/* Parse modules appended since the last call (path NUL-terminated, start <
 * end, build id length in range) and refresh every module's unload_seq. */
mt_errc mt_modules_update(mt_modules *m, const mt_segment *seg, mt_err *err);

/* Rebuild the address index after items were appended. */
mt_errc mt_modules_reindex(mt_modules *m, mt_err *err);

/* The same after one item was appended, in time linear in the modules
 * that start after it, not a sort of all: a recording of a service that
 * loads and unloads a plugin all day holds thousands of modules.  Out of
 * memory, the item is not indexed: the caller takes it back out of count
 * (lookups would read an order entry never written). */
mt_errc mt_modules_index_last(mt_modules *m, mt_err *err);

/* Notes that items changed (their unload_seq or unload_trace written by
 * the caller): the lookups' index is built again.  mt_modules_update,
 * mt_modules_reindex and mt_modules_index_last note it themselves. */
void mt_modules_changed(mt_modules *m);

/* Builds now the index that the first lookup after a change builds (the
 * modules that held each address, shm_modules_holders.c): before a map is
 * shared by threads that look it up at once. */
void mt_modules_index_holders(const mt_modules *m);

/* The module containing addr (a loaded one is preferred over an unloaded
 * one, then the latest), or NULL.  In time logarithmic in the modules
 * that held addr (a plugin loaded and unloaded thousands of times at one
 * place), from the index, as mt_modules_find_at. */
const mt_module_info *mt_modules_find(const mt_modules *m, uint64_t addr);

/* The module that held addr when trace `trace` was taken.  Modules that
 * hold one address were loaded one after the other, and trace ids grow, so
 * it is the one, of those holding addr, with the smallest known
 * unload_trace above `trace` (a loaded one's is above every trace; among
 * loaded ones, the latest).  None such (every one holding addr was
 * unloaded before the trace, or when is not known: older targets and
 * recordings, or trace 0, the overflow trace, which has no frames):
 * mt_modules_find's answer. */
const mt_module_info *mt_modules_find_at(const mt_modules *m, uint64_t addr, uint32_t trace);

#endif
