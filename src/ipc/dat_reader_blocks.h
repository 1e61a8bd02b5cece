/* dat_reader_blocks.h -- the reader's side of the EVENTS2 frame context
 * (dat_format.h): per trace, the allocations of the current zstd frame
 * and the last size; the frame's live blocks by (trace, serial), so that
 * a free naming its block gets that block's size and birth.
 *
 * Why: frees written as references carry no size or age; the reader
 * resolves them here.  Every table belongs to an epoch, the reader's
 * frame number: a new frame (or a seek, which lands on a frame boundary)
 * empties the context without touching it.  Memory: 104 bytes per trace
 * (with its newest blocks), and 16 bytes per slot of the block table (at
 * most 70 % full) for its other blocks allocated in the current frame and
 * still live (16 more for each whose size is 2^40 or more, or whose birth
 * is more than 2^22 ms from the table's first). */
#ifndef MEMTOP_DAT_READER_BLOCKS_H
#define MEMTOP_DAT_READER_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "dat_reader.h"
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

/* A slot of the block table: 16 bytes, so that the table's random probes
 * touch half the memory (the largest cost of a pass on random frees).
 * key: trace << 32 | serial << MT_DSLOT_EPOCH_BITS | the low bits of the
 * epoch (a slot of another epoch is empty; serial < 2^(32 -
 * MT_DSLOT_EPOCH_BITS) by the frame's allocation limit).  val: the size
 * (MT_DVAL_SIZE_BITS) and birth_ms - the context's base_ms above it, or
 * MT_DVAL_WIDE | an index into the context's wide blocks for the blocks
 * whose size or birth does not fit. */
typedef struct mt_dblock {
    uint64_t key;
    uint64_t val;
} mt_dblock;

#define MT_DSLOT_EPOCH_BITS 12u
#define MT_DVAL_SIZE_BITS 40u
#define MT_DVAL_WIDE ((uint64_t)1 << 63)

/* A block whose size or birth does not fit in a slot's val. */
typedef struct mt_dwide {
    uint64_t size, birth_ms; /* in the free list: size is the next free index + 1 */
} mt_dwide;

typedef struct mt_dctx {
    uint32_t epoch;
    mt_dtrace *traces;
    uint64_t ntraces; /* capacity */
    mt_dblock *blocks;
    unsigned bits; /* 2^bits slots */
    uint64_t count;
    uint64_t grow_at; /* count at which the table grows (at 70 % full; 0: no table) */
    uint64_t base_ms; /* births in the slots are above it; set when the table is empty */
    mt_dwide *wide;   /* [wide_cap], the first nwide used or in the free list */
    size_t nwide, wide_cap;
    uint64_t wide_free;    /* free list head: index + 1, 0 = empty */
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

/* mt_dctx_alloc's out-of-line parts: the frame's allocation limit passed
 * (MT_E_CORRUPT); the live block in t's recent slot i moved to the table
 * (MT_E_NOMEM when out of memory). */
mt_errc mt_dctx_too_many(mt_err *err);
mt_errc mt_dctx_spill(mt_dctx *c, mt_dtrace *t, uint32_t trace, unsigned i, mt_err *err);

/* An allocation of trace (t: its state): the block (trace, t->count)
 * becomes live.  MT_E_NOMEM when out of memory, MT_E_CORRUPT past the
 * frame's allocation limit.  Inline: it is taken for every allocation. */
static inline mt_errc mt_dctx_alloc(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t size,
                                    uint64_t birth_ms, mt_err *err)
{
    if (++c->frame_allocs > MT_DAT_FRAME_ALLOCS_MAX)
        return mt_dctx_too_many(err);
    unsigned i = (unsigned)(t->count % MT_DRECENT);
    mt_errc rc = t->live & (1u << i) ? mt_dctx_spill(c, t, trace, i, err) : MT_OK;
    if (rc)
        return rc;
    t->recent[i].size = size;
    t->recent[i].birth_ms = birth_ms;
    t->live |= (uint8_t)(1u << i);
    t->count++;
    return MT_OK;
}

/* The key of (trace, serial) in the current epoch (see mt_dblock). */
static inline uint64_t mt_dctx_key(const mt_dctx *c, uint32_t trace, uint64_t serial)
{
    return (uint64_t)trace << 32 | serial << MT_DSLOT_EPOCH_BITS |
           (c->epoch & ((1u << MT_DSLOT_EPOCH_BITS) - 1));
}

/* The home slot of a key: Fibonacci hashing (the top bits of k * 2^64/phi)
 * of k = trace * an odd constant + serial.  Of (trace << 20 | serial)
 * alone, it clustered these keys (2.7 probes per look-up on the bench's
 * recording against 1.7; 1.2 against 4.1 at 4 threads). */
static inline uint64_t mt_dctx_home(uint64_t key, unsigned bits)
{
    uint64_t k = (key >> 32) * 0xBF58476D1CE4E5B9ull + (key >> MT_DSLOT_EPOCH_BITS);
    return (k * 0x9e3779b97f4a7c15ull) >> (64u - bits);
}

/* A hint: the free of (trace, serial) of trace t is coming; its slot of
 * the block table is fetched into the cache (nothing else changes).  The
 * hints are always inline: they are taken for every event, and a copy out
 * of line has no side effect (a prefetch has none), which GCC 12 then
 * drops with every call to it. */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch(const mt_dctx *c, const mt_dtrace *t, uint32_t trace, uint64_t ref)
{
    if (!c->blocks || t->epoch != c->epoch || ref >= t->count || ref < MT_DRECENT)
        return; /* not in the table (one of the trace's newest), or not a block */
    uint64_t key = mt_dctx_key(c, trace, t->count - 1 - ref);
    __builtin_prefetch(&c->blocks[mt_dctx_home(key, c->bits)], 1);
}

/* A hint: an allocation of trace t is coming, which will move the trace's
 * oldest recent block into the block table; that block's slot is fetched
 * into the cache (nothing else changes).  Only the first cache line of
 * the probe run, here and above: fetching the next one too was slower
 * (measured, docs/performance.md). */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_alloc(const mt_dctx *c, const mt_dtrace *t, uint32_t trace)
{
    if (!c->blocks || t->epoch != c->epoch || !(t->live & (1u << (t->count % MT_DRECENT))))
        return; /* nothing moves to the table */
    uint64_t key = mt_dctx_key(c, trace, t->count - MT_DRECENT);
    __builtin_prefetch(&c->blocks[mt_dctx_home(key, c->bits)], 1);
}

/* mt_dctx_take of a block older than its trace's recent ones. */
bool mt_dctx_take_old(mt_dctx *c, uint32_t trace, uint64_t serial, uint64_t *size,
                      uint64_t *birth_ms);

/* A free naming (trace, serial), serial < t->count: true with its size
 * and birth, and the block is no longer live; false if it is not live.
 * Inline for the trace's recent blocks. */
static inline bool mt_dctx_take(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t serial,
                                uint64_t *size, uint64_t *birth_ms)
{
    if (t->count - serial > MT_DRECENT)
        return mt_dctx_take_old(c, trace, serial, size, birth_ms);
    unsigned i = (unsigned)(serial % MT_DRECENT);
    if (!(t->live & (1u << i)))
        return false;
    t->live &= (uint8_t) ~(1u << i);
    *size = t->recent[i].size;
    *birth_ms = t->recent[i].birth_ms;
    return true;
}

/* Give fn every live block of the frame not given before (any order, up
 * to MT_DAT_BLOCKS_PER_CALL per call): each trace's blocks with a serial >= its
 * `given`, which then becomes its count.  Stops at the first nonzero
 * return and gives it. */
int mt_dctx_give(mt_dctx *c, mt_dat_block_fn fn, void *ctx);

#endif
