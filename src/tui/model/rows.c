/* rows.c -- sorting traces for reports (see rows.h). */
#include "rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak_score.h"

/* The checkpoint the growth rate is measured from: 1 (the last 30-36 s,
 * shorter right after start) when set, else 0 (the previous publish: a
 * target built before the ring, in its first 30 s); -1: none. */
static int growth_ckpt(const mt_shm_slot *slot)
{
    for (int i = 1; i >= 0; i--)
        if (slot->ckpt_ns[i] && slot->ckpt_ns[i] < slot->t_ns)
            return i;
    return -1;
}

double mt_growth_window_s(const mt_shm_slot *slot)
{
    int i = growth_ckpt(slot);
    return i < 0 ? 0.0 : (double)(slot->t_ns - slot->ckpt_ns[i]) / 1e9;
}

double mt_trace_growth(const mt_shm_slot *slot, const mt_shm_trace *t)
{
    int i = growth_ckpt(slot);
    if (i < 0)
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

mt_row *mt_rows_of(const mt_shm_slot *slot, const mt_shm_trace *traces, size_t count,
                   mt_sort_key key, size_t *n)
{
    *n = 0;
    mt_row *rows = count ? malloc(count * sizeof *rows) : NULL;
    if (!rows)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        /* A trace that never allocated (the reserved overflow trace while
         * unused) is not a row: it has nothing to show. */
        if (traces[i].alloc_count == 0)
            continue;
        rows[k].t = &traces[i];
        rows[k].growth = mt_trace_growth(slot, rows[k].t);
        rows[k].key = key_of(slot, &rows[k], key);
        k++;
    }
    qsort(rows, k, sizeof *rows, cmp_rows);
    *n = k;
    return rows;
}

mt_row *mt_rows_build(const mt_snapshot *snap, mt_sort_key key, size_t *n)
{
    size_t count = snap->traces ? (size_t)snap->slot.ntraces : 0;
    return mt_rows_of(&snap->slot, snap->traces, count, key, n);
}

void mt_trace_add(mt_shm_trace *o, const mt_shm_trace *t)
{
    o->alloc_count += t->alloc_count;
    o->alloc_bytes += t->alloc_bytes;
    o->free_count += t->free_count;
    o->free_bytes += t->free_bytes;
    o->live_count += t->live_count;
    o->live_bytes += t->live_bytes;
    o->peak_live_bytes += t->peak_live_bytes; /* an upper bound of the sum's peak */
    o->temporary_count += t->temporary_count;
    o->temporary_bytes += t->temporary_bytes;
    for (unsigned k = 0; k < MT_CKPTS; k++)
        o->ckpt_live_bytes[k] += t->ckpt_live_bytes[k];
    for (unsigned k = 0; k < MT_AGE_BUCKETS; k++)
        o->age_bytes[k] += t->age_bytes[k];
    if (t->oldest_birth_ns < o->oldest_birth_ns)
        o->oldest_birth_ns = t->oldest_birth_ns;
}

void mt_rows_cut_at(const mt_row *rows, size_t n, long top, mt_rows_cut *cut)
{
    memset(cut, 0, sizeof *cut);
    cut->other.oldest_birth_ns = MT_UNKNOWN;
    cut->kept = top > 0 && (size_t)top < n ? (size_t)top : n;
    cut->folded = n - cut->kept;
    for (size_t i = cut->kept; i < n; i++) {
        mt_trace_add(&cut->other, rows[i].t);
        cut->other_row.growth += rows[i].growth;
    }
    cut->other_row.t = &cut->other;
}
