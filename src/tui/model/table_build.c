/* table_build.c -- mt_table_build: the rows of one snapshot, grouped,
 * filtered, with baseline deltas, rates and leak scores, then sorted.
 *
 * Pass 1 filters the traces and either records each as a row (TRACE) or
 * adds it to its group's sums; each row gets its sort codes (only the
 * figure it is sorted by is computed here).  The codes are radix-sorted
 * (sort_rows.c) and each row is then made once, in its final place.  The
 * leak score is computed for every row only when sorting by it; otherwise
 * on demand, for the rows shown (mt_table_leak).  TRACE labels are the
 * namer's own strings, asked for in pass 1 in snapshot order (see
 * mt_namer); group labels are copied and hashed. */
#include "table_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "grow.h"
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
    uint8_t *done = realloc(t->leak_done, n);
    if (done)
        t->leak_done = done;
    const char **labels = realloc(t->labels, n * sizeof *labels);
    if (labels)
        t->labels = labels;
    if (!rows || !keys || !done || !labels)
        return -1;
    t->cap_rows = n;
    return 0;
}

/* Sorted by leak: room for the growth part of every source. */
static int reserve_growth(mt_table *t)
{
    if (t->growth_cap == t->cap_rows)
        return 0;
    mt_leak_trend *g = realloc(t->growth, t->cap_rows * sizeof *g);
    if (!g)
        return -1;
    t->growth = g;
    t->growth_cap = t->cap_rows;
    return 0;
}

static int reserve_groups(mt_table *t, size_t n)
{
    if (n <= t->cap_groups)
        return 0;
    size_t want = mt_grown_cap(t->cap_groups, n, 256);
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

bool mt_table_names_match(const mt_namer *nm, uint32_t id, const char *filter)
{
    static const mt_group_key keys[] = {MT_GROUP_FUNCTION, MT_GROUP_FILE, MT_GROUP_MODULE};
    char buf[24];
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (mt_filter_match(name_of(nm, id, keys[k], buf, sizeof buf), filter))
            return true;
    return false;
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

/* The namer's TRACE string of id (NULL: none); asked last among the calls
 * for id (so that it stays valid until the next build).  *keep: whether the
 * trace passes the filter. */
static const char *trace_label(const mt_namer *nm, uint32_t id, const char *filter, bool *keep)
{
    const char *s = nm && nm->name ? nm->name(nm->ctx, id, MT_GROUP_TRACE) : NULL;
    *keep = true;
    if (mt_filter_empty(filter))
        return s;
    char buf[24];
    if (!s)
        snprintf(buf, sizeof buf, "#%u", (unsigned)id);
    if (mt_filter_match(s ? s : buf, filter))
        return s;
    *keep = mt_table_names_match(nm, id, filter);
    return *keep && s ? nm->name(nm->ctx, id, MT_GROUP_TRACE) : s;
}

/* Pass 1, TRACE grouping: one row per kept trace, its label in
 * t->labels[src].  *by_id: whether the rows are not in ascending id order
 * (the sort must then order ties by id). */
static long collect_traces(mt_table *t, const mt_snapshot *snap, const char *filter,
                           const mt_namer *nm, size_t n, bool *by_id)
{
    size_t k = 0;
    *by_id = false;
    for (size_t i = 0; i < n; i++) {
        const mt_shm_trace *tr = &snap->traces[i];
        if (!tr->alloc_count || unchanged(t, tr))
            continue;
        bool keep;
        t->labels[i] = trace_label(nm, tr->id, filter, &keep);
        if (!keep)
            continue;
        if (k && tr->id <= t->keys[k - 1].id)
            *by_id = true;
        t->keys[k++] = (mt_sort_ent){.id = tr->id, .src = (uint32_t)i};
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
        t->keys[gi] = (mt_sort_ent){.id = t->acc[gi].sum.id, .src = (uint32_t)gi};
    return (long)groups;
}

/* TRACE rows' labels: the namer's strings of pass 1 (not copied); without
 * one, "#id" in the table's arena, pointed to once the arena has stopped
 * growing. */
static int trace_labels(mt_table *t, size_t k)
{
    size_t fallback = 0;
    for (size_t i = 0; i < k; i++) {
        mt_table_row *r = &t->rows[i];
        r->label = t->labels[t->keys[i].src];
        if (r->label)
            continue;
        char buf[24];
        snprintf(buf, sizeof buf, "#%u", (unsigned)r->trace_id);
        if (mt_groups_add(&t->groups, buf) < 0)
            return -1;
        fallback++;
    }
    for (size_t i = 0, j = 0; j < fallback; i++)
        if (!t->rows[i].label)
            t->rows[i].label = mt_groups_label(&t->groups, j++);
    return 0;
}

static void make_plans(mt_table *t, const mt_snapshot *snap)
{
    mt_hist_view times;
    mt_history_view_of(&t->hist, NULL, &times);
    mt_leak_plan_make(&t->plan_hist, &snap->slot, &times);
    mt_leak_plan_make(&t->plan_no, &snap->slot, NULL);
}

long mt_table_build(mt_table *t, const mt_snapshot *snap, mt_group_key g, mt_sort_key key,
                    const char *filter, const mt_namer *namer)
{
    t->nrows = 0;
    t->grouped = g != MT_GROUP_TRACE;
    t->snap = snap;
    size_t n = snap && snap->traces ? (size_t)snap->slot.ntraces : 0;
    if (reserve_rows(t, n ? n : 1) < 0 || mt_groups_begin(&t->groups) < 0)
        return -1;
    bool by_id = true;
    long k = t->grouped ? collect_groups(t, snap, g, filter, namer, n)
                        : collect_traces(t, snap, filter, namer, n, &by_id);
    if (k < 0)
        return -1;
    bool with_leak = key == MT_SORT_LEAK;
    if (snap)
        make_plans(t, snap);
    if (with_leak && reserve_growth(t) < 0)
        return -1;
    mt_table_codes(t, snap, key, (size_t)k);
    /* rows is free scratch until the rows are made: room for the sort. */
    mt_sort_ents(t->keys, (mt_sort_ent *)(void *)t->rows, (size_t)k, key != MT_SORT_LIVE, by_id);
    mt_table_make_rows(t, snap, with_leak, (size_t)k);
    if (t->grouped)
        for (long i = 0; i < k; i++)
            t->rows[i].label = mt_groups_label(&t->groups, t->keys[i].src);
    if (!t->grouped && trace_labels(t, (size_t)k) < 0)
        return -1;
    t->nrows = (size_t)k;
    return k;
}
