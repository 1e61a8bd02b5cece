/* table_ptr_side.h -- the block table's side table, for blocks a 16-byte slot
 * cannot hold (table_ptr_slot.h): pointers that are not 8-aligned or not below
 * 2^48, sizes of 16 MiB and up, and births too old for a slot (table_ptr.c,
 * "Birth times").  Full 32-byte records in a small open-addressing table
 * per shard, guarded by the shard's lock. */
#ifndef MT_PTR_SIDE_H
#define MT_PTR_SIDE_H

#include "table_ptr.h"

typedef struct {
    uint64_t ptr; /* 0 = empty (a null pointer is never tracked) */
    uint64_t size;
    uint64_t birth_ns; /* ms resolution, like the slots */
    uint32_t trace;
    uint32_t reserved;
} mt_side_entry;

typedef struct {
    uint64_t cap, count;
    mt_side_entry *e;
} mt_side;

/* Records ptr (h: its hash, mt_slot_hash(mt_slot_key(ptr))).  *replaced tells whether a record for
 * ptr was there (returned in *stale).  False: no memory, nothing changed. */
bool mt_side_put(mt_side *t, uintptr_t ptr, uint64_t h, const mt_block *b, mt_block *stale,
                 bool *replaced);

/* Takes ptr's record out; false if absent. */
bool mt_side_take(mt_side *t, uintptr_t ptr, uint64_t h, mt_block *out);

void mt_side_visit(const mt_side *t, mt_ptr_visit_fn fn, void *ctx);

#endif
