/* dat_reader_events2.c -- the events of an EVENTS2 record (dat_format.h),
 * one per call, each validated against its columns and the frame context
 * (dat_reader_blocks.h): tag bits, time overflow, trace ids, SAME_SIZE
 * only after a size of the trace in this frame, a reference only to a
 * live block of this frame (FREE_REF) or of the frame before (FREE_PREV);
 * after the last event every column must be used up exactly. */
#include "dat_reader_events2.h"

#include <string.h>

mt_errc mt_dat_ev2_bad(const mt_dat_reader *r, const char *what, mt_err *err)
{
    return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: %s (record %llu)", what,
                      (unsigned long long)r->records);
}

static mt_errc bad(const mt_dat_reader *r, const char *what, mt_err *err)
{
    return mt_dat_ev2_bad(r, what, err);
}

static bool columns_used_up(const mt_drec *d)
{
    for (unsigned c = 0; c < MT_DCOL_N; c++)
        for (unsigned k = 0; k < 2; k++)
            if (d->col[c][k].p != d->col[c][k].end)
                return false;
    return true;
}

/* The look-ahead: a free's block is in a table far larger than the cache
 * (one miss per free, most of a bare pass's time on random frees), so the
 * tags, traces and refs columns are also read MT_DAHEAD events ahead and
 * the slot of each coming FREE_REF prefetched.  Unvalidated and without
 * effect on what is decoded: it stops at the first byte it does not like
 * (the real decoder then says what is wrong), and a slot it guesses wrong
 * (an allocation of the trace in between) only costs the miss. */
#define MT_DAHEAD 16u

static void ahead_step(mt_dat_reader *r, mt_drec *d)
{
    mt_dcur *tags = &d->ahead[0][0];
    if (!d->ahead_on || tags->p >= tags->end) {
        d->ahead_on = false;
        return;
    }
    unsigned tag = *tags->p++;
    uint64_t v;
    if (mt_dis_next_trace(tag)) {
        d->ahead_trace = mt_dctx_guess_next(&r->ctx, d->ahead_trace);
    } else if (!(tag & MT_DAT_EV_SAME_TRACE)) {
        if (!mt_dsplit_v(&d->ahead[1][0], &d->ahead[1][1], &v) ||
            !mt_dcol_trace(r->tick_order, v, r->ndefs, &d->ahead_col, &d->ahead_trace)) {
            d->ahead_on = false;
            return;
        }
    }
    uint64_t ref = 0;
    if (mt_dis_ref(tag) && !mt_dsplit_v(&d->ahead[2][0], &d->ahead[2][1], &ref)) {
        d->ahead_on = false;
        return;
    }
    bool run = (tag & MT_DSAME_TT) == MT_DSAME_TT && (tag & MT_DAT_EV_KIND_MASK) == d->ahead_key;
    if (mt_dat_v7(r) && mt_dis_ref(tag)) /* a run's: the look-ahead's last ref + 1 + v (wraps) */
        d->ahead_ref = ref = run ? d->ahead_ref + 1 + ref : ref;
    d->ahead_key = tag & MT_DAT_EV_KIND_MASK; /* its own: it does not check SAME_TRACE */
    mt_dctx_prefetch_ev(&r->ctx, tag, d->ahead_trace, ref);
}

static void ahead_start(mt_dat_reader *r, mt_drec *d)
{
    d->ahead[0][0] = d->col[MT_DCOL_TAGS][0];
    memcpy(d->ahead[1], d->col[MT_DCOL_TRACES], sizeof d->ahead[1]);
    memcpy(d->ahead[2], d->col[MT_DCOL_REFS], sizeof d->ahead[2]);
    d->ahead_on = true;
    d->ahead_trace = UINT32_MAX; /* none yet */
    d->ahead_col = 0;
    d->ahead_key = MT_DAT_EV_ALLOC; /* no reference before the record's first */
    d->ahead_ref = 0;
    for (unsigned i = 0; i < MT_DAHEAD; i++)
        ahead_step(r, d);
}

/* Version 8's tags column: codes while a TAG_PAIRS holds in the frame,
 * expanded into the table's buffer, which the decoders then read as they
 * read a column of tags; else the tags as they are, one byte each. */
static mt_errc paired_tags(mt_dat_reader *r, mt_drec *d, mt_err *err)
{
    mt_dcur *tags = &d->col[MT_DCOL_TAGS][0];
    if (!r->tp.on)
        return (uint64_t)(tags->end - tags->p) == d->left ? MT_OK : bad(r, MT_DTP_BAD_LEN, err);
    const char *why = mt_dtp_expand(&r->tp, tags->p, tags->end, (size_t)d->left);
    if (why)
        return bad(r, why, err);
    *tags = (mt_dcur){r->tp.t->tags + 1, r->tp.t->tags + 1 + d->left};
    return MT_OK;
}

mt_errc mt_dat_start_events2(mt_dat_reader *r, mt_drec *d, mt_err *err)
{
    bool v8 = mt_dat_v8(r); /* the head gives the tags' length */
    uint64_t len[MT_DCOL_N][2] = {{d->left, 0}};
    if (v8 && !mt_dcur_v(&d->c, &len[MT_DCOL_TAGS][0]))
        return bad(r, "EVENTS2 record cut short", err);
    for (unsigned c = MT_DCOL_TIMES; c < MT_DCOL_N; c++)
        if (!mt_dcur_v(&d->c, &len[c][0]) || !mt_dcur_v(&d->c, &len[c][1]))
            return bad(r, "EVENTS2 record cut short", err);
    for (unsigned c = 0; c < MT_DCOL_N; c++) {
        for (unsigned k = 0; k < 2; k++) {
            if (len[c][k] > (uint64_t)(d->c.end - d->c.p))
                return bad(r, "EVENTS2 columns longer than the record", err);
            d->col[c][k] = (mt_dcur){d->c.p, d->c.p + len[c][k]};
            d->c.p += len[c][k];
        }
    }
    if (v8 && paired_tags(r, d, err))
        return MT_E_CORRUPT;
    if (d->left == 0 && !columns_used_up(d))
        return bad(r, "EVENTS2 columns hold more than their events", err);
    ahead_start(r, d);
    return MT_OK; /* bytes after the columns: appended fields, ignored */
}

/* Inline: a call per field cost more than the field. */
static inline __attribute__((always_inline)) mt_errc get(const mt_dat_reader *r, mt_drec *d,
                                                         unsigned c, uint64_t *v, mt_err *err)
{
    return mt_dsplit_v(&d->col[c][0], &d->col[c][1], v) ? MT_OK
                                                        : bad(r, "EVENTS2 column cut short", err);
}

/* An ALLOC's bits 4-6: 0, or (version 4) NEXT_TRACE without SAME_TRACE. */
static bool alloc_bits_ok(const mt_dat_reader *r, unsigned tag)
{
    unsigned flags = (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7;
    if (flags << MT_DAT_EV_FLAGS_SHIFT == MT_DAT_EV_NEXT_TRACE)
        return r->info.version >= MT_DAT_VERSION_ORDERED && !(tag & MT_DAT_EV_SAME_TRACE);
    return !flags;
}

static mt_errc check_tag(const mt_dat_reader *r, unsigned tag, mt_err *err)
{
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    if ((kind == MT_DAT_EV_FREE_PREV && r->info.version < MT_DAT_VERSION_PREV) ||
        (kind == MT_DAT_EV_ALLOC && !alloc_bits_ok(r, tag)) ||
        (mt_dis_ref(tag) && (tag & MT_DAT_EV_SAME_SIZE)))
        return bad(r, "bad event tag", err);
    return MT_OK;
}

static mt_errc time_and_trace(mt_dat_reader *r, mt_drec *d, unsigned tag, mt_err *err)
{
    uint64_t dt = 0, trace = 0; /* = 0: gcc -O3 cannot see get() set it */
    if (!(tag & MT_DAT_EV_SAME_TIME) && get(r, d, MT_DCOL_TIMES, &dt, err))
        return MT_E_CORRUPT;
    if (dt > UINT64_MAX - d->t)
        return bad(r, "event time overflows", err);
    d->t += dt;
    if (tag & MT_DAT_EV_SAME_TRACE)
        return d->have_trace ? MT_OK : bad(r, "SAME_TRACE on the first event of a record", err);
    if (mt_dis_next_trace(tag))
        return mt_dat_ev2_next_trace(r, d->prev_alloc, &d->trace, err);
    if (get(r, d, MT_DCOL_TRACES, &trace, err))
        return MT_E_CORRUPT;
    if (!mt_dcol_trace(r->tick_order, trace, r->ndefs, &d->col_trace, &d->trace))
        return bad(r, "event of an undefined trace", err);
    d->have_trace = true;
    return MT_OK;
}

static mt_errc size_of(mt_dat_reader *r, mt_drec *d, unsigned tag, const mt_dtrace *t,
                       uint64_t *size, mt_err *err)
{
    if (!(tag & MT_DAT_EV_SAME_SIZE)) {
        if (get(r, d, MT_DCOL_SIZES, size, err))
            return MT_E_CORRUPT;
        return mt_dat_v7(r) ? mt_dat_ev2_rise(r, tag, t, size, err) : MT_OK;
    }
    if (!t->has_size)
        return bad(r, "SAME_SIZE before any size of the trace in its frame", err);
    *size = t->last_size;
    return MT_OK;
}

/* A reference's ref: the refs column's value, or (version 7) a run's. */
static mt_errc ref_of(mt_dat_reader *r, mt_drec *d, uint64_t *ref, mt_err *err)
{
    uint64_t v = 0; /* = 0: as trace above */
    if (get(r, d, MT_DCOL_REFS, &v, err))
        return MT_E_CORRUPT;
    *ref = v;
    if (mt_dat_v7(r) && !mt_dref_of(d->col[MT_DCOL_TAGS][0].p - 1, d->prev_ref, v, ref))
        return bad(r, "reference overflows", err);
    d->prev_ref = *ref;
    return MT_OK;
}

/* The block a FREE_REF names: its size and birth. */
static mt_errc resolve(mt_dat_reader *r, mt_drec *d, mt_dtrace *t, mt_dat_ev *e, mt_err *err)
{
    uint64_t ref = 0;
    if (ref_of(r, d, &ref, err))
        return MT_E_CORRUPT;
    if (ref >= t->count)
        return bad(r, "free of a block not allocated in its frame", err);
    uint64_t serial = t->count - 1 - ref;
    if (!mt_dctx_take(&r->ctx, t, serial, &e->size, &e->birth_ms))
        return bad(r, "free of a block that is not live", err);
    e->deferred = r->defer_on && serial >= t->given; /* not given to defer_fn yet */
    return MT_OK;
}

/* The block of the frame before a FREE_PREV names. */
static mt_errc resolve_prev(mt_dat_reader *r, mt_drec *d, mt_dat_ev *e, mt_err *err)
{
    uint64_t ref = 0;
    if (ref_of(r, d, &ref, err))
        return MT_E_CORRUPT;
    return mt_dat_ev2_take_prev(r, d->trace, ref, e, err);
}

static mt_errc body(mt_dat_reader *r, mt_drec *d, unsigned tag, mt_dtrace *t, mt_dat_ev *e,
                    mt_err *err)
{
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    uint64_t ms = d->t / 1000000u, age = 0;
    if (kind == MT_DAT_EV_FREE_REF)
        return resolve(r, d, t, e, err);
    if (kind == MT_DAT_EV_FREE_PREV)
        return resolve_prev(r, d, e, err);
    if (size_of(r, d, tag, t, &e->size, err))
        return MT_E_CORRUPT;
    if (kind == MT_DAT_EV_ALLOC) {
        e->birth_ms = ms;
        e->deferred = r->defer_on;
        return mt_dctx_alloc(&r->ctx, t, e->size, ms, err);
    }
    if (get(r, d, MT_DCOL_AGES, &age, err))
        return MT_E_CORRUPT;
    if (age > ms)
        return bad(r, "free of a block born before tracking began", err);
    e->birth_ms = ms - age;
    return MT_OK;
}

mt_errc mt_dat_next_event2(mt_dat_reader *r, mt_drec *d, mt_dat_hev *h, mt_err *err)
{
    mt_dcur *tags = &d->col[MT_DCOL_TAGS][0];
    if (tags->p >= tags->end)
        return bad(r, "EVENTS2 record cut short", err);
    unsigned tag = *tags->p++;
    ahead_step(r, d);
    uint32_t prev = d->trace;
    bool after_alloc = d->prev_alloc;
    if (check_tag(r, tag, err) || time_and_trace(r, d, tag, err))
        return MT_E_CORRUPT;
    mt_dtrace *t = mt_dctx_trace(&r->ctx, d->trace);
    if (!t)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the traces of a frame");
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    d->prev_alloc = kind == MT_DAT_EV_ALLOC;
    if (d->prev_alloc && after_alloc && prev != d->trace)
        mt_dat_ev2_set_next(r, prev, d->trace);
    mt_dat_ev *e = &h->ev;
    memset(e, 0, sizeof *e);
    mt_errc rc = body(r, d, tag, t, e, err);
    if (rc)
        return rc;
    if (kind != MT_DAT_EV_FREE_PREV) { /* a FREE_PREV leaves it (dat_format.h) */
        t->last_size = e->size;
        t->has_size = 1;
    }
    if (d->left == 1 && !columns_used_up(d))
        return bad(r, "EVENTS2 columns hold more than their events", err);
    e->tid = d->tid;
    e->trace = d->trace;
    e->flags = d->prev_alloc ? 0u : (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7; /* an ALLOC's: NEXT_TRACE */
    h->kind = kind == MT_DAT_EV_ALLOC ? MT_DAT_ALLOC : MT_DAT_FREE;
    h->t_ns = d->t;
    if (d->t > r->t_last)
        r->t_last = d->t;
    return MT_OK;
}
