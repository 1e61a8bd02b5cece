/* dat_reader_items.c -- the items of the records that hold many: the
 * events of an EVENTS record (EVENTS2: dat_reader_events2.c), the entries
 * of TRACE_STATES and LIVE_BLOCKS (see dat_format.h).  One item per call
 * (or, for EVENTS2, a batch of events per call), each validated: tag bits,
 * time overflow, trace ids against the definitions read so far, deltas. */
#include "dat_reader_events2.h"

#include <string.h>

static mt_errc bad(const mt_dat_reader *r, const char *what, mt_err *err)
{
    return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: %s (record %llu)", what,
                      (unsigned long long)r->records);
}

static mt_errc event_trace(mt_dat_reader *r, mt_drec *d, unsigned tag, mt_err *err)
{
    if (tag & MT_DAT_EV_SAME_TRACE) {
        if (!d->have_trace)
            return bad(r, "SAME_TRACE on the first event of a record", err);
        return MT_OK;
    }
    uint64_t trace;
    if (!mt_dcur_v(&d->c, &trace))
        return bad(r, "event cut short", err);
    if (trace >= r->ndefs)
        return bad(r, "event of an undefined trace", err);
    d->trace = (uint32_t)trace;
    d->have_trace = true;
    return MT_OK;
}

static mt_errc next_event(mt_dat_reader *r, mt_drec *d, mt_dat_event *ev, mt_err *err)
{
    if (d->c.p >= d->c.end)
        return bad(r, "EVENTS record cut short", err);
    unsigned tag = *d->c.p++;
    unsigned kind = tag & MT_DAT_EV_KIND_MASK, flags = (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7;
    if (kind > MT_DAT_EV_FREE || (tag & MT_DAT_EV_RESERVED) || (kind == MT_DAT_EV_ALLOC && flags))
        return bad(r, "bad event tag", err);
    uint64_t dt = 0;
    if (!(tag & MT_DAT_EV_SAME_TIME) && !mt_dcur_v(&d->c, &dt))
        return bad(r, "event cut short", err);
    if (dt > UINT64_MAX - d->t)
        return bad(r, "event time overflows", err);
    d->t += dt;
    mt_errc rc = event_trace(r, d, tag, err);
    if (rc)
        return rc;
    mt_dat_ev *e = &ev->u.ev;
    memset(e, 0, sizeof *e);
    uint64_t age = 0;
    if (!mt_dcur_v(&d->c, &e->size) || (kind == MT_DAT_EV_FREE && !mt_dcur_v(&d->c, &age)))
        return bad(r, "event cut short", err);
    if (age > d->t / 1000000u)
        return bad(r, "free of a block born before tracking began", err);
    e->tid = d->tid;
    e->trace = d->trace;
    e->flags = flags;
    e->birth_ms = d->t / 1000000u - age;
    ev->kind = kind == MT_DAT_EV_FREE ? MT_DAT_FREE : MT_DAT_ALLOC;
    ev->t_ns = d->t;
    if (d->t > r->t_last)
        r->t_last = d->t;
    return MT_OK;
}

static mt_errc next_trace_state(mt_dat_reader *r, mt_drec *d, mt_dat_event *ev, mt_err *err)
{
    mt_dat_trace_state *s = &ev->u.ts;
    uint64_t delta;
    if (!mt_dcur_v(&d->c, &delta) || !mt_dcur_v(&d->c, &s->alloc_count) ||
        !mt_dcur_v(&d->c, &s->alloc_bytes) || !mt_dcur_v(&d->c, &s->free_count) ||
        !mt_dcur_v(&d->c, &s->free_bytes) || !mt_dcur_v(&d->c, &s->temporary_count) ||
        !mt_dcur_v(&d->c, &s->temporary_bytes) || !mt_dcur_v(&d->c, &s->peak_live_bytes))
        return bad(r, "TRACE_STATES entry cut short", err);
    if (delta >= r->ndefs || d->prev_id + delta >= r->ndefs) /* no overflow: prev_id < ndefs */
        return bad(r, "TRACE_STATES entry of an undefined trace", err);
    d->prev_id += delta;
    s->id = (uint32_t)d->prev_id;
    r->set_ntraces++;
    ev->kind = MT_DAT_TRACE_STATE;
    ev->t_ns = r->t_last;
    return MT_OK;
}

static mt_errc next_live_block(mt_dat_reader *r, mt_drec *d, mt_dat_event *ev, mt_err *err)
{
    mt_dat_live_block *b = &ev->u.lb;
    int64_t dtrace, dbirth;
    if (!mt_dcur_z(&d->c, &dtrace) || !mt_dcur_z(&d->c, &dbirth) || !mt_dcur_v(&d->c, &b->size) ||
        !mt_dcur_v(&d->c, &b->count))
        return bad(r, "LIVE_BLOCKS entry cut short", err);
    if (__builtin_add_overflow(d->prev_trace, dtrace, &d->prev_trace) ||
        __builtin_add_overflow(d->prev_birth, dbirth, &d->prev_birth))
        return bad(r, "LIVE_BLOCKS delta overflows", err);
    if (d->prev_trace < 0 || (uint64_t)d->prev_trace >= r->ndefs || d->prev_birth < 0)
        return bad(r, "LIVE_BLOCKS entry of an undefined trace", err);
    if (b->count == 0 || b->size > UINT64_MAX / b->count)
        return bad(r, "LIVE_BLOCKS entry with a bad count", err);
    b->trace = (uint32_t)d->prev_trace;
    b->birth_ms = (uint64_t)d->prev_birth;
    r->set_nlive++;
    ev->kind = MT_DAT_LIVE_BLOCK;
    ev->t_ns = r->t_last;
    return MT_OK;
}

static mt_errc next_culled(mt_dat_reader *r, mt_drec *d, mt_dat_event *ev, mt_err *err)
{
    mt_dat_culled *s = &ev->u.culled;
    uint64_t delta;
    if (!mt_dcur_v(&d->c, &delta) || !mt_dcur_v(&d->c, &s->count) || !mt_dcur_v(&d->c, &s->bytes) ||
        !mt_dcur_v(&d->c, &s->temporary_count) || !mt_dcur_v(&d->c, &s->temporary_bytes))
        return bad(r, "CULLED entry cut short", err);
    if ((d->index && !delta) || delta >= r->ndefs || d->prev_id + delta >= r->ndefs)
        return bad(r, "CULLED entry of an undefined trace, or out of order", err);
    if (!s->count || s->temporary_count > s->count || s->temporary_bytes > s->bytes)
        return bad(r, "CULLED entry with bad counts", err);
    d->prev_id += delta;
    s->id = (uint32_t)d->prev_id;
    s->written_early = d->early;
    s->young = d->young;
    ev->kind = MT_DAT_CULLED;
    ev->t_ns = d->t;
    return MT_OK;
}

mt_errc mt_dat_decode_item(mt_dat_reader *r, mt_dat_event *ev, mt_err *err)
{
    mt_drec *d = &r->rec;
    mt_errc rc;
    switch (d->type) {
    case MT_DAT_REC_EVENTS:
        rc = next_event(r, d, ev, err);
        break;
    case MT_DAT_REC_EVENTS2: {
        mt_dat_hev h;
        rc = mt_dat_next_event2(r, d, &h, err);
        ev->kind = h.kind;
        ev->t_ns = h.t_ns;
        ev->u.ev = h.ev;
        break;
    }
    case MT_DAT_REC_TRACE_STATES:
        rc = next_trace_state(r, d, ev, err);
        break;
    case MT_DAT_REC_CULLED:
        rc = next_culled(r, d, ev, err);
        break;
    default:
        rc = next_live_block(r, d, ev, err);
        break;
    }
    d->index++;
    r->in_rec = rc == MT_OK && --d->left > 0;
    if (rc)
        r->in_rec = false;
    return rc;
}

mt_errc mt_dat_next_batch(mt_dat_reader *r, mt_dat_hev *out, size_t max, size_t *n, mt_err *err)
{
    mt_drec *d = &r->rec;
    *n = 0;
    if (!r->in_rec || d->type != MT_DAT_REC_EVENTS2)
        return MT_OK;
    d->ahead_on = false; /* the runs prefetch for themselves */
    while (*n < max && r->in_rec) {
        size_t got;
        mt_errc rc = mt_dat_run_events2(r, d, &out[*n], max - *n, &got, err);
        *n += got;
        if (rc) {
            r->in_rec = false;
            return rc;
        }
        if (got)
            continue; /* else the next event needs the one-event decoder */
        rc = mt_dat_next_event2(r, d, &out[*n], err);
        d->index++;
        r->in_rec = rc == MT_OK && --d->left > 0;
        if (rc)
            return rc;
        ++*n;
    }
    return MT_OK;
}
