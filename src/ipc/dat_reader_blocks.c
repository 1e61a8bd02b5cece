/* dat_reader_blocks.c -- the reader's EVENTS2 frame context (see .h): an
 * open-addressing table (trace, serial) -> block with linear probing and
 * backward-shift deletion; a slot of another epoch is empty. */
#include "dat_reader_blocks.h"

#include "big_table.h"
#include "dat_format.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BITS 10u
#define MAX_BITS 34u
#define TRACES_MIN 256u

void mt_dctx_init(mt_dctx *c)
{
    memset(c, 0, sizeof *c);
    c->epoch = 1;
}

void mt_dctx_free(mt_dctx *c)
{
    free(c->traces);
    if (c->blocks)
        mt_big_free(c->blocks, (size_t)1 << c->bits, sizeof *c->blocks);
    memset(c, 0, sizeof *c);
}

void mt_dctx_new_frame(mt_dctx *c)
{
    c->count = 0;
    c->frame_allocs = 0;
    if (++c->epoch == 0) { /* wrapped: old slots could look current */
        if (c->traces)
            memset(c->traces, 0, c->ntraces * sizeof *c->traces);
        if (c->blocks)
            memset(c->blocks, 0, ((size_t)1 << c->bits) * sizeof *c->blocks);
        c->epoch = 1;
    }
}

mt_dtrace *mt_dctx_trace_slow(mt_dctx *c, uint32_t trace)
{
    if (trace >= c->ntraces) {
        uint64_t cap = c->ntraces ? c->ntraces : TRACES_MIN;
        while (cap <= trace)
            cap *= 2;
        mt_dtrace *t = realloc(c->traces, cap * sizeof *t);
        if (!t)
            return NULL;
        memset(t + c->ntraces, 0, (cap - c->ntraces) * sizeof *t);
        c->traces = t;
        c->ntraces = cap;
    }
    mt_dtrace *t = &c->traces[trace];
    if (t->epoch != c->epoch) {
        t->epoch = c->epoch;
        t->has_size = t->live = 0;
        t->next = 0;
        t->count = t->given = 0;
    }
    return t;
}

static uint64_t home(uint32_t trace, uint64_t serial, unsigned bits)
{
    uint64_t k = (serial << 22 ^ serial >> 42) ^ trace;
    k = (k ^ (k >> 31)) * 0xBF58476D1CE4E5B9ull;        /* mixed first: Fibonacci hashing */
    return (k * 0x9e3779b97f4a7c15ull) >> (64u - bits); /* alone clusters these keys */
}

static mt_dblock *find(const mt_dctx *c, uint32_t trace, uint64_t serial)
{
    uint64_t mask = ((uint64_t)1 << c->bits) - 1;
    for (uint64_t i = home(trace, serial, c->bits);; i = (i + 1) & mask) {
        mt_dblock *b = &c->blocks[i];
        if (b->epoch != c->epoch || (b->trace == trace && b->serial == serial))
            return b;
    }
}

/* The start of the probe run at slot i.  Only its first cache line:
 * fetching the next one too was slower (measured, docs/performance.md). */
static void prefetch_run(const mt_dctx *c, uint64_t i)
{
    __builtin_prefetch(&c->blocks[i], 1);
}

void mt_dctx_prefetch(const mt_dctx *c, const mt_dtrace *t, uint32_t trace, uint64_t ref)
{
    if (!c->blocks || t->epoch != c->epoch || ref >= t->count || ref < MT_DRECENT)
        return; /* not in the table (one of the trace's newest), or not a block */
    prefetch_run(c, home(trace, t->count - 1 - ref, c->bits));
}

void mt_dctx_prefetch_alloc(const mt_dctx *c, const mt_dtrace *t, uint32_t trace)
{
    if (!c->blocks || t->epoch != c->epoch || !(t->live & (1u << (t->count % MT_DRECENT))))
        return; /* nothing moves to the table */
    prefetch_run(c, home(trace, t->count - MT_DRECENT, c->bits));
}

static bool grow(mt_dctx *c)
{
    unsigned bits = c->blocks ? c->bits + 1 : MIN_BITS;
    if (bits > MAX_BITS)
        return false;
    mt_dblock *old = c->blocks;
    unsigned old_bits = c->bits;
    mt_dblock *b = mt_big_calloc((size_t)1 << bits, sizeof *b);
    if (!b)
        return false;
    c->blocks = b;
    c->bits = bits;
    for (uint64_t i = 0; old && i < ((uint64_t)1 << old_bits); i++)
        if (old[i].epoch == c->epoch)
            *find(c, old[i].trace, old[i].serial) = old[i];
    if (old)
        mt_big_free(old, (size_t)1 << old_bits, sizeof *old);
    return true;
}

/* Puts a block into the table (it is new there: serials only grow). */
static mt_errc insert(mt_dctx *c, uint32_t trace, uint64_t serial, uint64_t size, uint64_t birth_ms,
                      mt_err *err)
{
    if ((!c->blocks || (c->count + 1) * 10 > ((uint64_t)7 << c->bits)) && !grow(c))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
    *find(c, trace, serial) = (mt_dblock){serial, size, birth_ms, trace, c->epoch};
    c->count++;
    return MT_OK;
}

mt_errc mt_dctx_alloc(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t size, uint64_t birth_ms,
                      mt_err *err)
{
    if (++c->frame_allocs > MT_DAT_FRAME_ALLOCS_MAX)
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt recording: more than %u allocations in one "
                          "frame",
                          MT_DAT_FRAME_ALLOCS_MAX);
    unsigned i = (unsigned)(t->count % MT_DRECENT);
    if (t->live & (1u << i)) { /* block count - MT_DRECENT, still live: to the table */
        mt_errc rc =
            insert(c, trace, t->count - MT_DRECENT, t->recent[i].size, t->recent[i].birth_ms, err);
        if (rc)
            return rc;
    }
    t->recent[i].size = size;
    t->recent[i].birth_ms = birth_ms;
    t->live |= (uint8_t)(1u << i);
    t->count++;
    return MT_OK;
}

static void remove_at(mt_dctx *c, mt_dblock *hole)
{
    uint64_t mask = ((uint64_t)1 << c->bits) - 1;
    uint64_t i = (uint64_t)(hole - c->blocks);
    for (uint64_t j = (i + 1) & mask; c->blocks[j].epoch == c->epoch; j = (j + 1) & mask) {
        uint64_t k = home(c->blocks[j].trace, c->blocks[j].serial, c->bits);
        bool stays = i <= j ? (k > i && k <= j) : (k > i || k <= j);
        if (stays)
            continue;
        c->blocks[i] = c->blocks[j];
        i = j;
    }
    c->blocks[i].epoch = c->epoch - 1;
    c->count--;
}

bool mt_dctx_take(mt_dctx *c, mt_dtrace *t, uint32_t trace, uint64_t serial, uint64_t *size,
                  uint64_t *birth_ms)
{
    if (t->count - serial <= MT_DRECENT) { /* one of the newest */
        unsigned i = (unsigned)(serial % MT_DRECENT);
        if (!(t->live & (1u << i)))
            return false;
        t->live &= (uint8_t) ~(1u << i);
        *size = t->recent[i].size;
        *birth_ms = t->recent[i].birth_ms;
        return true;
    }
    if (!c->blocks)
        return false;
    mt_dblock *b = find(c, trace, serial);
    if (b->epoch != c->epoch)
        return false;
    *size = b->size;
    *birth_ms = b->birth_ms;
    remove_at(c, b);
    return true;
}

/* The recent blocks of one trace's state not given yet.  Slot i holds the
 * block k of count - MT_DRECENT <= k < count with k % MT_DRECENT == i. */
static int give_recent(const mt_dtrace *t, uint32_t trace,
                       int (*fn)(void *, uint32_t, uint64_t, uint64_t), void *ctx)
{
    for (unsigned i = 0; i < MT_DRECENT; i++) {
        uint64_t k = t->count - MT_DRECENT + (i + MT_DRECENT - t->count % MT_DRECENT) % MT_DRECENT;
        bool give = (t->live & (1u << i)) && k >= t->given;
        int rc = give ? fn(ctx, trace, t->recent[i].size, t->recent[i].birth_ms) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int mt_dctx_give(mt_dctx *c, int (*fn)(void *, uint32_t, uint64_t, uint64_t), void *ctx)
{
    for (uint64_t i = 0; i < c->ntraces; i++) {
        int rc =
            c->traces[i].epoch == c->epoch ? give_recent(&c->traces[i], (uint32_t)i, fn, ctx) : 0;
        if (rc)
            return rc;
    }
    for (uint64_t i = 0; c->blocks && c->count && i < ((uint64_t)1 << c->bits); i++) {
        const mt_dblock *b = &c->blocks[i];
        bool give = b->epoch == c->epoch && b->serial >= c->traces[b->trace].given;
        int rc = give ? fn(ctx, b->trace, b->size, b->birth_ms) : 0;
        if (rc)
            return rc;
    }
    for (uint64_t i = 0; i < c->ntraces; i++)
        if (c->traces[i].epoch == c->epoch)
            c->traces[i].given = c->traces[i].count;
    return 0;
}
