/* dat_reader_tables.c -- definitions and modules from recording events
 * (see dat_reader_tables.h). */
#include "dat_reader_tables.h"

#include <stdlib.h>
#include <string.h>

static int reserve(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

mt_errc mt_dat_defs_add(mt_defs *d, const mt_dat_def *def, uint64_t first_seen_ns, mt_err *err)
{
    if (def->id != d->count || def->nframes > MT_MAX_DEPTH)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: definition %zu has id %u",
                          d->count, def->id);
    if (reserve((void **)&d->items, &d->cap, d->count + 1, sizeof *d->items) ||
        reserve((void **)&d->frames, &d->frames_cap, d->nframes + def->nframes, sizeof(uint64_t)))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for trace definitions");
    if (def->nframes)
        memcpy(d->frames + d->nframes, def->frames, def->nframes * sizeof(uint64_t));
    d->items[d->count++] =
        (mt_def_info){def->hash, first_seen_ns, d->nframes, def->nframes, def->flags};
    d->nframes += def->nframes;
    return MT_OK;
}

static int cmp_start(const void *a, const void *b, void *ctx)
{
    const mt_module_info *items = ctx;
    uint64_t x = items[*(const size_t *)a].start, y = items[*(const size_t *)b].start;
    if (x != y)
        return x < y ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static mt_errc build_index(mt_modules *m, mt_err *err)
{
    size_t *order = realloc(m->order, m->count * sizeof *order);
    if (order)
        m->order = order;
    uint64_t *max_end = realloc(m->max_end, m->count * sizeof *max_end);
    if (max_end)
        m->max_end = max_end;
    if (!order || !max_end)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the module map");
    for (size_t i = 0; i < m->count; i++)
        order[i] = i;
    qsort_r(order, m->count, sizeof *order, cmp_start, m->items);
    for (size_t k = 0; k < m->count; k++) {
        uint64_t end = m->items[order[k]].end;
        max_end[k] = k && max_end[k - 1] > end ? max_end[k - 1] : end;
    }
    return MT_OK;
}

mt_errc mt_dat_modules_add(mt_modules *m, const mt_dat_module *mod, uint64_t load_seq, mt_err *err)
{
    if (mod->start >= mod->end || mod->build_id_len > MT_BUILD_ID_MAX ||
        !memchr(mod->path, '\0', sizeof mod->path))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: module %zu", m->count);
    if (reserve((void **)&m->items, &m->cap, m->count + 1, sizeof *m->items))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the module map");
    mt_module_info *o = &m->items[m->count++];
    memset(o, 0, sizeof *o);
    o->bias = mod->bias;
    o->start = mod->start;
    o->end = mod->end;
    o->load_seq = load_seq;
    o->build_id_len = mod->build_id_len;
    memcpy(o->build_id, mod->build_id, sizeof o->build_id);
    memcpy(o->path, mod->path, sizeof o->path);
    return build_index(m, err);
}

void mt_dat_modules_unload(mt_modules *m, uint64_t start, uint64_t seq)
{
    for (size_t i = m->count; i-- > 0;) {
        if (m->items[i].start == start && m->items[i].unload_seq == 0) {
            m->items[i].unload_seq = seq ? seq : 1;
            return;
        }
    }
}
