/* dat_reader_apply.h -- one scanned EVENTS2 event (mt_draw) applied to
 * the frame context, with the context's checks in the one-event decoder's
 * order (dat_reader_events2.c): inline, for the runs of one thread
 * (dat_reader_batch2.c) and the consumer of a split reader
 * (dat_reader_split.c).  Touches only the reader's frame context and
 * deferral state.  Nothing outside the reader includes it. */
#ifndef MEMTOP_DAT_READER_APPLY_H
#define MEMTOP_DAT_READER_APPLY_H

#include "dat_reader_events2.h"

/* What applying carries from one event to the next (one thread). */
typedef struct mt_dcarry {
    uint32_t trace;  /* the previous event's */
    bool prev_alloc; /* it is an ALLOC */
} mt_dcarry;

/* A FREE_REF's block against the frame context (the one-event decoder's
 * resolve()). */
static inline __attribute__((always_inline)) mt_errc take(mt_dat_reader *r, uint64_t rec,
                                                          uint32_t trace, mt_dtrace *t,
                                                          uint64_t ref, mt_dat_ev *e, mt_err *err)
{
    if (ref >= t->count)
        return mt_dat_ev2_bad(rec, "free of a block not allocated in its frame", err);
    uint64_t serial = t->count - 1 - ref;
    if (!mt_dctx_take(&r->ctx, t, trace, serial, &e->size, &e->birth_ms))
        return mt_dat_ev2_bad(rec, "free of a block that is not live", err);
    e->deferred = r->defer_on && serial >= t->given;
    return MT_OK;
}

/* SAME_SIZE's check: before any size of the trace in its frame. */
static inline __attribute__((always_inline)) mt_errc same_size_ok(uint64_t rec, const mt_dtrace *t,
                                                                  unsigned tag, mt_err *err)
{
    if ((tag & MT_DAT_EV_SAME_SIZE) && !t->has_size)
        return mt_dat_ev2_bad(rec, "SAME_SIZE before any size of the trace in its frame", err);
    return MT_OK;
}

/* An ALLOC or FREE's size and block (the one-event decoder's body()). */
static inline __attribute__((always_inline)) mt_errc alloc_or_free(mt_dat_reader *r, uint64_t rec,
                                                                   uint32_t trace, mt_dtrace *t,
                                                                   const mt_draw *w, mt_dat_ev *e,
                                                                   mt_err *err)
{
    e->size = w->v;
    if (same_size_ok(rec, t, w->tag, err))
        return MT_E_CORRUPT;
    if (w->tag & MT_DAT_EV_SAME_SIZE)
        e->size = t->last_size;
    e->birth_ms = w->birth;
    if ((w->tag & MT_DAT_EV_KIND_MASK) != MT_DAT_EV_ALLOC)
        return MT_OK;
    e->deferred = r->defer_on;
    return mt_dctx_alloc(&r->ctx, t, trace, e->size, w->birth, err);
}

/* The event's trace and its state: NEXT_TRACE resolved, next(P) noted
 * (the one-event decoder's steps before the body).  *t NULL: an error. */
static inline __attribute__((always_inline)) mt_errc trace_of(mt_dat_reader *r, uint64_t rec,
                                                              mt_dcarry *k, unsigned tag,
                                                              uint32_t given, mt_dtrace **t,
                                                              mt_err *err)
{
    uint32_t prev = k->trace;
    *t = NULL;
    if (mt_dis_next_trace(tag)) {
        if (mt_dat_ev2_next_trace(&r->ctx, rec, k->prev_alloc, &k->trace, err))
            return MT_E_CORRUPT;
    } else if (!(tag & MT_DAT_EV_SAME_TRACE)) {
        k->trace = given;
    }
    mt_dtrace *s = mt_dctx_trace(&r->ctx, k->trace);
    if (!s)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the traces of a frame");
    bool alloc = (tag & MT_DAT_EV_KIND_MASK) == MT_DAT_EV_ALLOC, after_alloc = k->prev_alloc;
    k->prev_alloc = alloc;
    if (alloc && after_alloc && prev != k->trace &&
        mt_dat_ev2_set_next(&r->ctx, prev, k->trace, &s, err))
        return MT_E_NOMEM;
    *t = s;
    return MT_OK;
}

/* A scanned event of trace (t: its state) against the frame context,
 * into *h: the one-event decoder's body and what follows it. */
static inline __attribute__((always_inline)) mt_errc apply_body(mt_dat_reader *r, uint64_t rec,
                                                                uint32_t trace, mt_dtrace *t,
                                                                uint32_t tid, const mt_draw *w,
                                                                mt_dat_hev *h, mt_err *err)
{
    unsigned tag = w->tag, kind = tag & MT_DAT_EV_KIND_MASK;
    bool alloc = kind == MT_DAT_EV_ALLOC;
    mt_dat_ev *e = &h->ev;
    e->deferred = 0;
    mt_errc rc = kind == MT_DAT_EV_FREE_REF ? take(r, rec, trace, t, w->v, e, err)
                                            : alloc_or_free(r, rec, trace, t, w, e, err);
    if (rc)
        return rc;
    t->last_size = e->size;
    t->has_size = 1;
    e->tid = tid;
    e->trace = trace;
    e->flags = alloc ? 0u : (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7;
    h->kind = alloc ? MT_DAT_ALLOC : MT_DAT_FREE;
    h->t_ns = w->t;
    return MT_OK;
}

/* One scanned event against the frame context, into *h. */
static inline __attribute__((always_inline)) mt_errc apply(mt_dat_reader *r, uint64_t rec,
                                                           mt_dcarry *k, uint32_t tid,
                                                           const mt_draw *w, mt_dat_hev *h,
                                                           mt_err *err)
{
    mt_dtrace *t;
    mt_errc rc = trace_of(r, rec, k, w->tag, w->trace, &t, err);
    return rc ? rc : apply_body(r, rec, k->trace, t, tid, w, h, err);
}

/* The state of a resolved event's trace (a split reader's consumer: its
 * producer resolved NEXT_TRACE); NULL with err when out of memory. */
static inline __attribute__((always_inline)) mt_dtrace *state_of(mt_dat_reader *r, const mt_draw *w,
                                                                 mt_err *err)
{
    mt_dtrace *t = mt_dctx_trace(&r->ctx, w->trace);
    if (!t)
        mt_err_set(err, MT_E_NOMEM, "out of memory for the traces of a frame");
    return t;
}

#endif
