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
 * prefetched from the raw array (no second decoding). */
#include "dat_reader_apply.h"

#include <string.h>

#define RUN 256u
#define RUN_AHEAD 16u

/* The tag checks of the one-event decoder (check_tag) as a table: bit 0,
 * the tag is valid in every version; bit 1, from version 4 on (an ALLOC's
 * NEXT_TRACE without SAME_TRACE).  A lookup instead of the branches. */
#define TAG_FLAGS(x) (((x) >> MT_DAT_EV_FLAGS_SHIFT) & 7)
#define TAG_ALLOC_OK(x)                                                                            \
    (TAG_FLAGS(x) == 0 ? 3 : TAG_FLAGS(x) == 1 && !((x)&MT_DAT_EV_SAME_TRACE) ? 2 : 0)
#define TAG_OK(x)                                                                                  \
    (((x)&3) == MT_DAT_EV_ALLOC                                    ? TAG_ALLOC_OK(x)               \
     : ((x)&3) == MT_DAT_EV_FREE                                   ? 3                             \
     : ((x)&3) == MT_DAT_EV_FREE_REF && !((x)&MT_DAT_EV_SAME_SIZE) ? 3                             \
                                                                   : 0)
#define TAG_OK4(x) TAG_OK(x), TAG_OK((x) + 1), TAG_OK((x) + 2), TAG_OK((x) + 3)
#define TAG_OK16(x) TAG_OK4(x), TAG_OK4((x) + 4), TAG_OK4((x) + 8), TAG_OK4((x) + 12)
#define TAG_OK64(x) TAG_OK16(x), TAG_OK16((x) + 16), TAG_OK16((x) + 32), TAG_OK16((x) + 48)

static const uint8_t tag_ok[256] = {TAG_OK64(0), TAG_OK64(64), TAG_OK64(128), TAG_OK64(192)};

_Static_assert(MT_DAT_EV_NEXT_TRACE == 1u << MT_DAT_EV_FLAGS_SHIFT, "NEXT_TRACE: flags 1");

/* The columns of one event into *w; false if any check fails (the
 * cursors are then part-way through the event). */
static inline __attribute__((always_inline)) bool scan_one(mt_dcur (*col)[2], unsigned tag,
                                                           uint64_t ndefs, unsigned valid,
                                                           uint64_t *t, bool *have, uint32_t *guess,
                                                           const mt_dctx *c, mt_draw *w)
{
    uint64_t dt = 0, x = 0, age = 0;
    if (!(tag_ok[tag] & valid))
        return false;
    if (!(tag & MT_DAT_EV_SAME_TIME) &&
        !mt_dsplit_v(&col[MT_DCOL_TIMES][0], &col[MT_DCOL_TIMES][1], &dt))
        return false;
    if (dt > UINT64_MAX - *t)
        return false;
    *t += dt;
    if (tag & MT_DAT_EV_SAME_TRACE) {
        if (!*have)
            return false;
    } else if (mt_dis_next_trace(tag)) {
        *guess = c ? mt_dctx_guess_next(c, *guess) : UINT32_MAX;
    } else {
        if (!mt_dsplit_v(&col[MT_DCOL_TRACES][0], &col[MT_DCOL_TRACES][1], &x) || x >= ndefs)
            return false;
        *guess = (uint32_t)x;
        *have = true;
    }
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    if (kind == MT_DAT_EV_FREE_REF) {
        if (!mt_dsplit_v(&col[MT_DCOL_REFS][0], &col[MT_DCOL_REFS][1], &x))
            return false;
    } else {
        if (!(tag & MT_DAT_EV_SAME_SIZE) &&
            !mt_dsplit_v(&col[MT_DCOL_SIZES][0], &col[MT_DCOL_SIZES][1], &x))
            return false;
        uint64_t ms = *t / 1000000u;
        if (kind == MT_DAT_EV_FREE &&
            (!mt_dsplit_v(&col[MT_DCOL_AGES][0], &col[MT_DCOL_AGES][1], &age) || age > ms))
            return false;
        w->birth = ms - age;
    }
    w->t = *t;
    w->v = x;
    w->trace = *guess;
    w->tag = tag;
    return true;
}

/* See dat_reader_events2.h. */
size_t mt_dat_scan_events2(const mt_dat_reader *r, mt_drec *d, const mt_dctx *c, mt_draw *w,
                           size_t k)
{
    mt_dcur col[MT_DCOL_N][2];
    memcpy(col, d->col, sizeof col);
    uint64_t t = d->t, ndefs = r->ndefs;
    bool have = d->have_trace;
    unsigned valid = r->info.version >= 4 ? 2 : 1; /* tag_ok's bit */
    uint32_t guess = d->trace;
    size_t i = 0;
    for (; i < k; i++)
        if (!scan_one(col, *col[MT_DCOL_TAGS][0].p++, ndefs, valid, &t, &have, &guess, c, &w[i]))
            return i;
    memcpy(d->col, col, sizeof col);
    d->t = t;
    d->have_trace = have;
    return k;
}

size_t mt_dat_run_room(const mt_drec *d, size_t max)
{
    const mt_dcur *tags = &d->col[MT_DCOL_TAGS][0];
    size_t k = max < RUN ? max : RUN, left = (size_t)(tags->end - tags->p);
    if (d->left < 2 || left < 2)
        return 0;
    if (k > d->left - 1)
        k = d->left - 1; /* the record's last event: the one-event decoder's */
    if (k > left - 1)
        k = left - 1; /* the tags left: d->left as well, checked rather than assumed */
    return k;
}

mt_errc mt_dat_run_events2(mt_dat_reader *r, mt_drec *d, mt_dat_hev *out, size_t max, size_t *n,
                           mt_err *err)
{
    size_t k = mt_dat_run_room(d, max);
    *n = 0;
    if (!k)
        return MT_OK;
    mt_draw w[RUN];
    size_t m = mt_dat_scan_events2(r, d, &r->ctx, w, k);
    if (m < k && m > 0)
        mt_dat_scan_events2(r, d, &r->ctx, w, m); /* to the start of the event that failed */
    for (size_t i = 0; i < m && i < RUN_AHEAD; i++)
        mt_dctx_prefetch_ev(&r->ctx, w[i].tag, w[i].trace, w[i].v);
    mt_errc rc = MT_OK;
    mt_dcarry c = {d->trace, d->prev_alloc};
    size_t i = 0;
    for (; i < m; i++) {
        if (i + RUN_AHEAD < m)
            mt_dctx_prefetch_ev(&r->ctx, w[i + RUN_AHEAD].tag, w[i + RUN_AHEAD].trace,
                                w[i + RUN_AHEAD].v);
        if ((rc = apply(r, r->records, &c, d->tid, &w[i], &out[i], err)) != MT_OK)
            break;
    }
    d->trace = c.trace;
    d->prev_alloc = c.prev_alloc;
    if (i > 0 && w[i - 1].t > r->t_last)
        r->t_last = w[i - 1].t;
    *n = i;
    d->index += i + (rc != MT_OK);
    d->left -= i + (rc != MT_OK);
    return rc;
}
