/* leak_score.c -- the leak suspicion score (see leak_score.h and
 * docs/leak-score.md). */
#include "leak_score.h"

#include <math.h>

#include "table_priv.h"

/* Evidence from consecutive segments of a series of (time, live bytes)
 * points; every segment counts 1. */
typedef struct {
    int up, down, all;
    bool have;  /* a previous point exists */
    uint64_t t; /* previous point */
    float v;
} segs;

static void point(segs *s, uint64_t t, double v)
{
    float f = (float)v; /* history is kept in floats: compare like with like */
    if (s->have) {
        s->all++;
        s->up += f > s->v;
        s->down += f < s->v;
    }
    s->have = true;
    s->t = t;
    s->v = f;
}

/* Checkpoints older than `before`, oldest first, each strictly newer than the
 * one taken before it. */
static void checkpoint_points(segs *s, const mt_shm_slot *slot, const mt_shm_trace *tr,
                              uint64_t before)
{
    for (int i = MT_CKPTS - 1; i >= 0; i--) {
        uint64_t ck = slot->ckpt_ns[i];
        if (!ck || ck >= before || (s->have && ck <= s->t))
            continue;
        point(s, ck, (double)tr->ckpt_live_bytes[i]);
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
static void history_points(segs *s, const mt_hist_view *h, unsigned m)
{
    unsigned stride = (m - 1 + MT_LEAK_HIST_SEGMENTS - 1) / MT_LEAK_HIST_SEGMENTS;
    if (!stride)
        stride = 1;
    for (unsigned k = (m - 1) % stride; k < m; k += stride) {
        unsigned pos = (h->first + k) % MT_HISTORY_POINTS;
        if (!s->have || h->t[pos] > s->t)
            point(s, h->t[pos], h->v[pos]);
    }
}

static double growth_part(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_hist_view *h)
{
    segs s = {0};
    unsigned m = h ? history_usable(h, slot->t_ns) : 0;
    uint64_t h0 = m ? h->t[h->first] : slot->t_ns;
    checkpoint_points(&s, slot, tr, h0);
    if (m)
        history_points(&s, h, m);
    if (!s.have || slot->t_ns > s.t)
        point(&s, slot->t_ns, (double)tr->live_bytes);
    int net = s.up - s.down;
    return net > 0 ? net / (s.all + MT_LEAK_PRIOR) : 0.0;
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

void mt_leak_compute(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_hist_view *hist,
                     mt_leak_parts *out)
{
    out->growth = unit(growth_part(slot, tr, hist));
    out->retention = unit(retention_part(tr));
    out->aging = unit(aging_part(slot, tr));
    out->score = 100.0 * out->growth * (0.5 + 0.25 * out->retention + 0.25 * out->aging);
}

void mt_leak_score(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_table *t,
                   mt_leak_parts *out)
{
    mt_hist_view h;
    bool have = t && mt_history_view(&t->hist, tr->id, &h);
    mt_leak_compute(slot, tr, have ? &h : NULL, out);
}
