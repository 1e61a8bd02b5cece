/* shm_modules.c -- parsing and searching the module map (see shm_modules.h).
 * Records and unload marks are read under the guard (shm_guard.h): a file
 * that shrinks is an error, not a SIGBUS. */
#include "shm_modules.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shm_guard.h"
#include "shm_modules_holders.h"

void mt_modules_init(mt_modules *m)
{
    memset(m, 0, sizeof *m);
}

void mt_modules_free(mt_modules *m)
{
    free(m->items);
    free(m->order);
    free(m->max_end);
    mt_holders_free(m->holders);
    mt_modules_init(m);
}

static mt_errc parse_one(const mt_segment *seg, const unsigned char *p, size_t index,
                         mt_module_info *out, mt_err *err)
{
    mt_shm_module rec;
    mt_errc rc = mt_segment_copy(seg, &rec, p, sizeof rec, err);
    if (rc)
        return rc;
    if (!memchr(rec.path, '\0', sizeof rec.path))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt module %zu: path not terminated", index);
    if (rec.start >= rec.end || rec.build_id_len > MT_BUILD_ID_MAX)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt module %zu: bad range or build id", index);
    out->bias = rec.bias;
    out->start = rec.start;
    out->end = rec.end;
    out->load_seq = rec.load_seq;
    out->unload_seq = rec.unload_seq;
    out->unload_trace = rec.unload_seq ? rec.unload_trace : 0;
    out->build_id_len = rec.build_id_len;
    memcpy(out->build_id, rec.build_id, sizeof out->build_id);
    memcpy(out->path, rec.path, sizeof out->path);
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

/* order and max_end with room for n entries (doubling). */
static mt_errc index_room(mt_modules *m, size_t n, mt_err *err)
{
    if (n <= m->index_cap && m->order)
        return MT_OK;
    size_t cap = m->index_cap * 2 > n ? m->index_cap * 2 : (n ? n : 1);
    size_t *order = realloc(m->order, cap * sizeof *order);
    if (order)
        m->order = order;
    uint64_t *max_end = order ? realloc(m->max_end, cap * sizeof *max_end) : NULL;
    if (!max_end)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the module map");
    m->max_end = max_end;
    m->index_cap = cap;
    return MT_OK;
}

/* max_end from position k of order on. */
static void max_end_from(mt_modules *m, size_t k)
{
    for (; k < m->count; k++) {
        uint64_t end = m->items[m->order[k]].end;
        m->max_end[k] = k && m->max_end[k - 1] > end ? m->max_end[k - 1] : end;
    }
}

void mt_modules_changed(mt_modules *m)
{
    m->gen++;
}

void mt_modules_index_holders(const mt_modules *m)
{
    (void)mt_holders_of(m);
}

mt_errc mt_modules_reindex(mt_modules *m, mt_err *err)
{
    mt_modules_changed(m);
    if (index_room(m, m->count, err))
        return MT_E_NOMEM;
    for (size_t i = 0; i < m->count; i++)
        m->order[i] = i;
    qsort_r(m->order, m->count, sizeof *m->order, cmp_start, m->items);
    max_end_from(m, 0);
    return MT_OK;
}

mt_errc mt_modules_index_last(mt_modules *m, mt_err *err)
{
    assert(m->count > 0); /* an item was appended */
    mt_modules_changed(m);
    if (index_room(m, m->count, err))
        return MT_E_NOMEM;
    size_t last = m->count - 1, lo = 0, hi = last; /* first k with start > last's */
    uint64_t start = m->items[last].start;
    while (lo < hi) { /* equal starts stay in index order, as cmp_start has them */
        size_t mid = lo + (hi - lo) / 2;
        if (m->items[m->order[mid]].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&m->order[lo + 1], &m->order[lo], (last - lo) * sizeof *m->order);
    m->order[lo] = last;
    max_end_from(m, lo);
    return MT_OK;
}

static mt_errc parse_new(mt_modules *m, const mt_segment *seg, size_t n, mt_err *err)
{
    if (n > m->cap) {
        mt_module_info *items = realloc(m->items, n * sizeof *items);
        if (!items)
            return mt_err_set(err, MT_E_NOMEM, "out of memory for the module map");
        m->items = items;
        m->cap = n;
    }
    const unsigned char *base = seg->base + seg->lay.modules_off;
    for (size_t i = m->count; i < n; i++) {
        mt_errc rc = parse_one(seg, base + i * sizeof(mt_shm_module), i, &m->items[i], err);
        if (rc)
            return rc;
        m->count = i + 1;
    }
    return mt_modules_reindex(m, err);
}

typedef struct unloads {
    const mt_shm_module *recs;
    mt_modules *m;
    bool changed; /* a mark moved: the lookups' index is built again */
} unloads;

/* Under the guard: only loads from the mapping and stores to m->items. */
static void load_unloads(void *ctx)
{
    unloads *u = ctx;
    for (size_t i = 0; i < u->m->count; i++) {
        mt_module_info *o = &u->m->items[i];
        uint64_t seq = __atomic_load_n(&u->recs[i].unload_seq, __ATOMIC_ACQUIRE);
        /* stored before unload_seq: read after it (a module loaded again at
         * its place, publish_shm.c mt_shm_revive_module, clears both) */
        uint32_t trace = seq ? __atomic_load_n(&u->recs[i].unload_trace, __ATOMIC_RELAXED) : 0;
        u->changed |= seq != o->unload_seq || trace != o->unload_trace;
        o->unload_seq = seq;
        o->unload_trace = trace;
    }
}

mt_errc mt_modules_update(mt_modules *m, const mt_segment *seg, mt_err *err)
{
    const mt_shm_header *h = mt_segment_header(seg);
    uint64_t count, used;
    mt_errc rc = mt_segment_load64(seg, &h->modules_count, &count, err);
    if (!rc)
        rc = mt_segment_load64(seg, &h->modules_used, &used, err);
    if (rc)
        return rc;
    m->pid = mt_segment_pid(seg);
    uint64_t n = used / sizeof(mt_shm_module);
    if (used > seg->lay.modules_cap || used % sizeof(mt_shm_module) || n < m->count ||
        count > n + 1)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt module map: modules_used %llu",
                          (unsigned long long)used);
    if (n > m->count) {
        rc = parse_new(m, seg, (size_t)n, err);
        if (rc)
            return rc;
    }
    unloads u = {(const mt_shm_module *)(seg->base + seg->lay.modules_off), m, false};
    rc = mt_segment_guard(seg, load_unloads, &u, err);
    if (rc || u.changed) /* marks moved, or were read in part */
        mt_modules_changed(m);
    return rc;
}

/* The number of entries of order that start at or below addr. */
static size_t starting_below(const mt_modules *m, uint64_t addr)
{
    size_t lo = 0, hi = m->count; /* first k with start > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->items[m->order[mid]].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const mt_module_info *mt_modules_find(const mt_modules *m, uint64_t addr)
{
    const mt_holders *h = mt_holders_of(m);
    if (h)
        return mt_holders_find(h, m, addr);
    const mt_module_info *best = NULL;
    for (size_t k = starting_below(m, addr); k-- > 0 && m->max_end[k] > addr;) {
        const mt_module_info *cand = &m->items[m->order[k]];
        if (addr < cand->end && mt_module_better(cand, best))
            best = cand;
    }
    return best;
}

const mt_module_info *mt_modules_find_at(const mt_modules *m, uint64_t addr, uint32_t trace)
{
    const mt_holders *h = trace ? mt_holders_of(m) : NULL;
    if (h)
        return mt_holders_find_at(h, m, addr, trace);
    const mt_module_info *best = NULL;
    for (size_t k = trace ? starting_below(m, addr) : 0; k-- > 0 && m->max_end[k] > addr;) {
        const mt_module_info *cand = &m->items[m->order[k]];
        uint64_t gone = mt_module_gone_at(cand);
        if (addr >= cand->end || gone <= trace)
            continue; /* elsewhere, or gone before the trace (or when is not known) */
        uint64_t best_gone = best ? mt_module_gone_at(best) : 0;
        if (!best || gone < best_gone || (gone == best_gone && cand > best))
            best = cand;
    }
    return best ? best : mt_modules_find(m, addr);
}
