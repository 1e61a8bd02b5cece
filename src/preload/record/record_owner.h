/* record_owner.h -- the writer's side of version 7's references by thread
 * (dat_format.h, EVENTS2, "Version 7"): which thread wrote each block's
 * allocation, and its index among that thread's allocations of its trace
 * in the frame, so that a free by the same thread names its block among
 * them (a small ref: a thread mostly frees what it allocated, recently)
 * and any other free names it among every thread's (OTHER).
 *
 * Why exact: a wrong index is a file that lies (it frees another block of
 * the same trace), so every count here mirrors the reader's: n(T, X) is
 * counted at every allocation the writer writes, whatever became of the
 * block.  What cannot be known (no memory) gives OTHER, always valid.
 *
 * How: the address map (record_blocks.h) keeps, for a v7 file, the
 * block's ordinal f among the frame's allocations instead of its
 * per-trace serial; an array indexed by f holds the serial k, the thread
 * and its index j (8 bytes per allocation); a hash keyed by (trace,
 * thread) holds n(T, X) and p(T, X), reset lazily per frame (an epoch, as
 * record_blocks.c's trace states), found through a hint kept in the
 * trace's state (the slot of the pair found last: in a run, one thread's
 * events, mostly that thread's).  The frame before's array is kept
 * (FREE_PREV); a new frame swaps the two.
 *
 * Memory, all from mmap: two arrays of MT_DAT_FRAME_ALLOCS_MAX x 8 bytes
 * (4 MiB each, touched as the frame's allocations go: 8 bytes per
 * allocation), and the hash, 24 bytes a slot, at most half full with the
 * (trace, thread) pairs of this frame and the one before: 4,096 slots (96
 * KiB) at first, at most 2^21 (48 MiB, for 2^20 pairs, more than two
 * frames can hold).  Writer thread only (the writer's lock held).
 */
#ifndef MT_RECORD_OWNER_H
#define MT_RECORD_OWNER_H

#include "core_common.h"

#include <stdbool.h>
#include <stdint.h>

#define MT_RO_K_BITS 19u   /* k and j: below MT_DAT_FRAME_ALLOCS_MAX */
#define MT_RO_TID_BITS 26u /* the thread in an info word; pid_max is at most 2^22 */
#define MT_RO_TID_NONE ((1u << MT_RO_TID_BITS) - 1u)

/* n(trace, tid) and p(trace, tid) of frame `epoch`; epoch 0: an empty slot. */
typedef struct mt_ro_ent {
    uint32_t trace, tid, epoch, n, p, pad;
} mt_ro_ent;

/* What the inline paths below read (the encoder's per-event calls);
 * the rest is record_owner.c's own.  Writer only. */
typedef struct mt_ro_hot {
    uint64_t *info, *pinfo; /* per f: k | j << K_BITS | thread << 2 K_BITS */
    uint32_t n, pn;         /* allocations noted in each (f < n) */
    uint32_t first, pfirst; /* ... from f = first on: the array was mapped then */
    mt_ro_ent *hash;
    unsigned bits;  /* the hash has 2^bits slots */
    uint32_t epoch; /* this frame's number (>= 2 once a file began) */
} mt_ro_hot;

extern mt_ro_hot mt_ro_h;

/* mt_ro_find when the hint does not hold the pair's entry of this frame. */
mt_ro_ent *mt_ro_find_slow(uint32_t trace, uint32_t tid, bool create, uint32_t *hint);

/* Maps the info array of this frame at its allocation f (the words
 * before f are not written: unknown); false: no memory. */
bool mt_ro_map_info(uint32_t f);

/* The pair's entry of this frame (reset when it was another's: p is the
 * frame before's n), added when `create`; NULL when there is none.
 * *hint: the slot where the trace's entry was found last (its trace
 * state's field: mostly the same thread's in a run), updated. */
static inline mt_ro_ent *mt_ro_find(uint32_t trace, uint32_t tid, bool create, uint32_t *hint)
{
    if (MT_LIKELY(mt_ro_h.hash && *hint < (1u << mt_ro_h.bits))) {
        mt_ro_ent *e = &mt_ro_h.hash[*hint];
        if (MT_LIKELY(e->trace == trace && e->tid == tid && e->epoch == mt_ro_h.epoch))
            return e;
    }
    return mt_ro_find_slow(trace, tid, create, hint);
}

/* An allocation of `trace` by thread `tid` was written as the frame's
 * allocation f, the trace's block k: counts n(trace, tid) and keeps (k,
 * tid, j) for f.  False when nothing can be kept for f (no memory: the
 * info array could not be mapped; mt_ro_block then says f is unknown). */
static inline bool mt_ro_note_alloc(uint32_t f, uint32_t trace, uint32_t tid, uint32_t k,
                                    uint32_t *hint)
{
    mt_ro_ent *e = mt_ro_find(trace, tid, true, hint);
    uint32_t j = e ? e->n++ : 0; /* counted whatever becomes of the block, as a reader does */
    if (MT_UNLIKELY(!mt_ro_h.info) && !mt_ro_map_info(f))
        return false;
    uint64_t owner = e && tid < MT_RO_TID_NONE ? tid : MT_RO_TID_NONE;
    mt_ro_h.info[f] = k | (uint64_t)j << MT_RO_K_BITS | owner << (2 * MT_RO_K_BITS);
    mt_ro_h.n = f + 1;
    return true;
}

/* The block of allocation f of this frame (prev: of the frame before) of
 * `trace`, which thread `tid` frees: false if f is unknown; else *k its
 * per-trace serial, and *own its ref among tid's blocks of the trace
 * (n(T, X) - 1 - j, or p(T, X) - 1 - j), or UINT64_MAX when tid did not
 * allocate it (or that is not known: OTHER). */
static inline bool mt_ro_block(bool prev, uint32_t f, uint32_t trace, uint32_t tid, uint64_t *k,
                               uint64_t *own, uint32_t *hint)
{
    const uint64_t *info = prev ? mt_ro_h.pinfo : mt_ro_h.info;
    if (!info || f >= (prev ? mt_ro_h.pn : mt_ro_h.n) ||
        f < (prev ? mt_ro_h.pfirst : mt_ro_h.first))
        return false;
    uint64_t x = info[f];
    uint32_t j = (uint32_t)(x >> MT_RO_K_BITS) & ((1u << MT_RO_K_BITS) - 1u);
    uint32_t owner = (uint32_t)(x >> (2 * MT_RO_K_BITS));
    *k = x & ((1u << MT_RO_K_BITS) - 1u);
    *own = UINT64_MAX;
    if (owner == MT_RO_TID_NONE || owner != tid)
        return true;
    const mt_ro_ent *e = mt_ro_find(trace, tid, false, hint);
    uint32_t count = e ? (prev ? e->p : e->n) : 0;
    if (j < count) /* always, but a release build checks it too: a wrong ref is a lying file */
        *own = count - 1u - j;
    return true;
}

/* Frame boundaries, as mt_rb_new_frame and mt_rb_new_file (which call
 * them), and mt_rb_child_reset, mt_rb_release. */
void mt_ro_new_frame(void);
void mt_ro_new_file(void);
void mt_ro_child_reset(void);
void mt_ro_release(void);

/* Bytes mapped. */
uint64_t mt_ro_bytes(void);

#endif
