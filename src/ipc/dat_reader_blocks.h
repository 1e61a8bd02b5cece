/* dat_reader_blocks.h -- the reader's side of the EVENTS2 frame context
 * (dat_format.h): per trace, the allocations of the current zstd frame
 * and the last size; each allocation's block by (trace, serial), so that
 * a free naming its block gets that block's size and birth; and (version
 * 6) the same blocks of the frame before, for a FREE_PREV.
 *
 * Why: frees written as references carry no size or age; the reader
 * resolves them here.  A trace's blocks of the frame are an array indexed
 * by serial (written in order, one entry per allocation): a free naming
 * its block reads one entry, with no hash, probe run or deletion walk
 * (the open-addressing table of live blocks that this replaced cost ~80
 * instructions per event and a second cache line on long probe runs;
 * docs/performance.md, "Reading, eleventh round").  Every state belongs
 * to an epoch, the reader's frame number: a new frame empties the context
 * without touching the arrays.  A frame's end hands each trace's array
 * to its state of the frame before (mt_dprev) and gives it that state's
 * old array to fill, so no entry is copied.  The traces that hold an
 * array of either frame are listed (`held`), so that a frame's end and
 * mt_dctx_give walk them, never every trace.
 *
 * Memory: 64 + 32 bytes per trace state (up to the highest trace id that
 * had an event, the count rounded up to a power of two); the arrays, 8
 * bytes an entry; `held`, 4 bytes per listed trace; the wide blocks, 16
 * bytes for each block of the two frames whose size is 2^40 or more or
 * whose birth is 2^22 ms or more from its frame's first (`held` and the
 * wide blocks keep the largest size they had: at most 4 and 16 MiB).  An
 * array grows by doubling from ENTS_MIN (4) entries.  At a frame's end
 * (mt_dctx_new_frame) the frame before's array of a trace that allocated
 * in the frame that ends is kept for the next frame if it has at most
 * four entries per allocation of that frame, else freed; the arrays of a
 * trace that did not allocate in it are freed.  So an array holds at most
 * four entries per allocation of its trace in the frame before the one it
 * serves, or two per allocation in the frame it serves (four for one):
 * for the current frame and the one before, at most 6 + 6 entries per
 * allocation of a frame, 12 * 8 * MT_DAT_FRAME_ALLOCS_MAX bytes: 48 MiB,
 * plus malloc's overhead per array; a trace that did not allocate in the
 * last two frames has none. */
#ifndef MEMTOP_DAT_READER_BLOCKS_H
#define MEMTOP_DAT_READER_BLOCKS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "dat_reader.h"
#include "shm_error.h"

/* A block of the frame, 8 bytes: its size (MT_DENT_SIZE_BITS) and its
 * birth_ms - the context's base_ms above it; or MT_DENT_WIDE | an index
 * into the context's wide blocks for a block whose size or birth does not
 * fit; MT_DENT_FREED once freed. */
typedef uint64_t mt_dent;

#define MT_DENT_SIZE_BITS 40u
#define MT_DENT_WIDE ((uint64_t)1 << 63)
#define MT_DENT_FREED UINT64_MAX
#define MT_DENT_SIZE_MASK (((uint64_t)1 << MT_DENT_SIZE_BITS) - 1)
#define MT_DENT_SPAN ((uint64_t)1 << (63u - MT_DENT_SIZE_BITS)) /* births base_ms + [0, span) */

/* A block whose size or birth does not fit in an entry. */
typedef struct mt_dwide {
    uint64_t size, birth_ms; /* in the free list: size is the next free index + 1 */
} mt_dwide;

/* A trace's state: one cache line (the hints read it 16 events ahead). */
typedef struct mt_dtrace {
    uint32_t epoch;   /* the frame the fields belong to */
    uint8_t has_size; /* last_size is set */
    uint32_t next;    /* next(trace) + 1 in this frame (version 4), 0: none */
    uint64_t count;   /* allocations of the trace in this frame: ents[0, count) */
    uint64_t given;   /* its blocks with a lower serial were given by mt_dctx_give */
    uint64_t last_size;
    mt_dent *ents; /* [cap]: block k of the frame at k (kept across frames) */
    uint64_t cap;
} __attribute__((aligned(64))) mt_dtrace;

/* A trace's blocks of the frame before (version 6: FREE_PREV). */
typedef struct mt_dprev {
    uint32_t epoch; /* the context's when these are its frame before's */
    uint64_t count; /* p(trace): the trace's allocations in that frame */
    mt_dent *ents;  /* [cap]: its block k at k */
    uint64_t cap;
} mt_dprev;

typedef struct mt_dctx {
    uint32_t epoch;
    mt_dtrace *traces;
    mt_dprev *prev;        /* [ntraces] */
    uint64_t ntraces;      /* capacity */
    uint64_t frame_allocs; /* allocations in this frame (<= MT_DAT_FRAME_ALLOCS_MAX) */
    uint64_t base_ms;      /* births in the entries are above it; set by a frame's first */
    mt_dwide *wide;        /* [wide_cap], the first nwide used or in the free list */
    size_t nwide, wide_cap;
    uint64_t wide_free; /* free list head: index + 1, 0 = empty */
    /* the frame before's: its base_ms and wide blocks (none reused) */
    uint64_t prev_base_ms;
    mt_dwide *pwide;
    size_t npwide, pwide_cap;
    uint32_t *held; /* [held_cap]: the nheld traces whose ents are allocated */
    size_t nheld, held_cap;
} mt_dctx;

void mt_dctx_init(mt_dctx *c);
void mt_dctx_free(mt_dctx *c);

/* A new frame: the current frame's blocks become the frame before's, and
 * the context is empty. */
void mt_dctx_new_frame(mt_dctx *c);

/* A new frame with no frame before it (a file's first, a seek): both are
 * empty. */
void mt_dctx_forget(mt_dctx *c);

/* The state of trace (< the definitions read so far) in this frame, or
 * NULL when out of memory.  Inline when the trace already has one (an
 * out-of-line call per event cost more than the look-up). */
mt_dtrace *mt_dctx_trace_slow(mt_dctx *c, uint32_t trace);

static inline mt_dtrace *mt_dctx_trace(mt_dctx *c, uint32_t trace)
{
    if (trace < c->ntraces && c->traces[trace].epoch == c->epoch)
        return &c->traces[trace];
    return mt_dctx_trace_slow(c, trace);
}

/* The state of trace in this frame when it is known to have one (an
 * event of this frame took it: the previous event of a record, which
 * never spans frames): no bounds or epoch test. */
static inline mt_dtrace *mt_dctx_trace_known(mt_dctx *c, uint32_t trace)
{
    assert(trace < c->ntraces && c->traces[trace].epoch == c->epoch);
    return &c->traces[trace];
}

/* mt_dctx_alloc's out-of-line parts: the frame's first allocation (the
 * births are packed around it) or its allocation limit passed
 * (MT_E_CORRUPT); t's blocks grown, t listed in `held` when it had none
 * (MT_E_NOMEM when out of memory). */
mt_errc mt_dctx_edge(mt_dctx *c, uint64_t birth_ms, mt_err *err);
mt_errc mt_dctx_grow(mt_dctx *c, mt_dtrace *t, mt_err *err);
mt_errc mt_dctx_alloc_wide(mt_dctx *c, mt_dtrace *t, uint64_t size, uint64_t birth_ms, mt_err *err);

/* An allocation of trace (t: its state): the block (trace, t->count)
 * becomes live.  MT_E_NOMEM when out of memory, MT_E_CORRUPT past the
 * frame's allocation limit.  Inline: it is taken for every allocation. */
static inline mt_errc mt_dctx_alloc(mt_dctx *c, mt_dtrace *t, uint64_t size, uint64_t birth_ms,
                                    mt_err *err)
{
    /* one test for the frame's first (0 wraps) and the limit passed */
    if (c->frame_allocs++ - 1 >= MT_DAT_FRAME_ALLOCS_MAX - 1 && mt_dctx_edge(c, birth_ms, err))
        return MT_E_CORRUPT;
    if (t->count == t->cap && mt_dctx_grow(c, t, err))
        return MT_E_NOMEM;
    uint64_t off = birth_ms - c->base_ms; /* modulo 2^64: the unpacking adds it back */
    if (size > MT_DENT_SIZE_MASK || off >= MT_DENT_SPAN)
        return mt_dctx_alloc_wide(c, t, size, birth_ms, err);
    t->ents[t->count++] = off << MT_DENT_SIZE_BITS | size;
    return MT_OK;
}

/* A hint: the entry at back from the end of ents[count] (1: the newest
 * block, 0: where the next allocation goes) is fetched into the cache.
 * No test of the state's epoch or of the ref: a prefetch never faults, so
 * the address is computed as an integer, and a state of another epoch
 * (its ents valid or NULL, its count stale) or a corrupt ref only fetches
 * a line for nothing, where the tests cost 28.7 M instructions on mt4.dat
 * (docs/performance.md, "Reading, sixteenth round").  Always inline: the
 * hints are taken for every event, and a copy out of line has no side
 * effect (a prefetch has none), which GCC 12 then drops with every call
 * to it. */
static inline __attribute__((always_inline)) void mt_dctx_prefetch_at(const mt_dent *ents,
                                                                      uint64_t count, uint64_t back)
{
    __builtin_prefetch((const void *)((uintptr_t)ents + (count - back) * sizeof(mt_dent)), 1);
}

/* A hint: the free of block ref (0: the newest) of trace t is coming. */
static inline __attribute__((always_inline)) void mt_dctx_prefetch(const mt_dtrace *t, uint64_t ref)
{
    mt_dctx_prefetch_at(t->ents, t->count, ref + 1);
}

/* A hint: an allocation of trace t is coming (the entry it will write). */
static inline __attribute__((always_inline)) void mt_dctx_prefetch_alloc(const mt_dtrace *t)
{
    mt_dctx_prefetch_at(t->ents, t->count, 0);
}

/* mt_dctx_take of a wide entry: its block, and the entry to the free list. */
void mt_dctx_take_wide(mt_dctx *c, mt_dent e, uint64_t *size, uint64_t *birth_ms);

/* A free naming (trace, serial), serial < t->count: true with its size
 * and birth, and the block is no longer live; false if it is not live. */
static inline bool mt_dctx_take(mt_dctx *c, mt_dtrace *t, uint64_t serial, uint64_t *size,
                                uint64_t *birth_ms)
{
    mt_dent e = t->ents[serial];
    if (e == MT_DENT_FREED)
        return false;
    t->ents[serial] = MT_DENT_FREED;
    if (e & MT_DENT_WIDE) {
        mt_dctx_take_wide(c, e, size, birth_ms);
        return true;
    }
    *size = e & MT_DENT_SIZE_MASK;
    *birth_ms = c->base_ms + (e >> MT_DENT_SIZE_BITS);
    return true;
}

/* mt_dctx_take_prev's answers. */
enum { MT_DPREV_OK, MT_DPREV_NONE, MT_DPREV_FREED };

/* mt_dctx_take_prev of a wide entry. */
void mt_dctx_take_pwide(const mt_dctx *c, mt_dent e, uint64_t *size, uint64_t *birth_ms);

/* A FREE_PREV of trace (< ntraces: its state exists) naming ref: its
 * block's size and birth, and the block is no longer live (MT_DPREV_OK);
 * MT_DPREV_NONE when the frame before holds no block ref of the trace,
 * MT_DPREV_FREED when that block is not live. */
static inline int mt_dctx_take_prev(mt_dctx *c, uint32_t trace, uint64_t ref, uint64_t *size,
                                    uint64_t *birth_ms)
{
    mt_dprev *p = &c->prev[trace];
    if (p->epoch != c->epoch || ref >= p->count)
        return MT_DPREV_NONE;
    mt_dent *at = &p->ents[p->count - 1 - ref], e = *at;
    if (e == MT_DENT_FREED)
        return MT_DPREV_FREED;
    *at = MT_DENT_FREED;
    if (e & MT_DENT_WIDE) {
        mt_dctx_take_pwide(c, e, size, birth_ms);
        return MT_DPREV_OK;
    }
    *size = e & MT_DENT_SIZE_MASK;
    *birth_ms = c->prev_base_ms + (e >> MT_DENT_SIZE_BITS);
    return MT_DPREV_OK;
}

/* A hint: the free of block ref of trace's blocks of the frame before is
 * coming (as mt_dctx_prefetch). */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_prev(const mt_dctx *c, uint32_t trace, uint64_t ref)
{
    mt_dctx_prefetch_at(c->prev[trace].ents, c->prev[trace].count, ref + 1);
}

/* Give fn every live block of the frame not given before (any order, up
 * to MT_DAT_BLOCKS_PER_CALL per call): each trace's blocks with a serial >= its
 * `given`, which then becomes its count.  Stops at the first nonzero
 * return and gives it. */
int mt_dctx_give(mt_dctx *c, mt_dat_block_fn fn, void *ctx);

#endif
