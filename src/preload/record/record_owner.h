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
 * record_blocks.c's trace states), with a one-entry cache (tick order
 * writes a trace's events together).  The frame before's array is kept
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

#include <stdbool.h>
#include <stdint.h>

/* An allocation of `trace` by thread `tid` was written as the frame's
 * allocation f, the trace's block k: counts n(trace, tid) and keeps (k,
 * tid, j) for f.  False when nothing can be kept for f (no memory): the
 * caller then keeps no map entry for the block (its free is in full). */
bool mt_ro_note_alloc(uint32_t f, uint32_t trace, uint32_t tid, uint32_t k);

/* The block of allocation f of this frame (prev: of the frame before) of
 * `trace`, which thread `tid` frees: false if f is unknown; else *k its
 * per-trace serial, and *own its ref among tid's blocks of the trace
 * (n(T, X) - 1 - j, or p(T, X) - 1 - j), or UINT64_MAX when tid did not
 * allocate it (or that is not known: OTHER). */
bool mt_ro_block(bool prev, uint32_t f, uint32_t trace, uint32_t tid, uint64_t *k, uint64_t *own);

/* Frame boundaries, as mt_rb_new_frame and mt_rb_new_file (which call
 * them), and mt_rb_child_reset, mt_rb_release. */
void mt_ro_new_frame(void);
void mt_ro_new_file(void);
void mt_ro_child_reset(void);
void mt_ro_release(void);

/* Bytes mapped. */
uint64_t mt_ro_bytes(void);

#endif
