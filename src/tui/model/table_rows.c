/* table_rows.c -- one row of the table from its source (a trace of the
 * snapshot, or a group's sums): its sort codes, its figures, and its leak
 * score, computed while building when sorting by it, else on demand
 * (mt_table_leak). */
#include "table_priv.h"

#include <math.h>
#include <string.h>

#include "rows.h"

/* Where a row's figures come from: a trace of snap, or a group's sums. */
typedef struct row_src {
    const mt_shm_trace *s;
    const mt_base_fig *b; /* baseline figures, NULL: none */
    double allocs_ps;
    uint32_t ntraces;
    bool have_hist;
    mt_hist_view hv;
} row_src;

/* Whether the viewer's history may score a row.  Not in a replay: there it
 * holds the positions the cursor visited, so a score from it would change
 * with the path to a moment; the checkpoints alone give the same score at
 * the same cursor, the export's. */
static bool scores_by_history(const mt_table *t)
{
    return t->hist.n > 0 && !t->rewinds;
}

static void source_of(const mt_table *t, const mt_snapshot *snap, const mt_sort_ent *e, row_src *o)
{
    if (t->grouped) {
        const mt_group_acc *a = &t->acc[e->src];
        o->s = &a->sum;
        o->b = t->base.set ? &a->base : NULL;
        o->ntraces = a->ntraces;
        o->allocs_ps = a->allocs_ps;
        o->have_hist = scores_by_history(t);
        if (o->have_hist)
            mt_history_view_of(&t->hist, t->hsum + (size_t)e->src * MT_HISTORY_POINTS, &o->hv);
    } else {
        o->s = &snap->traces[e->src];
        o->b = mt_baseline_get(&t->base, o->s->id); /* NULL: new since the baseline */
        o->ntraces = 1;
        o->allocs_ps = mt_alloc_rate(&t->rates, o->s->id);
        o->have_hist = scores_by_history(t) && mt_history_view(&t->hist, o->s->id, &o->hv);
    }
}

static void leak_of(const mt_table *t, const mt_snapshot *snap, const row_src *o,
                    mt_leak_parts *out)
{
    if (o->have_hist)
        mt_leak_apply(&t->plan_hist, &snap->slot, o->s, &o->hv, out);
    else
        mt_leak_apply(&t->plan_no, &snap->slot, o->s, NULL, out);
}

static const mt_base_fig zero_fig;

/* The sort codes of e: its key (as mt_table_row would hold it) and live
 * bytes.  Sorted by leak: the growth part is kept in t->growth[e->src]. */
static void codes_of(mt_table *t, const mt_snapshot *snap, mt_sort_key key, mt_sort_ent *e)
{
    row_src o;
    source_of(t, snap, e, &o);
    const mt_shm_trace *s = o.s;
    const mt_base_fig *b = o.b ? o.b : &zero_fig;
    double live = (double)s->live_bytes - (double)b->live_bytes, v;
    mt_leak_parts leak;
    switch (key) {
    case MT_SORT_COUNT:
        v = (double)s->live_count - (double)b->live_count;
        break;
    case MT_SORT_ALLOCS:
        /* the viewer's column is the rate, not the total; without rates (a
         * replay, the first snapshot) the count, not an order by live bytes */
        v = t->rates.known ? o.allocs_ps : (double)s->alloc_count - (double)b->alloc_count;
        break;
    case MT_SORT_TEMPORARY:
        v = (double)s->temporary_count - (double)b->temporary_count;
        break;
    case MT_SORT_GROWTH:
        v = mt_trace_growth(&snap->slot, s);
        break;
    case MT_SORT_LEAK:
        t->growth[e->src] = o.have_hist ? mt_leak_growth(&t->plan_hist, &snap->slot, s, &o.hv)
                                        : mt_leak_growth(&t->plan_no, &snap->slot, s, NULL);
        mt_leak_finish(t->growth[e->src], &snap->slot, s, &leak);
        v = leak.score;
        break;
    default:
        v = live;
        break;
    }
    e->key = mt_sort_code(isfinite(v) ? v : 0.0);
    e->tie = key == MT_SORT_LIVE ? e->key : mt_sort_code(live);
}

void mt_table_codes(mt_table *t, const mt_snapshot *snap, mt_sort_key key, size_t k)
{
    for (size_t i = 0; i < k; i++)
        codes_of(t, snap, key, &t->keys[i]);
}

/* The figures of s, less the baseline b (NULL: none). */
static void fill_figures(mt_table_row *r, const mt_shm_trace *s, const mt_base_fig *b)
{
    if (!b)
        b = &zero_fig;
    r->live_bytes = (double)s->live_bytes - (double)b->live_bytes;
    r->live_count = (double)s->live_count - (double)b->live_count;
    r->alloc_count = (double)s->alloc_count - (double)b->alloc_count;
    r->alloc_bytes = (double)s->alloc_bytes - (double)b->alloc_bytes;
    r->free_count = (double)s->free_count - (double)b->free_count;
    r->temporary_count = (double)s->temporary_count - (double)b->temporary_count;
    /* of the allocations, as the tree and the header count it (a trace
     * that keeps most of its blocks is not called all temporary) */
    r->temp_share = mt_temp_share(r->temporary_count, r->alloc_count);
}

/* Row `e` from its source; its leak score from t->growth when with_leak,
 * else zero (computed on demand). */
static void make_row(const mt_table *t, const mt_snapshot *snap, const mt_sort_ent *e,
                     bool with_leak, mt_table_row *r)
{
    row_src o;
    source_of(t, snap, e, &o);
    r->trace_id = e->id;
    r->ntraces = o.ntraces;
    r->allocs_ps = o.allocs_ps;
    r->label = NULL;
    fill_figures(r, o.s, o.b);
    r->growth_bps = mt_trace_growth(&snap->slot, o.s);
    if (with_leak)
        mt_leak_finish(t->growth[e->src], &snap->slot, o.s, &r->leak);
    else
        r->leak = (mt_leak_parts){0, 0, 0, 0, 0, 0};
}

/* The rows come from the traces in sorted order, i.e. at random: ask for the
 * trace a few rows ahead early. */
#define PREFETCH_AHEAD 8

void mt_table_make_rows(mt_table *t, const mt_snapshot *snap, bool with_leak, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (!t->grouped && i + PREFETCH_AHEAD < k) {
            const char *p = (const char *)&snap->traces[t->keys[i + PREFETCH_AHEAD].src];
            __builtin_prefetch(p);
            __builtin_prefetch(p + 64);
            __builtin_prefetch(p + 128);
        }
        make_row(t, snap, &t->keys[i], with_leak, &t->rows[i]);
    }
    memset(t->leak_done, with_leak, k);
}

const mt_leak_parts *mt_table_leak(mt_table *t, size_t row)
{
    if (!t || row >= t->nrows)
        return NULL;
    mt_table_row *r = &t->rows[row];
    if (!t->leak_done[row]) {
        row_src o;
        source_of(t, t->snap, &t->keys[row], &o);
        leak_of(t, t->snap, &o, &r->leak);
        t->leak_done[row] = 1;
    }
    return &r->leak;
}
