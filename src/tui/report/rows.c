/* rows.c -- sorting traces for reports (see rows.h). */
#include "rows.h"

#include <math.h>
#include <stdlib.h>

#include "leak_score.h"

double mt_trace_growth(const mt_shm_slot *slot, const mt_shm_trace *t)
{
    int i = slot->ckpt_ns[1] ? 1 : slot->ckpt_ns[0] ? 0 : -1;
    if (i < 0 || slot->t_ns <= slot->ckpt_ns[i])
        return 0.0;
    double dt = (double)(slot->t_ns - slot->ckpt_ns[i]) / 1e9;
    double g = ((double)t->live_bytes - (double)t->ckpt_live_bytes[i]) / dt;
    return isfinite(g) ? g : 0.0;
}

static double key_of(const mt_shm_slot *slot, const mt_row *r, mt_sort_key key)
{
    mt_leak_parts leak;
    switch (key) {
    case MT_SORT_COUNT:
        return (double)r->t->live_count;
    case MT_SORT_ALLOCS:
        return (double)r->t->alloc_count;
    case MT_SORT_TEMPORARY:
        return (double)r->t->temporary_count;
    case MT_SORT_GROWTH:
        return r->growth;
    case MT_SORT_LEAK: /* from the segment's checkpoints alone: no viewer history */
        mt_leak_score(slot, r->t, NULL, &leak);
        return leak.score;
    default:
        return (double)r->t->live_bytes;
    }
}

static int cmp_rows(const void *pa, const void *pb)
{
    const mt_row *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    if (a->t->live_bytes != b->t->live_bytes)
        return a->t->live_bytes > b->t->live_bytes ? -1 : 1;
    return (a->t->id > b->t->id) - (a->t->id < b->t->id);
}

mt_row *mt_rows_build(const mt_snapshot *snap, mt_sort_key key, size_t *n)
{
    *n = 0;
    size_t count = snap->traces ? (size_t)snap->slot.ntraces : 0;
    mt_row *rows = count ? malloc(count * sizeof *rows) : NULL;
    if (!rows)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        /* A trace that never allocated (the reserved overflow trace while
         * unused) is not a row: it has nothing to show. */
        if (snap->traces[i].alloc_count == 0)
            continue;
        rows[k].t = &snap->traces[i];
        rows[k].growth = mt_trace_growth(&snap->slot, rows[k].t);
        rows[k].key = key_of(&snap->slot, &rows[k], key);
        k++;
    }
    qsort(rows, k, sizeof *rows, cmp_rows);
    *n = k;
    return rows;
}
