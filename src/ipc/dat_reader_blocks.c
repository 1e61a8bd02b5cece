/* dat_reader_blocks.c -- the reader's EVENTS2 frame context (see .h):
 * per trace its state and its blocks of the frame, an array indexed by
 * serial; a state of another epoch is empty. */
#include "dat_reader_blocks.h"

#include "dat_format.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define TRACES_MIN 256u

_Static_assert(sizeof(mt_dtrace) == 64, "a trace's state is one cache line");
#define ENTS_MIN 4u /* an array's first entries: at most four per allocation */

void mt_dctx_init(mt_dctx *c)
{
    memset(c, 0, sizeof *c);
    c->epoch = 1;
}

void mt_dctx_free(mt_dctx *c)
{
    for (size_t k = 0; k < c->nheld; k++)
        free(c->traces[c->held[k]].ents);
    free(c->held);
    free(c->traces);
    free(c->wide);
    memset(c, 0, sizeof *c);
}

/* A new epoch: every trace's state is of an older one.  A held array is
 * kept for the next frame when its trace allocated in the frame that ends
 * and it has at most four entries per allocation, else freed: so the
 * arrays follow the last frames' allocations (the bound in the .h), not
 * the largest count any trace ever had, and a trace that allocates about
 * as much every frame does not free and grow its array again.  Only the
 * held traces are walked (at most one per allocation of this frame and
 * the one before), never every trace.  Epoch 0 is never current (the
 * states' epochs are cleared when it wraps). */
void mt_dctx_new_frame(mt_dctx *c)
{
    size_t n = 0;
    for (size_t k = 0; k < c->nheld; k++) {
        mt_dtrace *t = &c->traces[c->held[k]];
        uint64_t used = t->epoch == c->epoch ? t->count : 0;
        if (t->cap <= 4 * used) {
            c->held[n++] = c->held[k];
            continue;
        }
        free(t->ents);
        t->ents = NULL;
        t->cap = 0;
    }
    c->nheld = n;
    c->frame_allocs = 0;
    c->nwide = c->wide_free = 0;
    if (++c->epoch != 0)
        return;
    for (uint64_t i = 0; i < c->ntraces; i++)
        c->traces[i].epoch = 0;
    c->epoch++;
}

mt_dtrace *mt_dctx_trace_slow(mt_dctx *c, uint32_t trace)
{
    if (trace >= c->ntraces) {
        uint64_t cap = c->ntraces ? c->ntraces : TRACES_MIN;
        while (cap <= trace)
            cap *= 2;
        /* one cache line per trace: the hints load a trace's state 16
         * events ahead, and a state across two lines missed twice */
        mt_dtrace *t = aligned_alloc(sizeof *t, cap * sizeof *t);
        if (!t)
            return NULL;
        if (c->ntraces)
            memcpy(t, c->traces, c->ntraces * sizeof *t);
        memset(t + c->ntraces, 0, (cap - c->ntraces) * sizeof *t);
        free(c->traces);
        c->traces = t;
        c->ntraces = cap;
    }
    mt_dtrace *t = &c->traces[trace];
    if (t->epoch != c->epoch) {
        t->epoch = c->epoch;
        t->has_size = 0;
        t->next = 0;
        t->count = t->given = 0;
    }
    return t;
}

mt_errc mt_dctx_too_many(mt_err *err)
{
    return mt_err_set(err, MT_E_CORRUPT,
                      "corrupt recording: more than %u allocations in one "
                      "frame",
                      MT_DAT_FRAME_ALLOCS_MAX);
}

static mt_errc nomem(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
}

/* A wide entry for a block whose size or birth does not fit in an entry:
 * its index, or UINT64_MAX when out of memory.  Reused through the free
 * list. */
static uint64_t wide_new(mt_dctx *c, uint64_t size, uint64_t birth_ms)
{
    uint64_t i = c->wide_free - 1;
    if (c->wide_free)
        c->wide_free = c->wide[i].size;
    else if (mt_grow((void **)&c->wide, &c->wide_cap, c->nwide + 1, sizeof *c->wide) == 0)
        i = c->nwide++;
    else
        return UINT64_MAX;
    c->wide[i] = (mt_dwide){size, birth_ms};
    return i;
}

mt_errc mt_dctx_alloc_wide(mt_dctx *c, mt_dtrace *t, uint64_t size, uint64_t birth_ms, mt_err *err)
{
    uint64_t i = wide_new(c, size, birth_ms);
    if (i == UINT64_MAX)
        return nomem(err);
    t->ents[t->count++] = MT_DENT_WIDE | i;
    return MT_OK;
}

void mt_dctx_take_wide(mt_dctx *c, mt_dent e, uint64_t *size, uint64_t *birth_ms)
{
    uint64_t i = e & ~MT_DENT_WIDE;
    *size = c->wide[i].size;
    *birth_ms = c->wide[i].birth_ms;
    c->wide[i].size = c->wide_free;
    c->wide_free = i + 1;
}

mt_errc mt_dctx_grow(mt_dctx *c, mt_dtrace *t, mt_err *err)
{
    if (!t->cap && mt_grow((void **)&c->held, &c->held_cap, c->nheld + 1, sizeof *c->held))
        return nomem(err);
    uint64_t cap = t->cap ? t->cap * 2 : ENTS_MIN;
    mt_dent *e = realloc(t->ents, cap * sizeof *e);
    if (!e)
        return nomem(err);
    if (!t->cap)
        c->held[c->nheld++] = (uint32_t)(t - c->traces);
    t->ents = e;
    t->cap = cap;
    return MT_OK;
}

/* Blocks on their way to a give's fn, MT_DAT_BLOCKS_PER_CALL at a time. */
typedef struct giving {
    mt_dat_block b[MT_DAT_BLOCKS_PER_CALL];
    size_t n;
    mt_dat_block_fn fn;
    void *ctx;
} giving;

static int give_all(mt_dctx *c, giving *g)
{
    for (size_t h = 0; h < c->nheld; h++) {
        uint32_t i = c->held[h];
        const mt_dtrace *t = &c->traces[i];
        if (t->epoch != c->epoch)
            continue;
        for (uint64_t k = t->given; k < t->count; k++) {
            mt_dent e = t->ents[k];
            if (e == MT_DENT_FREED)
                continue;
            uint64_t size = e & MT_DENT_SIZE_MASK, birth_ms = c->base_ms + (e >> MT_DENT_SIZE_BITS);
            if (e & MT_DENT_WIDE) {
                size = c->wide[e & ~MT_DENT_WIDE].size;
                birth_ms = c->wide[e & ~MT_DENT_WIDE].birth_ms;
            }
            g->b[g->n++] = (mt_dat_block){i, size, birth_ms};
            if (g->n < MT_DAT_BLOCKS_PER_CALL)
                continue;
            g->n = 0;
            int rc = g->fn(g->ctx, g->b, MT_DAT_BLOCKS_PER_CALL);
            if (rc)
                return rc;
        }
    }
    return g->n ? g->fn(g->ctx, g->b, g->n) : 0;
}

int mt_dctx_give(mt_dctx *c, mt_dat_block_fn fn, void *ctx)
{
    giving g = {.n = 0, .fn = fn, .ctx = ctx};
    int rc = give_all(c, &g);
    if (rc)
        return rc;
    for (size_t h = 0; h < c->nheld; h++) {
        mt_dtrace *t = &c->traces[c->held[h]];
        if (t->epoch == c->epoch)
            t->given = t->count;
    }
    return 0;
}
