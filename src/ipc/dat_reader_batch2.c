/* dat_reader_batch2.c -- the events of an EVENTS2 record in runs of up to
 * RUN (mt_dat_run_events2), for mt_dat_next_batch: the same events and
 * the same first error as the one-event decoder (dat_reader_events2.c),
 * in fewer instructions.
 *
 * Why: decoding one event at a time kept every cursor and field in the
 * record's struct (reloaded after each store through an output pointer)
 * and read the tags, traces and refs columns twice (the look-ahead that
 * prefetches the block a coming free names).  Here a run is read in two
 * steps.  scan: the columns only, cursors in locals, into an array of raw
 * fields, with every check that needs no frame context (tag bits, column
 * ends, varint length, time overflow, trace ids, SAME_TRACE's previous
 * trace, a free's age); it stops before the first event that fails one,
 * which the one-event decoder then reads again and reports.  apply: each
 * raw event against the frame context, with the context's own checks in
 * the one-event decoder's order, the block of the event RUN_AHEAD later
 * prefetched from the raw array (no second decoding).  Version 7's runs
 * of references are resolved by scan, its rising sizes by apply; each is
 * taken twice, the version a constant in each, so that older files run
 * main's code. */
#include "dat_reader_events2.h"

#include <string.h>

#define RUN 256u
#define RUN_AHEAD 16u

/* An event's fields as its columns give them. */
typedef struct draw {
    uint64_t t;     /* its time */
    uint64_t v;     /* ALLOC, FREE: size (unless SAME_SIZE); FREE_REF, FREE_PREV: ref */
    uint64_t birth; /* ALLOC, FREE: birth ms */
    uint32_t trace; /* the trace given; after SAME_TRACE or NEXT_TRACE, a guess (hints only) */
    uint32_t tag;
} draw;

/* What a tag asks of the scan, as a table (a lookup and a bit test for
 * each question, instead of the tests of the tag's bits and kind):
 * bits 0-2, the one-event decoder's tag checks (check_tag): bit 0, the
 * tag is valid in versions 1 to 3; bit 1, in 4 and 5 (an ALLOC's
 * NEXT_TRACE without SAME_TRACE as well); bit 2, from 6 on (FREE_PREV as
 * well); then which columns it reads. */
enum {
    OP_TIME = 1u << 3,  /* a dt (no SAME_TIME) */
    OP_SAME = 1u << 4,  /* SAME_TRACE */
    OP_NEXT = 1u << 5,  /* NEXT_TRACE (an ALLOC's, without SAME_TRACE) */
    OP_TRACE = 1u << 6, /* a trace (neither) */
    OP_REF = 1u << 7,   /* a ref (FREE_REF, FREE_PREV) */
    OP_SIZE = 1u << 8,  /* a size (ALLOC, FREE without SAME_SIZE) */
    OP_AGE = 1u << 9,   /* an age (FREE) */
};
#define TAG_FLAGS(x) (((x) >> MT_DAT_EV_FLAGS_SHIFT) & 7)
#define TAG_ALLOC_OK(x)                                                                            \
    (TAG_FLAGS(x) == 0 ? 7 : TAG_FLAGS(x) == 1 && !((x)&MT_DAT_EV_SAME_TRACE) ? 6 : 0)
#define TAG_OK(x)                                                                                  \
    (((x)&3) == MT_DAT_EV_ALLOC      ? TAG_ALLOC_OK(x)                                             \
     : ((x)&3) == MT_DAT_EV_FREE     ? 7                                                           \
     : ((x)&MT_DAT_EV_SAME_SIZE)     ? 0                                                           \
     : ((x)&3) == MT_DAT_EV_FREE_REF ? 7                                                           \
                                     : 4)
#define TAG_NEXT(x) (((x) & (MT_DAT_EV_KIND_MASK | MT_DAT_EV_NEXT_TRACE)) == MT_DAT_EV_NEXT_TRACE)
#define TAG_TRACE(x) ((x)&MT_DAT_EV_SAME_TRACE ? OP_SAME : TAG_NEXT(x) ? OP_NEXT : OP_TRACE)
#define TAG_VALUES(x)                                                                              \
    (((x)&3) >= MT_DAT_EV_FREE_REF                                                                 \
         ? OP_REF                                                                                  \
         : ((x)&MT_DAT_EV_SAME_SIZE ? 0 : OP_SIZE) | (((x)&3) == MT_DAT_EV_FREE ? OP_AGE : 0))
#define TAG_OP(x)                                                                                  \
    (TAG_OK(x) | ((x)&MT_DAT_EV_SAME_TIME ? 0 : OP_TIME) | TAG_TRACE(x) | TAG_VALUES(x))
#define TAG_OP4(x) TAG_OP(x), TAG_OP((x) + 1), TAG_OP((x) + 2), TAG_OP((x) + 3)
#define TAG_OP16(x) TAG_OP4(x), TAG_OP4((x) + 4), TAG_OP4((x) + 8), TAG_OP4((x) + 12)
#define TAG_OP64(x) TAG_OP16(x), TAG_OP16((x) + 16), TAG_OP16((x) + 32), TAG_OP16((x) + 48)

static const uint16_t tag_op[256] = {TAG_OP64(0), TAG_OP64(64), TAG_OP64(128), TAG_OP64(192)};

_Static_assert(MT_DAT_EV_NEXT_TRACE == 1u << MT_DAT_EV_FLAGS_SHIFT, "NEXT_TRACE: flags 1");
_Static_assert(MT_DAT_EV_ALLOC == 0 && MT_DAT_EV_FREE_REF == 2 && MT_DAT_EV_FREE_PREV == 3,
               "the kinds as TAG_OP knows them");

/* The columns of one event into *w; false if any check fails (the
 * cursors are then part-way through the event). */
static inline __attribute__((always_inline)) bool
scan_one(mt_dcur (*col)[2], unsigned tag, uint64_t ndefs, unsigned valid, bool tick, uint64_t *t,
         uint64_t *ms, bool *have, uint32_t *guess, uint32_t *col_trace, const mt_dctx *c,
         bool runs, uint64_t *ref, draw *w)
{
    uint64_t dt = 0, x = 0, age = 0;
    unsigned op = tag_op[tag];
    if (!(op & valid))
        return false;
    if (op & OP_TIME) {
        if (!mt_dsplit_v(&col[MT_DCOL_TIMES][0], &col[MT_DCOL_TIMES][1], &dt) ||
            dt > UINT64_MAX - *t)
            return false;
        *t += dt;
        *ms = *t / 1000000u;
    }
    if (op & OP_SAME) {
        if (!*have)
            return false;
    } else if (op & OP_NEXT) {
        *guess = mt_dctx_guess_next(c, *guess);
    } else {
        if (!mt_dsplit_v(&col[MT_DCOL_TRACES][0], &col[MT_DCOL_TRACES][1], &x) ||
            !mt_dcol_trace(tick, x, ndefs, col_trace, guess))
            return false;
        *have = true;
    }
    if (op & OP_REF) {
        if (!mt_dsplit_v(&col[MT_DCOL_REFS][0], &col[MT_DCOL_REFS][1], &x))
            return false;
        /* version 7's run: the one-event decoder's rule (the tags' cursor
         * is past this event's byte) */
        if (runs && !mt_dref_of(col[MT_DCOL_TAGS][0].p - 1, *ref, x, &x))
            return false;
        if (runs)
            *ref = x;
    } else {
        if ((op & OP_SIZE) && !mt_dsplit_v(&col[MT_DCOL_SIZES][0], &col[MT_DCOL_SIZES][1], &x))
            return false;
        if ((op & OP_AGE) &&
            (!mt_dsplit_v(&col[MT_DCOL_AGES][0], &col[MT_DCOL_AGES][1], &age) || age > *ms))
            return false;
        w->birth = *ms - age;
    }
    w->t = *t;
    w->v = x;
    w->trace = *guess;
    w->tag = tag;
    return true;
}

/* Up to k events (k <= the tags left) into w: how many passed every check.
 * The record's cursors, time, have_trace and (runs: version 7) the runs
 * of references move past them only when all k did (so that scanning
 * again the count it gave stops where it must).  Always inline: scan
 * takes it twice, runs a constant in each. */
static inline __attribute__((always_inline)) size_t scan_runs(const mt_dat_reader *r, mt_drec *d,
                                                              draw *w, size_t k, bool runs)
{
    mt_dcur col[MT_DCOL_N][2];
    memcpy(col, d->col, sizeof col);
    uint64_t t = d->t, ms = t / 1000000u, ndefs = r->ndefs, ref = d->prev_ref;
    bool have = d->have_trace;
    unsigned valid = r->info.version >= MT_DAT_VERSION_PREV      ? 4
                     : r->info.version >= MT_DAT_VERSION_ORDERED ? 2
                                                                 : 1; /* tag_op's bit */
    uint32_t guess = d->trace, col_trace = d->col_trace;
    size_t i = 0;
    for (; i < k; i++)
        if (!scan_one(col, *col[MT_DCOL_TAGS][0].p++, ndefs, valid, r->tick_order, &t, &ms, &have,
                      &guess, &col_trace, &r->ctx, runs, &ref, &w[i]))
            return i;
    memcpy(d->col, col, sizeof col);
    d->t = t;
    d->have_trace = have;
    d->col_trace = col_trace;
    if (runs)
        d->prev_ref = ref;
    return k;
}

static size_t scan(const mt_dat_reader *r, mt_drec *d, draw *w, size_t k)
{
    return mt_dat_v7(r) ? scan_runs(r, d, w, k, true) : scan_runs(r, d, w, k, false);
}

static mt_errc nomem(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory for the traces of a frame");
}

/* What applying carries from one event to the next, in locals through a
 * run (the record's copy, d->trace and d->prev_alloc, is set after it). */
typedef struct carry {
    uint32_t trace;  /* the previous event's */
    bool prev_alloc; /* it is an ALLOC */
    uint32_t tid;
} carry;

/* A FREE_REF's block against the frame context (the one-event decoder's
 * resolve()). */
static inline __attribute__((always_inline)) mt_errc take(mt_dat_reader *r, mt_dtrace *t,
                                                          uint64_t ref, mt_dat_ev *e, mt_err *err)
{
    if (ref >= t->count)
        return mt_dat_ev2_bad(r, "free of a block not allocated in its frame", err);
    uint64_t serial = t->count - 1 - ref;
    if (!mt_dctx_take(&r->ctx, t, serial, &e->size, &e->birth_ms))
        return mt_dat_ev2_bad(r, "free of a block that is not live", err);
    e->deferred = r->defer_on && serial >= t->given;
    return MT_OK;
}

/* An ALLOC or FREE's size and block (the one-event decoder's body()). */
static inline __attribute__((always_inline)) mt_errc
alloc_or_free(mt_dat_reader *r, bool v7, mt_dtrace *t, const draw *w, mt_dat_ev *e, mt_err *err)
{
    e->size = w->v;
    if ((w->tag & MT_DAT_EV_SAME_SIZE) && !t->has_size)
        return mt_dat_ev2_bad(r, "SAME_SIZE before any size of the trace in its frame", err);
    if (w->tag & MT_DAT_EV_SAME_SIZE)
        e->size = t->last_size;
    if (v7 && mt_dat_ev2_rise(r, w->tag, t, &e->size, err))
        return MT_E_CORRUPT;
    e->birth_ms = w->birth;
    if ((w->tag & MT_DAT_EV_KIND_MASK) != MT_DAT_EV_ALLOC) {
        e->deferred = 0;
        return MT_OK;
    }
    e->deferred = r->defer_on;
    return mt_dctx_alloc(&r->ctx, t, e->size, w->birth, err);
}

/* One scanned event against the frame context, into *h (v7: version 7's
 * rising sizes, a constant where it is taken). */
static inline __attribute__((always_inline)) mt_errc
apply(mt_dat_reader *r, bool v7, carry *k, const draw *w, mt_dat_hev *h, mt_err *err)
{
    unsigned tag = w->tag, kind = tag & MT_DAT_EV_KIND_MASK;
    uint32_t prev = k->trace;
    if (mt_dis_next_trace(tag)) {
        if (mt_dat_ev2_next_trace(r, k->prev_alloc, &k->trace, err))
            return MT_E_CORRUPT;
    } else if (!(tag & MT_DAT_EV_SAME_TRACE)) {
        k->trace = w->trace;
    }
    mt_dtrace *t = mt_dctx_trace(&r->ctx, k->trace);
    if (!t)
        return nomem(err);
    bool alloc = kind == MT_DAT_EV_ALLOC, after_alloc = k->prev_alloc;
    k->prev_alloc = alloc;
    if (alloc && after_alloc && prev != k->trace)
        mt_dat_ev2_set_next(r, prev, k->trace);
    mt_dat_ev *e = &h->ev; /* each of the three sets e->deferred */
    mt_errc rc = kind == MT_DAT_EV_FREE_REF    ? take(r, t, w->v, e, err)
                 : kind == MT_DAT_EV_FREE_PREV ? mt_dat_ev2_take_prev(r, k->trace, w->v, e, err)
                                               : alloc_or_free(r, v7, t, w, e, err);
    if (rc)
        return rc;
    if (kind != MT_DAT_EV_FREE_PREV) { /* a FREE_PREV leaves it (dat_format.h) */
        t->last_size = e->size;
        t->has_size = 1;
    }
    e->tid = k->tid;
    e->trace = k->trace;
    e->flags = alloc ? 0u : (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7;
    h->kind = alloc ? MT_DAT_ALLOC : MT_DAT_FREE;
    h->t_ns = w->t;
    return MT_OK;
}

/* The m scanned events against the frame context into out, the block of
 * the event RUN_AHEAD later prefetched: *done applied, the first error.
 * Always inline: taken twice, v7 a constant in each. */
static inline __attribute__((always_inline)) mt_errc apply_all(mt_dat_reader *r, bool v7,
                                                               carry *into, const draw *w, size_t m,
                                                               mt_dat_hev *out, size_t *done,
                                                               mt_err *err)
{
    carry k = *into, *c = &k; /* a local: in registers through the run */
    for (size_t i = 0; i < m && i < RUN_AHEAD; i++)
        mt_dctx_prefetch_ev(&r->ctx, w[i].tag, w[i].trace, w[i].v);
    mt_errc rc = MT_OK;
    size_t i = 0, ahead = m > RUN_AHEAD ? m - RUN_AHEAD : 0;
    for (; i < ahead; i++) { /* two loops: no test of the prefetch's bound per event */
        const draw *a = &w[i + RUN_AHEAD];
        mt_dctx_prefetch_ev(&r->ctx, a->tag, a->trace, a->v);
        if ((rc = apply(r, v7, c, &w[i], &out[i], err)) != MT_OK)
            break;
    }
    for (; i < m && rc == MT_OK; i++)
        if ((rc = apply(r, v7, c, &w[i], &out[i], err)) != MT_OK)
            break;
    *done = i;
    *into = k;
    return rc;
}

mt_errc mt_dat_run_events2(mt_dat_reader *r, mt_drec *d, mt_dat_hev *out, size_t max, size_t *n,
                           mt_err *err)
{
    const mt_dcur *tags = &d->col[MT_DCOL_TAGS][0];
    size_t k = max < RUN ? max : RUN, left = (size_t)(tags->end - tags->p);
    *n = 0;
    if (d->left < 2 || left < 2)
        return MT_OK;
    if (k > d->left - 1)
        k = d->left - 1; /* the record's last event: the one-event decoder's */
    if (k > left - 1)
        k = left - 1; /* the tags left: d->left as well, checked rather than assumed */
    draw w[RUN];
    size_t m = scan(r, d, w, k);
    if (m < k && m > 0)
        scan(r, d, w, m); /* to the start of the event that failed */
    carry c = {d->trace, d->prev_alloc, d->tid};
    size_t i = 0;
    mt_errc rc = mt_dat_v7(r) ? apply_all(r, true, &c, w, m, out, &i, err)
                              : apply_all(r, false, &c, w, m, out, &i, err);
    d->trace = c.trace;
    d->prev_alloc = c.prev_alloc;
    if (i > 0 && w[i - 1].t > r->t_last)
        r->t_last = w[i - 1].t;
    *n = i;
    d->index += i + (rc != MT_OK);
    d->left -= i + (rc != MT_OK);
    return rc;
}
