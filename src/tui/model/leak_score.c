/* leak_score.c -- the leak suspicion score (see leak_score.h and
 * docs/leak-score.md). */
#include "leak_score.h"

#include <math.h>

#include "table_priv.h"

/* The plan is built point by point: a point is kept when it is newer than
 * the one kept before it (times only; see mt_leak_plan in leak_score.h). */
typedef struct {
    mt_leak_plan *p;
    bool have;  /* a previous point exists */
    uint64_t t; /* its time */
} planner;

static void plan_point(planner *pl, uint64_t t, int src)
{
    pl->p->src[pl->p->n++] = (int8_t)src;
    pl->have = true;
    pl->t = t;
}

/* Checkpoints older than `before`, oldest first, each strictly newer than the
 * one taken before it. */
static void checkpoint_points(planner *pl, const mt_shm_slot *slot, uint64_t before)
{
    for (int i = MT_CKPTS - 1; i >= 0; i--) {
        uint64_t ck = slot->ckpt_ns[i];
        if (!ck || ck >= before || (pl->have && ck <= pl->t))
            continue;
        plan_point(pl, ck, MT_LEAK_CKPT(i));
    }
}

/* Points of the history no newer than now (a prefix: times increase). */
static unsigned history_usable(const mt_hist_view *h, uint64_t now)
{
    unsigned m = 0;
    while (m < h->n && h->t[(h->first + m) % MT_HISTORY_POINTS] <= now)
        m++;
    return m;
}

/* The history's points thinned to at most MT_LEAK_HIST_SEGMENTS segments of
 * equal length, ending at its newest point. */
static void history_points(planner *pl, const mt_hist_view *h, unsigned m)
{
    unsigned stride = (m - 1 + MT_LEAK_HIST_SEGMENTS - 1) / MT_LEAK_HIST_SEGMENTS;
    if (!stride)
        stride = 1;
    for (unsigned k = (m - 1) % stride; k < m; k += stride) {
        unsigned pos = (h->first + k) % MT_HISTORY_POINTS;
        if (!pl->have || h->t[pos] > pl->t)
            plan_point(pl, h->t[pos], (int)pos);
    }
}

void mt_leak_plan_make(mt_leak_plan *p, const mt_shm_slot *slot, const mt_hist_view *h)
{
    planner pl = {p, false, 0};
    p->n = 0;
    unsigned m = h ? history_usable(h, slot->t_ns) : 0;
    uint64_t h0 = m ? h->t[h->first] : slot->t_ns;
    checkpoint_points(&pl, slot, h0);
    if (m)
        history_points(&pl, h, m);
    if (!pl.have || slot->t_ns > pl.t)
        plan_point(&pl, slot->t_ns, MT_LEAK_NOW);
}

/* A point's value; history is kept in floats: compare like with like. */
static float value_of(int src, const mt_shm_trace *tr, const mt_hist_view *h)
{
    if (src >= 0)
        return h->v[src];
    if (src == MT_LEAK_NOW)
        return (float)(double)tr->live_bytes;
    return (float)(double)tr->ckpt_live_bytes[MT_LEAK_CKPT(0) - src];
}

/* A point's time (the same sources as value_of). */
static uint64_t time_of(int src, const mt_shm_slot *slot, const mt_hist_view *h)
{
    if (src >= 0)
        return h->t[src];
    if (src == MT_LEAK_NOW)
        return slot->t_ns;
    return slot->ckpt_ns[MT_LEAK_CKPT(0) - src];
}

/* Bytes retained per second from the plan's first point to its last. */
static double rate_part(const mt_leak_plan *p, const mt_shm_slot *slot, const mt_shm_trace *tr,
                        const mt_hist_view *h)
{
    if (p->n < 2)
        return 0.0;
    uint64_t t0 = time_of(p->src[0], slot, h), t1 = time_of(p->src[p->n - 1], slot, h);
    if (t1 <= t0)
        return 0.0;
    double dv = (double)value_of(p->src[p->n - 1], tr, h) - (double)value_of(p->src[0], tr, h);
    double r = dv / ((double)(t1 - t0) / 1e9);
    return isfinite(r) && r > 0 ? r : 0.0;
}

/* Every segment between consecutive points counts 1: up, down or flat. */
static double growth_part(const mt_leak_plan *p, const mt_shm_trace *tr, const mt_hist_view *h)
{
    int up = 0, down = 0;
    float prev = value_of(p->src[0], tr, h);
    for (unsigned k = 1; k < p->n; k++) {
        float f = value_of(p->src[k], tr, h);
        up += f > prev;
        down += f < prev;
        prev = f;
    }
    int net = up - down;
    return net > 0 ? net / ((double)(p->n - 1) + MT_LEAK_PRIOR) : 0.0;
}

static double retention_part(const mt_shm_trace *tr)
{
    if (!tr->alloc_count || tr->free_count >= tr->alloc_count)
        return 0.0;
    return 1.0 - (double)tr->free_count / (double)tr->alloc_count;
}

static double aging_part(const mt_shm_slot *slot, const mt_shm_trace *tr)
{
    if (!slot->age_scan_ns)
        return 0.0;
    double all = 0, old = 0;
    for (unsigned b = 0; b < MT_AGE_BUCKETS; b++) {
        double v = (double)tr->age_bytes[b];
        all += v;
        old += b == 0 ? 0.0 : b == 1 ? 0.5 * v : v;
    }
    return all > 0 ? old / all : 0.0;
}

static double unit(double x)
{
    return isfinite(x) ? (x < 0 ? 0 : x > 1 ? 1 : x) : 0.0;
}

mt_leak_trend mt_leak_growth(const mt_leak_plan *p, const mt_shm_slot *slot, const mt_shm_trace *tr,
                             const mt_hist_view *hist)
{
    return (mt_leak_trend){unit(growth_part(p, tr, hist)), rate_part(p, slot, tr, hist)};
}

/* 0..1: log10(1 + bytes per second) / 9, so 1 GB/s is 1. */
static double magnitude_part(double rate)
{
    return unit(log10(1.0 + rate) / 9.0);
}

void mt_leak_finish(mt_leak_trend trend, const mt_shm_slot *slot, const mt_shm_trace *tr,
                    mt_leak_parts *out)
{
    out->growth = trend.growth;
    out->rate = trend.rate;
    out->magnitude = magnitude_part(trend.rate);
    out->retention = unit(retention_part(tr));
    out->aging = unit(aging_part(slot, tr));
    out->score = 100.0 * out->growth * (0.3 + 0.5 * out->magnitude + 0.2 * out->aging);
}

void mt_leak_apply(const mt_leak_plan *p, const mt_shm_slot *slot, const mt_shm_trace *tr,
                   const mt_hist_view *hist, mt_leak_parts *out)
{
    mt_leak_finish(mt_leak_growth(p, slot, tr, hist), slot, tr, out);
}

void mt_leak_compute(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_hist_view *hist,
                     mt_leak_parts *out)
{
    mt_leak_plan p;
    mt_leak_plan_make(&p, slot, hist);
    mt_leak_apply(&p, slot, tr, hist, out);
}

void mt_leak_score(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_table *t,
                   mt_leak_parts *out)
{
    mt_hist_view h;
    /* a replay's history is the cursor's path (table_rows.c) */
    bool have = t && !t->rewinds && mt_history_view(&t->hist, tr->id, &h);
    mt_leak_compute(slot, tr, have ? &h : NULL, out);
}
