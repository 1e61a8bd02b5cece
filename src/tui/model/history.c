/* history.c -- per-trace ring of live bytes at the observed snapshots (see
 * history.h). */
#include "history.h"

#include <stdlib.h>
#include <string.h>

void mt_history_init(mt_history *h)
{
    memset(h, 0, sizeof *h);
}

void mt_history_free(mt_history *h)
{
    free(h->v);
    mt_history_init(h);
}

void mt_history_reset(mt_history *h)
{
    if (h->v)
        memset(h->v, 0, (size_t)h->rows * MT_HISTORY_POINTS * sizeof *h->v);
    memset(h->t, 0, sizeof h->t);
    h->head = 0;
    h->n = 0;
}

int mt_history_reserve(mt_history *h, uint32_t rows)
{
    if (rows <= h->rows)
        return 0;
    if (rows > MT_MODEL_MAX_ID)
        rows = MT_MODEL_MAX_ID;
    uint64_t want = (uint64_t)h->rows + h->rows / 2;
    if (want < rows)
        want = rows;
    if (want > MT_MODEL_MAX_ID)
        want = MT_MODEL_MAX_ID;
    float *v = realloc(h->v, (size_t)want * MT_HISTORY_POINTS * sizeof *v);
    if (!v)
        return -1;
    memset(v + (size_t)h->rows * MT_HISTORY_POINTS, 0,
           (size_t)(want - h->rows) * MT_HISTORY_POINTS * sizeof *v);
    h->v = v;
    h->rows = (uint32_t)want;
    return 0;
}

static bool sorted_by_id(const mt_snapshot *snap, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (snap->traces[i].id <= snap->traces[i - 1].id)
            return false;
    return true;
}

static void zero_column(mt_history *h, unsigned pos, uint32_t from, uint32_t to)
{
    for (uint32_t id = from; id < to; id++)
        h->v[(size_t)id * MT_HISTORY_POINTS + pos] = 0.0f;
}

/* Writes column pos: each trace's live bytes, 0 for ids not in snap. */
static void write_column(mt_history *h, const mt_snapshot *snap, unsigned pos)
{
    size_t n = snap->traces ? (size_t)snap->slot.ntraces : 0;
    bool sorted = sorted_by_id(snap, n);
    if (!sorted)
        zero_column(h, pos, 0, h->rows);
    uint32_t next = 0; /* sorted: ids below next are written */
    for (size_t i = 0; i < n; i++) {
        uint32_t id = snap->traces[i].id;
        if (id >= h->rows)
            continue;
        if (sorted)
            zero_column(h, pos, next, id);
        h->v[(size_t)id * MT_HISTORY_POINTS + pos] = (float)snap->traces[i].live_bytes;
        next = id + 1;
    }
    if (sorted)
        zero_column(h, pos, next, h->rows);
}

void mt_history_add(mt_history *h, const mt_snapshot *snap)
{
    unsigned pos = h->head;
    write_column(h, snap, pos);
    h->t[pos] = snap->slot.t_ns;
    h->head = (pos + 1) % MT_HISTORY_POINTS;
    if (h->n < MT_HISTORY_POINTS)
        h->n++;
}

uint64_t mt_history_last_t(const mt_history *h)
{
    if (!h->n)
        return 0;
    return h->t[(h->head + MT_HISTORY_POINTS - 1) % MT_HISTORY_POINTS];
}

void mt_history_view_of(const mt_history *h, const float *sum, mt_hist_view *out)
{
    out->v = sum;
    out->t = h->t;
    out->n = h->n;
    out->first = (h->head + MT_HISTORY_POINTS - h->n) % MT_HISTORY_POINTS;
}

bool mt_history_view(const mt_history *h, uint32_t id, mt_hist_view *out)
{
    if (!h->n || id >= h->rows)
        return false;
    mt_history_view_of(h, h->v + (size_t)id * MT_HISTORY_POINTS, out);
    return true;
}

void mt_history_accumulate(const mt_history *h, uint32_t id, float *sum)
{
    if (id >= h->rows)
        return;
    const float *row = h->v + (size_t)id * MT_HISTORY_POINTS;
    for (unsigned k = 0; k < MT_HISTORY_POINTS; k++)
        sum[k] += row[k];
}

size_t mt_hist_view_copy(const mt_hist_view *v, double *live, uint64_t *t_ns, size_t max)
{
    size_t n = v->n < max ? v->n : max;
    size_t skip = v->n - n;
    for (size_t k = 0; k < n; k++) {
        unsigned pos = (unsigned)((v->first + skip + k) % MT_HISTORY_POINTS);
        if (live)
            live[k] = v->v[pos];
        if (t_ns)
            t_ns[k] = v->t[pos];
    }
    return n;
}
