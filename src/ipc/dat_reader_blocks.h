/* dat_reader_blocks.h -- the reader's side of the EVENTS2 frame context
 * (dat_format.h): per trace, the allocations of the current zstd frame
 * and the last size; the frame's live blocks by (trace, serial), so that
 * a free naming its block gets that block's size and birth.
 *
 * Why: frees written as references carry no size or age; the reader
 * resolves them here.  Every table belongs to an epoch, the reader's
 * frame number: a new frame (or a seek, which lands on a frame boundary)
 * empties the context without touching it.  Memory: 104 bytes per trace
 * (with its newest blocks), and 32 bytes per slot of the block table (at
 * most 70 % full) for its other blocks allocated in the current frame and
 * still live. */
#ifndef MEMTOP_DAT_READER_BLOCKS_H
#define MEMTOP_DAT_READER_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm_error.h"

/* A trace's newest allocations of the frame are kept with the trace
 * (most frees name one of those: no table lookup), its older live ones in
 * the block table. */
#define MT_DRECENT 4u

typedef struct mt_dtrace {
    uint32_t epoch;   /* the frame the fields belong to */
    uint8_t has_size; /* last_size is set */
    uint8_t live;     /* bit i: recent[i] holds a live block */
    uint32_t next;    /* next(trace) + 1 in this frame (version 4), 0: none */
    uint64_t count;   /* allocations of the trace in this frame */
    uint64_t given;   /* its blocks with a lower serial were given by mt_dctx_give */
    uint64_t last_size;
    struct {
        uint64_t size, birth_ms;
    } recent[MT_DRECENT]; /* block k, if count - k <= MT_DRECENT, at k % MT_DRECENT */
} mt_dtrace;

typedef struct mt_dblock {
    uint64_t serial;
    uint64_t size;
    uint64_t birth_ms;
    uint32_t trace;
    uint32_t epoch; /* empty unless the current epoch */
} mt_dblock;

typedef struct mt_dctx {
    uint32_t epoch;
    mt_dtrace *traces;
    uint64_t ntraces; /* capacity */
    mt_dblock *blocks;
    unsigned bits; /* 2^bits slots */
    uint64_t count;
    uint64_t frame_allocs; /* allocations in this frame (<= MT_DAT_FRAME_ALLOCS_MAX) */
} mt_dctx;

void mt_dctx_init(mt_dctx *c);
void mt_dctx_free(mt_dctx *c);

/* A new frame: the context is empty. */
void mt_dctx_new_frame(mt_dctx *c);

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

/* An allocation of trace (t: its state): the block (trace, t->count)
 * becomes live.  MT_E_NOMEM when out of memory. */
mt_errc mt_dctx_alloc(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t size, uint64_t birth_ms,
                      mt_err *err);

/* A hint: the free of (trace, serial) of trace t is coming; its slot of
 * the block table is fetched into the cache (nothing else changes). */
void mt_dctx_prefetch(const mt_dctx *c, const mt_dtrace *t, uint32_t trace, uint64_t ref);

/* A hint: an allocation of trace t is coming, which will move the trace's
 * oldest recent block into the block table; that block's slot is fetched
 * into the cache (nothing else changes). */
void mt_dctx_prefetch_alloc(const mt_dctx *c, const mt_dtrace *t, uint32_t trace);

/* A free naming (trace, serial), serial < t->count: true with its size
 * and birth, and the block is no longer live; false if it is not live. */
bool mt_dctx_take(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t serial, uint64_t *size,
                  uint64_t *birth_ms);

/* Call fn for every live block of the frame not given before (any order):
 * each trace's blocks with a serial >= its `given`, which then becomes its
 * count.  Stops at the first nonzero return and gives it. */
int mt_dctx_give(mt_dctx *c, int (*fn)(void *ctx, uint32_t trace, uint64_t size, uint64_t birth_ms),
                 void *ctx);

#endif
