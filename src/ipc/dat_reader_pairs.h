/* dat_reader_pairs.h -- the reader's version-7 part of the EVENTS2 frame
 * context (dat_format.h, "Version 7"): per trace T and thread X (the tid
 * of an EVENTS2 record) with an allocation in the frame or the frame
 * before, n(T, X), p(T, X), and X's blocks of T in both, as the serials
 * of those blocks among T's (an index into the trace's arrays,
 * dat_reader_blocks.h).  A free naming X's block ref of T reads
 * list[n(T, X) - 1 - ref], then the trace's entry at that serial.
 *
 * Why this shape: a rank among the live blocks cost a second dependent
 * miss per free and +28 % instructions (docs/performance.md, "Ranks among
 * the live blocks"); a list of serials written in order, 4 bytes an
 * allocation, is read near its end (a free names a recent block mostly,
 * whose serial was written a few events before: in the cache), and the
 * look-ahead reads it to prefetch the trace's entry.  The pairs are a
 * dense array (the live ones of the two frames only: a new frame drops
 * those that did not allocate in the frame that ends, and rebuilds the
 * open-addressing index over the rest), so no deletion in the index; the
 * trace's state keeps the index of its pair looked up last (`hint`), which
 * a record's events, all of one thread, find again without a hash.
 *
 * Memory, besides dat_reader_blocks.h's: at most one pair per allocation
 * of the frame and the frame before, 40 bytes each, the array keeping the
 * largest capacity it had (doubling: at most 2 * 2 *
 * MT_DAT_FRAME_ALLOCS_MAX pairs, 80 MiB); the index, 4 bytes a slot,
 * fewer than 4 slots per pair (16 MiB); the lists, 4 bytes an entry,
 * doubling from 4, the frame before's list kept for the next frame when
 * it has at most four entries per allocation of the frame that ends (as
 * the trace's arrays): at most 6 + 6 entries per allocation of a frame,
 * 48 * MT_DAT_FRAME_ALLOCS_MAX bytes (24 MiB).  So at most 120 MiB more
 * for a version-7 file, reached only when every allocation of two frames
 * is by a (trace, thread) pair of its own; a pair that allocated in
 * neither frame has nothing. */
#ifndef MEMTOP_DAT_READER_PAIRS_H
#define MEMTOP_DAT_READER_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "shm_error.h"

_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= UINT32_MAX, "a serial and a count fit 32 bits");

/* (T, X): its allocations of this frame (list[0, count)) and of the frame
 * before (plist[0, pcount)), each the block's serial among T's. */
typedef struct mt_dpair {
    uint32_t trace, tid;
    uint32_t count, pcount; /* n(T, X), p(T, X) */
    uint32_t cap, pcap;
    uint32_t *list, *plist;
} mt_dpair;

typedef struct mt_dpairs {
    mt_dpair *p; /* [cap], the first n used */
    size_t n, cap;
    uint32_t *slots; /* [nslots], a power of two: pair index + 1, 0 empty */
    size_t nslots;
} mt_dpairs;

void mt_dpairs_free(mt_dpairs *s);

/* A new frame: each pair's list becomes its frame before's; the pairs
 * that did not allocate in the frame that ends are dropped (also their
 * frame before's blocks: that frame is then two frames back). */
void mt_dpairs_new_frame(mt_dpairs *s);

/* (trace, tid)'s pair found through the index, or NULL; *hint becomes
 * its index. */
mt_dpair *mt_dpairs_find_slow(mt_dpairs *s, uint32_t trace, uint32_t tid, uint32_t *hint);

/* (trace, tid)'s pair, or NULL when it has no allocation in the frame or
 * the frame before; *hint (the trace state's) is tried first. */
static inline __attribute__((always_inline)) mt_dpair *mt_dpairs_find(mt_dpairs *s, uint32_t trace,
                                                                      uint32_t tid, uint32_t *hint)
{
    uint32_t i = *hint;
    if (i < s->n && s->p[i].trace == trace && s->p[i].tid == tid)
        return &s->p[i];
    return mt_dpairs_find_slow(s, trace, tid, hint);
}

/* mt_dpairs_add's out-of-line part: the pair made (MT_E_NOMEM when out of
 * memory) or its list grown. */
mt_errc mt_dpairs_add_slow(mt_dpairs *s, uint32_t trace, uint32_t tid, uint32_t *hint,
                           uint32_t serial, mt_err *err);

/* An ALLOC of trace by tid, the trace's block serial: X's next block. */
static inline __attribute__((always_inline)) mt_errc mt_dpairs_add(mt_dpairs *s, uint32_t trace,
                                                                   uint32_t tid, uint32_t *hint,
                                                                   uint32_t serial, mt_err *err)
{
    uint32_t i = *hint;
    if (i < s->n && s->p[i].trace == trace && s->p[i].tid == tid && s->p[i].count < s->p[i].cap) {
        s->p[i].list[s->p[i].count++] = serial;
        return MT_OK;
    }
    return mt_dpairs_add_slow(s, trace, tid, hint, serial, err);
}

/* X's block ref (0: the newest) of the frame (prev false) or of the frame
 * before: its serial among the trace's, or UINT32_MAX when X has no such
 * block. */
static inline __attribute__((always_inline)) uint32_t mt_dpair_serial(const mt_dpair *p, bool prev,
                                                                      uint64_t ref)
{
    uint32_t n = prev ? p->pcount : p->count;
    if (ref >= n)
        return UINT32_MAX;
    return (prev ? p->plist : p->list)[n - 1 - ref];
}

#endif
