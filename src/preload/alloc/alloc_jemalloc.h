/* alloc_jemalloc.h -- a jemalloc found in the process: its own figures, and
 * hooking it through its own hook API (docs/allocators.md). */
#ifndef MT_ALLOC_JEMALLOC_H
#define MT_ALLOC_JEMALLOC_H

#include "unwind_backtrace.h"
#include "shm_layout.h"

#include <stdbool.h>

typedef int (*mt_mallctl_fn)(const char *name, void *oldp, size_t *oldlenp, void *newp,
                             size_t newlen);

/* Fills a->version from the jemalloc whose mallctl is given. */
void mt_je_version(mt_mallctl_fn mallctl, mt_shm_allocator *a);

/* Keeps the jemalloc whose mallctl is given, for its own figures
 * (a->before_hooks: its stats.allocated now), and with hook_api installs
 * memtop's hooks into it (experimental.hooks.install, jemalloc >= 5.2;
 * without, its entry points are redirected: alloc_je_redirect.h).  trim:
 * its code, for backtraces from the hooks (unwind_backtrace.h); index:
 * where its entry goes in the list.  On success sets MT_ALLOC_HOOKED and
 * returns true; else writes why into a->note.  Runs with the thread marked
 * inside memtop (jemalloc may allocate). */
bool mt_je_install(mt_mallctl_fn mallctl, const mt_trim *trim, uint32_t index, mt_shm_allocator *a,
                   bool hook_api);

/* Asks every hooked jemalloc for its own view (epoch, then
 * stats.allocated, active, resident, mapped) and keeps it.  mallctl takes
 * jemalloc's locks, which its fork handler takes too, maybe before
 * memtop's fork_prepare waits for the publish lock: so only with no memtop
 * lock held (mt_alloc_stats_refresh's callers, alloc_stats.h). */
void mt_je_refresh(void);

/* Copies the figures kept into each jemalloc's entry, found by the index
 * given at install (MT_ALLOC_STATS when known).  Calls no allocator. */
void mt_je_fill(mt_shm_allocators *found);

/* The process's main jemalloc (the first hooked), if any: its resident
 * and allocated bytes as last kept (MT_UNKNOWN if not known).  False if
 * there is none.  Calls no allocator: any memtop thread, any lock held. */
bool mt_je_main_bytes(uint64_t *held, uint64_t *inuse);

#endif
