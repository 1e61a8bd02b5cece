/* alloc_rates.c -- per-trace allocation rates from two snapshots (see
 * alloc_rates.h). */
#include "alloc_rates.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

void mt_alloc_rates_init(mt_alloc_rates *r)
{
    memset(r, 0, sizeof *r);
}

void mt_alloc_rates_free(mt_alloc_rates *r)
{
    free(r->per_s);
    mt_alloc_rates_init(r);
}

int mt_alloc_rates_reserve(mt_alloc_rates *r, uint32_t rows)
{
    if (rows <= r->rows)
        return 0;
    if (rows > MT_MODEL_MAX_ID)
        rows = MT_MODEL_MAX_ID;
    float *p = realloc(r->per_s, (size_t)rows * sizeof *p);
    if (!p)
        return -1;
    memset(p + r->rows, 0, (size_t)(rows - r->rows) * sizeof *p);
    r->per_s = p;
    r->rows = rows;
    return 0;
}

static size_t count_of(const mt_snapshot *s)
{
    return s && s->traces ? (size_t)s->slot.ntraces : 0;
}

static bool sorted_by_id(const mt_snapshot *s)
{
    size_t n = count_of(s);
    for (size_t i = 1; i < n; i++)
        if (s->traces[i].id <= s->traces[i - 1].id)
            return false;
    return true;
}

/* prev's trace with this id: at the same index (the usual case), else by
 * binary search when prev is sorted; NULL when absent. */
static const mt_shm_trace *find_prev(const mt_snapshot *prev, bool sorted, size_t i, uint32_t id)
{
    size_t n = count_of(prev);
    if (i < n && prev->traces[i].id == id)
        return &prev->traces[i];
    if (!sorted)
        return NULL;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (prev->traces[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && prev->traces[lo].id == id ? &prev->traces[lo] : NULL;
}

void mt_alloc_rates_update(mt_alloc_rates *r, const mt_snapshot *snap, const mt_snapshot *prev)
{
    if (r->per_s)
        memset(r->per_s, 0, (size_t)r->rows * sizeof *r->per_s);
    r->known = prev && snap->slot.t_ns > prev->slot.t_ns;
    if (!r->known)
        return;
    double dt = (double)(snap->slot.t_ns - prev->slot.t_ns) / 1e9;
    bool sorted = sorted_by_id(prev);
    size_t n = count_of(snap);
    for (size_t i = 0; i < n; i++) {
        const mt_shm_trace *t = &snap->traces[i];
        if (t->id >= r->rows)
            continue;
        const mt_shm_trace *p = find_prev(prev, sorted, i, t->id);
        uint64_t before = p ? p->alloc_count : 0;
        if (t->alloc_count > before)
            r->per_s[t->id] = (float)((double)(t->alloc_count - before) / dt);
    }
}

double mt_alloc_rate(const mt_alloc_rates *r, uint32_t id)
{
    return id < r->rows ? r->per_s[id] : 0.0;
}
