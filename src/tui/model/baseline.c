/* baseline.c -- per-trace figures at the baseline (see baseline.h). */
#include "baseline.h"

#include <stdlib.h>
#include <string.h>

#include "history.h"

void mt_baseline_init(mt_baseline *b)
{
    memset(b, 0, sizeof *b);
}

static uint32_t rows_for(const mt_snapshot *snap)
{
    size_t n = snap->traces ? (size_t)snap->slot.ntraces : 0;
    uint32_t rows = 0;
    for (size_t i = 0; i < n; i++)
        if (snap->traces[i].id < MT_MODEL_MAX_ID && snap->traces[i].id >= rows)
            rows = snap->traces[i].id + 1;
    return rows;
}

int mt_baseline_set(mt_baseline *b, const mt_snapshot *snap)
{
    uint32_t rows = rows_for(snap);
    mt_base_fig *fig = rows ? calloc(rows, sizeof *fig) : NULL;
    if (rows && !fig)
        return -1;
    size_t n = snap->traces ? (size_t)snap->slot.ntraces : 0;
    for (size_t i = 0; i < n; i++) {
        const mt_shm_trace *t = &snap->traces[i];
        if (t->id >= rows)
            continue;
        fig[t->id] = (mt_base_fig){t->live_bytes,  t->live_count, t->alloc_count,
                                   t->alloc_bytes, t->free_count, t->temporary_count};
    }
    free(b->fig);
    b->fig = fig;
    b->rows = rows;
    b->t_ns = snap->slot.t_ns;
    b->set = true;
    return 0;
}

void mt_baseline_clear(mt_baseline *b)
{
    free(b->fig);
    mt_baseline_init(b);
}

const mt_base_fig *mt_baseline_get(const mt_baseline *b, uint32_t id)
{
    return b->set && id < b->rows ? &b->fig[id] : NULL;
}

void mt_baseline_add(const mt_baseline *b, uint32_t id, mt_base_fig *acc)
{
    const mt_base_fig *f = mt_baseline_get(b, id);
    if (!f)
        return;
    acc->live_bytes += f->live_bytes;
    acc->live_count += f->live_count;
    acc->alloc_count += f->alloc_count;
    acc->alloc_bytes += f->alloc_bytes;
    acc->free_count += f->free_count;
    acc->temporary_count += f->temporary_count;
}
