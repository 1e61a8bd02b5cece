/* alloc_stats.h -- the allocator's own view of its memory for tcmalloc and
 * mimalloc (jemalloc's is alloc_jemalloc.c), for fragmentation: the
 * header's "Allocator tcmalloc 2.10 (static): 12.4 MiB, 9% not live" and
 * the exports' allocator figures (docs/allocators.md). */
#ifndef MT_ALLOC_STATS_H
#define MT_ALLOC_STATS_H

#include "shm_layout.h"

#include <stdbool.h>
#include <stdint.h>

/* The functions that give an allocator's figures, as found in its module
 * (NULL where absent). */
typedef struct mt_stats_fns {
    void *tc_property; /* tcmalloc: MallocExtension_GetNumericProperty */
    void *tc_version;  /* tcmalloc: tc_version */
    void *mi_info;     /* mimalloc: mi_process_info */
    void *mi_version;  /* mimalloc: mi_version */
} mt_stats_fns;

/* Registers the figures of the allocator whose entry is found->a[index]
 * (kind MT_ALLOC_KIND_TCMALLOC or _MIMALLOC) and writes its version into
 * that entry, and for a hooked tcmalloc the bytes it had handed out
 * before (before_hooks: blocks in no trace).  The allocator scan, under
 * its lock (scans are not serialised with fork: the allocator's locks
 * cannot be waited for in fork_prepare). */
void mt_alloc_stats_add(uint32_t kind, uint32_t index, const mt_stats_fns *f,
                        mt_shm_allocator *entry);

/* Asks each registered allocator, and every hooked jemalloc
 * (mt_je_refresh), for its figures and keeps them.  The publisher thread,
 * or the exiting/exec'ing thread before the final publish, holding no
 * memtop lock: the allocator takes its own locks, which a thread forking
 * may hold while it waits for memtop's (fork_prepare). */
void mt_alloc_stats_refresh(void);

/* Copies the figures kept into their entries (MT_ALLOC_STATS).  Calls no
 * allocator: under the scan's lock. */
void mt_alloc_stats_fill(mt_shm_allocators *found);

/* The first registered allocator's resident and allocated bytes as last
 * kept (allocated MT_UNKNOWN for mimalloc, which does not count them);
 * false if none has figures.  Calls no allocator: any memtop thread. */
bool mt_alloc_stats_main(uint64_t *held, uint64_t *inuse);

#endif
