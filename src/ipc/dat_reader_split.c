/* dat_reader_split.c -- the two halves of a split reader (see
 * dat_reader_split.h): the producer's batch of unapplied events, and the
 * consumer's application of them to the frame context, with the
 * one-event decoder's first error. */
#include "dat_reader_apply.h"

#include <string.h>

/* The consumer prefetches the block of the event this many later (as the
 * one-thread runs, dat_reader_batch2.c). */
#define AHEAD 16u

void mt_dat_split(mt_dat_reader *r, bool on)
{
    r->split = on;
    memset(&r->split_out, 0, sizeof r->split_out);
}

void mt_dat_split_take(mt_dat_reader *r, mt_dsplit_out *o)
{
    *o = r->split_out;
    memset(&r->split_out, 0, sizeof r->split_out);
}

/* The traces of w[0..m), scanned: NEXT_TRACE resolved and next(P)
 * noted on the producer's map, in order (the one-event decoder's steps
 * after the columns' checks of the trace).  How many before an error. */
static size_t resolve(mt_dat_reader *r, mt_drec *d, mt_draw *w, size_t m, mt_err *err)
{
    for (size_t i = 0; i < m; i++) {
        unsigned tag = w[i].tag;
        uint32_t prev = d->trace;
        if (mt_dis_next_trace(tag)) {
            if (mt_dat_ev2_next_trace(&r->nexts, r->records, d->prev_alloc, &d->trace, err))
                return i;
        } else if (!(tag & MT_DAT_EV_SAME_TRACE)) {
            d->trace = w[i].trace;
        }
        bool alloc = (tag & MT_DAT_EV_KIND_MASK) == MT_DAT_EV_ALLOC;
        if (alloc && d->prev_alloc && prev != d->trace) {
            mt_dtrace *p = mt_dctx_trace(&r->nexts, prev);
            if (!p) {
                mt_err_set(err, MT_E_NOMEM, "out of memory for the traces of a frame");
                return i;
            }
            p->next = d->trace + 1u;
        }
        d->prev_alloc = alloc;
        w[i].trace = d->trace;
    }
    return m;
}

/* mt_dat_next_batch's loop (dat_reader_items.c), the runs scanned and
 * their traces resolved only. */
mt_errc mt_dat_split_next_batch(mt_dat_reader *r, mt_draw *w, size_t max, size_t *n, mt_err *err)
{
    mt_drec *d = &r->rec;
    *n = 0;
    r->split_out.record = r->records;
    r->split_out.tid = d->tid;
    if (!r->in_rec || d->type != MT_DAT_REC_EVENTS2)
        return MT_OK;
    while (*n < max && r->in_rec) {
        size_t k = mt_dat_run_room(d, max - *n);
        size_t m = k ? mt_dat_scan_events2(r, d, NULL, &w[*n], k) : 0;
        if (m < k && m > 0)
            mt_dat_scan_events2(r, d, NULL, &w[*n], m); /* to the start of the one that failed */
        size_t ok = resolve(r, d, &w[*n], m, err);
        d->index += ok;
        d->left -= ok;
        if (ok && w[*n + ok - 1].t > r->t_last)
            r->t_last = w[*n + ok - 1].t;
        *n += ok;
        if (ok < m) { /* w[*n]: its trace's error, before the context's checks */
            r->in_rec = false;
            r->split_out.raw = true;
            r->split_out.stage = MT_DSTAGE_NONE;
            return err->code;
        }
        if (m)
            continue;
        mt_errc rc = mt_dat_raw_event2(r, d, &w[*n], &r->split_out.stage, err);
        d->index++;
        r->in_rec = rc == MT_OK && --d->left > 0;
        if (rc) {
            r->split_out.raw = true; /* w[*n]: how far it got */
            return rc;
        }
        ++*n;
    }
    return MT_OK;
}

mt_errc mt_dat_split_frames(mt_dat_reader *r, unsigned n, mt_err *err)
{
    for (unsigned i = 0; i < n; i++) {
        mt_errc rc = mt_dat_start_frame(r, err);
        if (rc)
            return rc;
    }
    return MT_OK;
}

mt_errc mt_dat_split_apply(mt_dat_reader *r, const mt_dsplit_out *o, const mt_draw *w, size_t n,
                           mt_dat_hev *out, size_t *done, mt_err *err)
{
    const mt_dctx *c = &r->ctx;
    for (size_t j = 0; j < n && j < AHEAD; j++)
        mt_dctx_prefetch_ev(c, w[j].tag, w[j].trace, w[j].v);
    mt_errc rc = MT_OK;
    size_t i = 0;
    for (; i < n; i++) {
        if (i + AHEAD < n)
            mt_dctx_prefetch_ev(c, w[i + AHEAD].tag, w[i + AHEAD].trace, w[i + AHEAD].v);
        mt_dtrace *t = state_of(r, &w[i], err);
        if (!t) {
            rc = MT_E_NOMEM;
            break;
        }
        if ((rc = apply_body(r, o->record, w[i].trace, t, o->tid, &w[i], &out[i], err)) != MT_OK)
            break;
    }
    *done = i;
    return rc;
}

mt_errc mt_dat_split_partial(mt_dat_reader *r, const mt_dsplit_out *o, const mt_draw *w,
                             mt_dstage stage, mt_err *err)
{
    if (stage == MT_DSTAGE_NONE)
        return MT_OK;
    if (stage == MT_DSTAGE_ALL) {
        mt_dat_hev h;
        size_t done;
        return mt_dat_split_apply(r, o, w, 1, &h, &done, err);
    }
    mt_dtrace *t = state_of(r, w, err);
    if (!t)
        return MT_E_NOMEM;
    return stage == MT_DSTAGE_TRACE ? MT_OK : same_size_ok(o->record, t, w->tag, err);
}
