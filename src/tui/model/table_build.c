/* table_build.c -- mt_table_build: the rows of one snapshot, grouped,
 * filtered, with baseline deltas, rates and leak scores, then sorted.
 *
 * Pass 1 names each trace (the label is copied into the table's arena at
 * once, since the namer may reuse its buffer), filters it, and either
 * records it as a row (TRACE) or adds it to its group's sums; each row gets
 * a sort key.  Each row is then computed once, in staging order; the keys
 * are sorted (O(n log n)) and the rows permuted into that order in place. */
#include "table_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "rows.h"

static int reserve_rows(mt_table *t, size_t n)
{
    if (n <= t->cap_rows)
        return 0;
    mt_table_row *rows = realloc(t->rows, n * sizeof *rows);
    if (rows)
        t->rows = rows;
    mt_sort_ent *keys = realloc(t->keys, n * sizeof *keys);
    if (keys)
        t->keys = keys;
    if (!rows || !keys)
        return -1;
    t->cap_rows = n;
    return 0;
}

static int reserve_groups(mt_table *t, size_t n)
{
    if (n <= t->cap_groups)
        return 0;
    size_t want = t->cap_groups ? t->cap_groups * 2 : 256;
    while (want < n)
        want *= 2;
    mt_group_acc *acc = realloc(t->acc, want * sizeof *acc);
    if (acc)
        t->acc = acc;
    float *hsum = realloc(t->hsum, want * MT_HISTORY_POINTS * sizeof *hsum);
    if (hsum)
        t->hsum = hsum;
    if (!acc || !hsum)
        return -1;
    t->cap_groups = want;
    return 0;
}

static const char *name_of(const mt_namer *nm, uint32_t id, mt_group_key g, char *buf, size_t size)
{
    const char *s = nm && nm->name ? nm->name(nm->ctx, id, g) : NULL;
    if (s)
        return s;
    snprintf(buf, size, "#%u", (unsigned)id);
    return buf;
}

/* TRACE grouping also matches the function, file and module names. */
static bool other_names_match(const mt_namer *nm, uint32_t id, const char *filter)
{
    static const mt_group_key keys[] = {MT_GROUP_FUNCTION, MT_GROUP_FILE, MT_GROUP_MODULE};
    char buf[24];
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (mt_filter_match(name_of(nm, id, keys[k], buf, sizeof buf), filter))
            return true;
    return false;
}

static double key_of(const mt_table_row *r, mt_sort_key key)
{
    double v;
    switch (key) {
    case MT_SORT_COUNT:
        v = r->live_count;
        break;
    case MT_SORT_ALLOCS:
        v = r->allocs_ps; /* the viewer's column is the rate, not the total */
        break;
    case MT_SORT_TEMPORARY:
        v = r->temporary_count;
        break;
    case MT_SORT_GROWTH:
        v = r->growth_bps;
        break;
    case MT_SORT_LEAK:
        v = r->leak.score;
        break;
    default:
        v = r->live_bytes;
        break;
    }
    return isfinite(v) ? v : 0.0;
}

/* The figures of s, less the baseline b (NULL: none). */
static void fill_figures(mt_table_row *r, const mt_shm_trace *s, const mt_base_fig *b)
{
    static const mt_base_fig zero;
    if (!b)
        b = &zero;
    r->live_bytes = (double)s->live_bytes - (double)b->live_bytes;
    r->live_count = (double)s->live_count - (double)b->live_count;
    r->alloc_count = (double)s->alloc_count - (double)b->alloc_count;
    r->alloc_bytes = (double)s->alloc_bytes - (double)b->alloc_bytes;
    r->free_count = (double)s->free_count - (double)b->free_count;
    r->temporary_count = (double)s->temporary_count - (double)b->temporary_count;
    double share = r->free_count > 0 ? r->temporary_count / r->free_count : 0.0;
    r->temp_share = share > 1 ? 1 : share > 0 ? share : 0.0;
}

/* Row `e` from its source: a trace of snap, or a group's sums. */
static void make_row(const mt_table *t, const mt_snapshot *snap, const mt_sort_ent *e,
                     mt_table_row *r)
{
    const mt_shm_trace *s;
    const mt_base_fig *b;
    mt_hist_view hv;
    bool have_hist;
    if (t->grouped) {
        const mt_group_acc *a = &t->acc[e->src];
        s = &a->sum;
        b = t->base.set ? &a->base : NULL;
        r->ntraces = a->ntraces;
        r->allocs_ps = a->allocs_ps;
        have_hist = t->hist.n > 0;
        if (have_hist)
            mt_history_view_of(&t->hist, t->hsum + (size_t)e->src * MT_HISTORY_POINTS, &hv);
    } else {
        s = &snap->traces[e->src];
        b = mt_baseline_get(&t->base, s->id); /* NULL: new since the baseline */
        r->ntraces = 1;
        r->allocs_ps = mt_alloc_rate(&t->rates, s->id);
        have_hist = mt_history_view(&t->hist, s->id, &hv);
    }
    r->trace_id = e->id;
    r->label = NULL;
    fill_figures(r, s, b);
    r->growth_bps = mt_trace_growth(&snap->slot, s);
    mt_leak_compute(&snap->slot, s, have_hist ? &hv : NULL, &r->leak);
}

static void add_counters(mt_shm_trace *sum, const mt_shm_trace *tr)
{
    sum->alloc_count += tr->alloc_count;
    sum->alloc_bytes += tr->alloc_bytes;
    sum->free_count += tr->free_count;
    sum->free_bytes += tr->free_bytes;
    sum->live_count += tr->live_count;
    sum->live_bytes += tr->live_bytes;
    sum->temporary_count += tr->temporary_count;
    sum->temporary_bytes += tr->temporary_bytes;
    for (unsigned k = 0; k < MT_CKPTS; k++)
        sum->ckpt_live_bytes[k] += tr->ckpt_live_bytes[k];
    for (unsigned k = 0; k < MT_AGE_BUCKETS; k++)
        sum->age_bytes[k] += tr->age_bytes[k];
    if (tr->peak_live_bytes > sum->peak_live_bytes)
        sum->peak_live_bytes = tr->peak_live_bytes; /* not additive: the largest member's */
    if (tr->oldest_birth_ns < sum->oldest_birth_ns)
        sum->oldest_birth_ns = tr->oldest_birth_ns;
}

static void group_start(mt_table *t, size_t g)
{
    memset(&t->acc[g], 0, sizeof t->acc[g]);
    t->acc[g].sum.oldest_birth_ns = MT_UNKNOWN;
    memset(t->hsum + g * MT_HISTORY_POINTS, 0, MT_HISTORY_POINTS * sizeof *t->hsum);
}

static void group_add(mt_table *t, size_t g, const mt_shm_trace *tr)
{
    mt_group_acc *a = &t->acc[g];
    if (!a->ntraces || tr->live_bytes > a->best_live ||
        (tr->live_bytes == a->best_live && tr->id < a->sum.id)) {
        a->sum.id = tr->id;
        a->best_live = tr->live_bytes;
    }
    add_counters(&a->sum, tr);
    mt_baseline_add(&t->base, tr->id, &a->base);
    a->allocs_ps += mt_alloc_rate(&t->rates, tr->id);
    a->ntraces++;
    if (t->hist.n)
        mt_history_accumulate(&t->hist, tr->id, t->hsum + g * MT_HISTORY_POINTS);
}

/* With a baseline, a trace that neither allocated nor freed since is not a
 * row: the question is "what changed?". */
static bool unchanged(const mt_table *t, const mt_shm_trace *tr)
{
    const mt_base_fig *b = t->base.set ? mt_baseline_get(&t->base, tr->id) : NULL;
    return b && b->alloc_count == tr->alloc_count && b->free_count == tr->free_count;
}

/* Pass 1, TRACE grouping: one row per kept trace. */
static long collect_traces(mt_table *t, const mt_snapshot *snap, const char *filter,
                           const mt_namer *nm, size_t n)
{
    size_t k = 0;
    char buf[24];
    for (size_t i = 0; i < n; i++) {
        const mt_shm_trace *tr = &snap->traces[i];
        if (!tr->alloc_count || unchanged(t, tr))
            continue;
        long lab = mt_groups_add(&t->groups, name_of(nm, tr->id, MT_GROUP_TRACE, buf, sizeof buf));
        if (lab < 0)
            return -1;
        if (!mt_filter_match(mt_groups_label(&t->groups, (size_t)lab), filter) &&
            !other_names_match(nm, tr->id, filter)) {
            mt_groups_drop_last(&t->groups);
            continue;
        }
        mt_sort_ent *e = &t->keys[k++];
        *e = (mt_sort_ent){.id = tr->id, .label = (uint32_t)lab, .src = (uint32_t)i};
    }
    return (long)k;
}

/* Pass 1, grouped: sums per label. */
static long collect_groups(mt_table *t, const mt_snapshot *snap, mt_group_key g, const char *filter,
                           const mt_namer *nm, size_t n)
{
    char buf[24];
    for (size_t i = 0; i < n; i++) {
        const mt_shm_trace *tr = &snap->traces[i];
        if (!tr->alloc_count || unchanged(t, tr))
            continue;
        const char *label = name_of(nm, tr->id, g, buf, sizeof buf);
        if (!mt_filter_match(label, filter))
            continue;
        int added;
        long gi = mt_groups_find_or_add(&t->groups, label, &added);
        if (gi < 0 || reserve_groups(t, (size_t)gi + 1) < 0)
            return -1;
        if (added)
            group_start(t, (size_t)gi);
        group_add(t, (size_t)gi, tr);
    }
    size_t groups = t->groups.nrows;
    for (size_t gi = 0; gi < groups; gi++)
        t->keys[gi] =
            (mt_sort_ent){.id = t->acc[gi].sum.id, .label = (uint32_t)gi, .src = (uint32_t)gi};
    return (long)groups;
}

static int cmp_ents(const void *pa, const void *pb)
{
    const mt_sort_ent *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    if (a->live != b->live)
        return a->live > b->live ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* rows[i] = rows[keys[i].row] for every i, in place (cycle by cycle; a
 * moved row's key gets row = its own index). */
static void permute_rows(mt_table *t, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (t->keys[i].row == i)
            continue;
        mt_table_row tmp = t->rows[i];
        size_t j = i;
        for (;;) {
            size_t from = t->keys[j].row;
            t->keys[j].row = (uint32_t)j;
            if (from == i) {
                t->rows[j] = tmp;
                break;
            }
            t->rows[j] = t->rows[from];
            j = from;
        }
    }
}

long mt_table_build(mt_table *t, const mt_snapshot *snap, mt_group_key g, mt_sort_key key,
                    const char *filter, const mt_namer *namer)
{
    t->nrows = 0;
    t->grouped = g != MT_GROUP_TRACE;
    size_t n = snap && snap->traces ? (size_t)snap->slot.ntraces : 0;
    if (reserve_rows(t, n ? n : 1) < 0 || mt_groups_begin(&t->groups, n, t->grouped) < 0)
        return -1;
    long k = t->grouped ? collect_groups(t, snap, g, filter, namer, n)
                        : collect_traces(t, snap, filter, namer, n);
    if (k < 0)
        return -1;
    for (long i = 0; i < k; i++) {
        mt_sort_ent *e = &t->keys[i];
        make_row(t, snap, e, &t->rows[i]);
        t->rows[i].label = mt_groups_label(&t->groups, e->label);
        e->key = key_of(&t->rows[i], key);
        e->live = t->rows[i].live_bytes;
        e->row = (uint32_t)i;
    }
    qsort(t->keys, (size_t)k, sizeof *t->keys, cmp_ents);
    permute_rows(t, (size_t)k);
    t->nrows = (size_t)k;
    return k;
}
