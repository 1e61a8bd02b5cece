/* table.c -- the table model's lifetime, observation of snapshots, the
 * baseline and the history accessors (building rows: table_build.c). */
#include "table_priv.h"

#include <stdlib.h>

mt_table *mt_table_new(void)
{
    mt_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    mt_history_init(&t->hist);
    mt_alloc_rates_init(&t->rates);
    mt_baseline_init(&t->base);
    mt_groups_init(&t->groups);
    return t;
}

void mt_table_free(mt_table *t)
{
    if (!t)
        return;
    mt_history_free(&t->hist);
    mt_alloc_rates_free(&t->rates);
    mt_baseline_clear(&t->base);
    mt_groups_free(&t->groups);
    free(t->rows);
    free(t->keys);
    free(t->leak_done);
    free(t->labels);
    free(t->growth);
    free(t->acc);
    free(t->hsum);
    free(t);
}

/* Rows needed for the ids of snap (capped at MT_MODEL_MAX_ID). */
static uint32_t rows_for(const mt_snapshot *snap)
{
    size_t n = snap->traces ? (size_t)snap->slot.ntraces : 0;
    uint32_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = snap->traces[i].id;
        if (id < MT_MODEL_MAX_ID && id >= rows)
            rows = id + 1;
    }
    return rows;
}

void mt_table_observe(mt_table *t, const mt_snapshot *snap, const mt_snapshot *prev)
{
    if (!t || !snap)
        return;
    uint64_t last = mt_history_last_t(&t->hist);
    if (t->hist.n && snap->slot.t_ns == last)
        return; /* seen already */
    if (t->hist.n && snap->slot.t_ns < last) {
        /* A new process image: its trace ids mean other call sites.  A
         * replay's cursor moved back: the same ids, before the baseline or not. */
        mt_history_reset(&t->hist);
        if (!t->rewinds || snap->slot.t_ns < t->base.t_ns)
            mt_baseline_clear(&t->base);
        prev = NULL;
    }
    uint32_t rows = rows_for(snap);
    /* Short of memory: ids without a row simply have no history or rate. */
    (void)mt_history_reserve(&t->hist, rows);
    (void)mt_alloc_rates_reserve(&t->rates, rows);
    mt_history_add(&t->hist, snap);
    mt_alloc_rates_update(&t->rates, snap, prev);
}

void mt_table_set_rewinds(mt_table *t)
{
    t->rewinds = true;
}

int mt_table_set_baseline(mt_table *t, const mt_snapshot *snap)
{
    return mt_baseline_set(&t->base, snap);
}

void mt_table_clear_baseline(mt_table *t)
{
    mt_baseline_clear(&t->base);
}

bool mt_table_has_baseline(const mt_table *t)
{
    return t->base.set;
}

bool mt_table_rates_known(const mt_table *t)
{
    return t->rates.known;
}

const mt_table_row *mt_table_rows(const mt_table *t, size_t *n)
{
    *n = t->nrows;
    return t->rows;
}

size_t mt_table_history(const mt_table *t, uint32_t trace_id, double *live_bytes, uint64_t *t_ns,
                        size_t max)
{
    mt_hist_view v;
    if (!mt_history_view(&t->hist, trace_id, &v))
        return 0;
    return mt_hist_view_copy(&v, live_bytes, t_ns, max);
}

size_t mt_table_row_history(const mt_table *t, size_t row, double *live_bytes, uint64_t *t_ns,
                            size_t max)
{
    if (row >= t->nrows)
        return 0;
    if (!t->grouped)
        return mt_table_history(t, t->rows[row].trace_id, live_bytes, t_ns, max);
    if (!t->hist.n || !t->hsum)
        return 0;
    mt_hist_view v;
    mt_history_view_of(&t->hist, t->hsum + (size_t)t->keys[row].src * MT_HISTORY_POINTS, &v);
    return mt_hist_view_copy(&v, live_bytes, t_ns, max);
}
