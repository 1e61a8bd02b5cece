/* shm_modules_holders.c -- see shm_modules_holders.h.
 *
 * The modules' starts and ends cut the address space into intervals that
 * each module covers whole or not at all; each interval has the list of
 * its holders, sorted by when they stopped holding it (mt_module_gone_at,
 * then the latest first), and its default holder (mt_module_better).  The
 * module that held an address when a trace was taken is the first of the
 * list gone after the trace: a binary search.  Modules at one place are
 * loaded one after the other, so the lists sum to about the modules; a
 * module spanning many intervals (modules of other sizes loaded inside
 * it) adds itself to each, so the lists are bounded (ENTRIES_MAX), beyond
 * which there is no index and the lookups walk the modules. */
#include "shm_modules_holders.h"

#include <stdlib.h>

#define ENTRIES_MAX(n) (64u * (size_t)(n) + 65536u)

typedef struct {
    uint64_t gone;
    uint32_t item;
} holder;

struct mt_holders {
    uint64_t gen;
    size_t count;   /* m->gen and m->count when built */
    bool usable;    /* false: no index (too many entries, or no memory) */
    size_t nbounds; /* interval i is [bounds[i], bounds[i + 1]) */
    uint64_t *bounds;
    size_t *first;  /* interval i's holders: list[first[i] .. first[i + 1]) */
    uint32_t *best; /* interval i's default holder + 1; 0: none */
    holder *list;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_holder(const void *a, const void *b)
{
    const holder *x = a, *y = b;
    if (x->gone != y->gone)
        return x->gone < y->gone ? -1 : 1;
    return x->item > y->item ? -1 : x->item < y->item; /* the latest first */
}

/* The interval of addr (bounds[i] <= addr < bounds[i + 1]), or nbounds. */
static size_t interval_of(const mt_holders *h, uint64_t addr)
{
    size_t lo = 0, hi = h->nbounds; /* first bound > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->bounds[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 || lo == h->nbounds ? h->nbounds : lo - 1;
}

static void clear(mt_holders *h)
{
    free(h->bounds);
    free(h->first);
    free(h->best);
    free(h->list);
    h->bounds = NULL;
    h->first = NULL;
    h->best = NULL;
    h->list = NULL;
    h->nbounds = 0;
    h->usable = false;
}

/* The sorted, distinct starts and ends. */
static bool make_bounds(mt_holders *h, const mt_modules *m)
{
    h->bounds = malloc((2 * m->count + 1) * sizeof *h->bounds);
    if (!h->bounds)
        return false;
    for (size_t i = 0; i < m->count; i++) {
        h->bounds[2 * i] = m->items[i].start;
        h->bounds[2 * i + 1] = m->items[i].end;
    }
    qsort(h->bounds, 2 * m->count, sizeof *h->bounds, cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < 2 * m->count; i++)
        if (n == 0 || h->bounds[i] != h->bounds[n - 1])
            h->bounds[n++] = h->bounds[i];
    h->nbounds = n;
    return true;
}

/* first[]: each interval's place in list (first[i + 1] counted first). */
static bool make_first(mt_holders *h, const mt_modules *m)
{
    h->first = calloc(h->nbounds + 1, sizeof *h->first);
    if (!h->first)
        return false;
    size_t total = 0;
    for (size_t i = 0; i < m->count; i++) {
        size_t a = interval_of(h, m->items[i].start), b = interval_of(h, m->items[i].end);
        b = b == h->nbounds ? h->nbounds - 1 : b; /* the last end */
        for (size_t k = a; k < b; k++)
            h->first[k + 1]++;
        total += b - a;
        if (total > ENTRIES_MAX(m->count))
            return false;
    }
    for (size_t k = 0; k < h->nbounds; k++)
        h->first[k + 1] += h->first[k];
    return true;
}

static bool make_lists(mt_holders *h, const mt_modules *m)
{
    size_t *at = malloc((h->nbounds + 1) * sizeof *at);
    h->list = malloc((h->first[h->nbounds] + 1) * sizeof *h->list);
    h->best = calloc(h->nbounds + 1, sizeof *h->best);
    if (!at || !h->list || !h->best) {
        free(at);
        return false;
    }
    for (size_t k = 0; k <= h->nbounds; k++)
        at[k] = h->first[k];
    for (size_t i = 0; i < m->count; i++) {
        const mt_module_info *mod = &m->items[i];
        size_t a = interval_of(h, mod->start), b = interval_of(h, mod->end);
        b = b == h->nbounds ? h->nbounds - 1 : b;
        for (size_t k = a; k < b; k++) {
            h->list[at[k]++] = (holder){mt_module_gone_at(mod), (uint32_t)i};
            if (!h->best[k] || mt_module_better(mod, &m->items[h->best[k] - 1]))
                h->best[k] = (uint32_t)i + 1;
        }
    }
    free(at);
    for (size_t k = 0; k + 1 < h->nbounds; k++)
        qsort(&h->list[h->first[k]], h->first[k + 1] - h->first[k], sizeof *h->list, cmp_holder);
    return true;
}

const mt_holders *mt_holders_of(const mt_modules *m)
{
    mt_modules *w = (mt_modules *)m; /* the cache: see the header */
    mt_holders *h = w->holders;
    if (h && h->gen == m->gen && h->count == m->count)
        return h->usable ? h : NULL;
    if (!h && !(h = w->holders = calloc(1, sizeof *h)))
        return NULL;
    clear(h);
    h->gen = m->gen;
    h->count = m->count;
    if (m->count == 0 || m->count >= UINT32_MAX || !make_bounds(h, m) || !make_first(h, m) ||
        !make_lists(h, m)) {
        clear(h); /* the walks (still this generation: not built again) */
        return NULL;
    }
    h->usable = true;
    return h;
}

void mt_holders_free(mt_holders *h)
{
    if (h)
        clear(h);
    free(h);
}

const mt_module_info *mt_holders_find(const mt_holders *h, const mt_modules *m, uint64_t addr)
{
    size_t k = interval_of(h, addr);
    return k < h->nbounds && h->best[k] ? &m->items[h->best[k] - 1] : NULL;
}

const mt_module_info *mt_holders_find_at(const mt_holders *h, const mt_modules *m, uint64_t addr,
                                         uint32_t trace)
{
    size_t k = interval_of(h, addr);
    if (k == h->nbounds)
        return NULL;
    size_t lo = h->first[k], hi = h->first[k + 1]; /* the first gone after the trace */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->list[mid].gone <= trace)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->first[k + 1] ? &m->items[h->list[lo].item] : mt_holders_find(h, m, addr);
}
