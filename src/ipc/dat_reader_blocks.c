/* dat_reader_blocks.c -- the reader's EVENTS2 frame context (see .h):
 * per trace its state and its blocks of the frame, an array indexed by
 * serial, and its blocks of the frame before; a state of another epoch is
 * empty. */
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
    for (size_t k = 0; k < c->nheld; k++) {
        free(c->traces[c->held[k]].ents);
        free(c->prev[c->held[k]].ents);
    }
    free(c->held);
    free(c->traces);
    free(c->prev);
    free(c->wide);
    free(c->pwide);
    memset(c, 0, sizeof *c);
}

/* A trace's array for the next frame, when it has fewer entries than the
 * frame that ends allocated: one of that many (rounded up to a power of
 * two) at once, rather than doublings that copy it; its contents are of
 * no use (new serials overwrite them).  Out of memory: as it was. */
static void presize(mt_dtrace *t, uint64_t used)
{
    uint64_t want = ENTS_MIN;
    while (want < used)
        want *= 2;
    if (t->cap >= want)
        return;
    mt_dent *e = malloc(want * sizeof *e);
    if (!e)
        return;
    free(t->ents);
    t->ents = e;
    t->cap = want;
}

/* Trace i at a frame's end: when it allocated in the frame that ends,
 * its array becomes its array of the frame before, and the old one of the
 * frame before its array for the next frame if it has at most four
 * entries per allocation of the frame that ends (a trace that allocates
 * about as much every frame does not free and grow an array again), else
 * it is freed; when it did not, both are freed.  True if it still holds
 * one.  The frame before's epoch is set by the caller. */
static bool hand_over(mt_dctx *c, uint32_t i)
{
    mt_dtrace *t = &c->traces[i];
    mt_dprev *p = &c->prev[i];
    uint64_t used = t->epoch == c->epoch ? t->count : 0;
    mt_dent *old = p->ents;
    uint64_t old_cap = p->cap;
    *p = (mt_dprev){0, 0, NULL, 0};
    if (used) {
        *p = (mt_dprev){c->epoch, used, t->ents, t->cap};
        t->ents = NULL;
        t->cap = 0;
        if (old_cap <= 4 * used) {
            t->ents = old;
            t->cap = old_cap;
            old = NULL;
        }
        presize(t, used);
    } else {
        free(t->ents);
        t->ents = NULL;
        t->cap = 0;
    }
    free(old);
    return t->ents || p->ents;
}

/* A new epoch: every trace's state is of an older one, and the frame
 * before's are the arrays hand_over kept.  Only the held traces are
 * walked (at most one per allocation of this frame and the one before),
 * never every trace.  Epoch 0 is never current (the states' epochs are
 * cleared when it wraps, and the frame before's set to 1). */
void mt_dctx_new_frame(mt_dctx *c)
{
    size_t n = 0;
    for (size_t k = 0; k < c->nheld; k++)
        if (hand_over(c, c->held[k]))
            c->held[n++] = c->held[k];
    c->nheld = n;
    mt_dwide *w = c->pwide; /* the wide blocks too */
    size_t cap = c->pwide_cap;
    c->pwide = c->wide;
    c->pwide_cap = c->wide_cap;
    c->npwide = c->nwide;
    c->wide = w;
    c->wide_cap = cap;
    c->prev_base_ms = c->base_ms;
    c->frame_allocs = 0;
    c->nwide = c->wide_free = 0;
    uint32_t was = c->epoch;
    if (++c->epoch != 0) {
        for (size_t k = 0; k < c->nheld; k++) /* hand_over set the old epoch */
            if (c->prev[c->held[k]].epoch == was)
                c->prev[c->held[k]].epoch = c->epoch;
        return;
    }
    for (uint64_t i = 0; i < c->ntraces; i++) {
        c->traces[i].epoch = 0;
        c->prev[i].epoch = c->prev[i].epoch == was ? 1 : 0;
    }
    c->epoch++;
}

void mt_dctx_forget(mt_dctx *c)
{
    mt_dctx_new_frame(c); /* the frame before is then the empty one between */
    mt_dctx_new_frame(c);
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
        mt_dprev *p = realloc(c->prev, cap * sizeof *p);
        if (p)
            c->prev = p; /* its old size still counts: ntraces grows with traces */
        if (!t || !p) {
            free(t);
            return NULL;
        }
        if (c->ntraces)
            memcpy(t, c->traces, c->ntraces * sizeof *t);
        memset(t + c->ntraces, 0, (cap - c->ntraces) * sizeof *t);
        memset(p + c->ntraces, 0, (cap - c->ntraces) * sizeof *p);
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

mt_errc mt_dctx_edge(mt_dctx *c, uint64_t birth_ms, mt_err *err)
{
    if (c->frame_allocs == 1) {
        c->base_ms = birth_ms > MT_DENT_SPAN / 2 ? birth_ms - MT_DENT_SPAN / 2 : 0;
        return MT_OK;
    }
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

void mt_dctx_take_pwide(const mt_dctx *c, mt_dent e, uint64_t *size, uint64_t *birth_ms)
{
    const mt_dwide *w = &c->pwide[e & ~MT_DENT_WIDE]; /* no free list: the frame is done */
    *size = w->size;
    *birth_ms = w->birth_ms;
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
    bool listed = t->cap || c->prev[t - c->traces].ents; /* held lists it once */
    if (!listed && mt_grow((void **)&c->held, &c->held_cap, c->nheld + 1, sizeof *c->held))
        return nomem(err);
    uint64_t cap = t->cap ? t->cap * 2 : ENTS_MIN;
    mt_dent *e = realloc(t->ents, cap * sizeof *e);
    if (!e)
        return nomem(err);
    if (!listed)
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
