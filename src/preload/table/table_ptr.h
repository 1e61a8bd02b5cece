/* table_ptr.h -- every live block memtop tracks: pointer -> (size, trace, birth). */
#ifndef MT_PTR_TABLE_H
#define MT_PTR_TABLE_H

#include "core_common.h"

#include <stdbool.h>

/* What memtop remembers about one live block (stored packed in 16 bytes:
 * table_ptr_slot.h).  birth_ns has millisecond resolution. */
typedef struct mt_block {
    uint64_t size;
    uint64_t birth_ns;
    uint32_t trace;
} mt_block;

bool mt_ptrs_init(void);

typedef enum {
    MT_INSERT_NEW,      /* recorded */
    MT_INSERT_REPLACED, /* recorded; ptr was present (its free was never seen): old record in *stale
                         */
    MT_INSERT_FAILED,   /* no memory for bookkeeping: the block goes untracked */
} mt_insert_result;

/* ptr: non-null.  b->trace < MT_TRACE_MAX. */
mt_insert_result mt_ptr_insert(uintptr_t ptr, const mt_block *b, mt_block *stale);

/* Sampled mode: the same, and the filter (core_sample.h mt_sfilter_add)
 * counts a new block under the same lock. */
mt_insert_result mt_ptr_insert_sampled(uintptr_t ptr, const mt_block *b, mt_block *stale);

/* Starts loading the two cache lines that may hold ptr's record, so that
 * the misses overlap with other work (the malloc hook, before the unwind;
 * a removal does it itself).  Returns ptr's hash, for mt_ptr_insert_hashed. */
uint64_t mt_ptr_prefetch(uintptr_t ptr);

/* mt_ptr_insert with ptr's hash as mt_ptr_prefetch returned it (the hook
 * hashes the pointer once). */
mt_insert_result mt_ptr_insert_hashed(uintptr_t ptr, uint64_t h, const mt_block *b,
                                      mt_block *stale);

/* Removes ptr; false if memtop never saw it. */
bool mt_ptr_remove(uintptr_t ptr, mt_block *out);

/* Sampled mode: the same, and the filter forgets a removed block under
 * the same lock (mt_sfilter_del). */
bool mt_ptr_remove_sampled(uintptr_t ptr, mt_block *out);

/* Like mt_ptr_remove, but gives up (returning MT_TRY_BUSY) instead of
 * waiting when the shard is locked: for frees from a signal handler that
 * may have interrupted the lock's holder on this very thread. */
typedef enum { MT_TRY_REMOVED, MT_TRY_ABSENT, MT_TRY_BUSY } mt_try_result;
mt_try_result mt_ptr_try_remove(uintptr_t ptr, mt_block *out);
mt_try_result mt_ptr_try_remove_sampled(uintptr_t ptr, mt_block *out);

/* Calls fn for every live block, one shard at a time under its lock.  fn
 * must not allocate or call back into memtop's tables. */
typedef void (*mt_ptr_visit_fn)(const mt_block *b, void *ctx);
void mt_ptr_visit(mt_ptr_visit_fn fn, void *ctx);

uint64_t mt_ptr_count(void);

/* Every live block's address; the caller holds every shard lock
 * (mt_ptrs_lock_all).  fn must not allocate or take a table lock. */
void mt_ptr_visit_ptrs_locked(void (*fn)(uintptr_t ptr, void *ctx), void *ctx);

void mt_ptrs_lock_all(void);
void mt_ptrs_unlock_all(void);

#endif
