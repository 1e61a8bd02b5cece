/* cache.c -- see cache.h.  Linear probing, grown at 50% load; results are
 * never evicted (a viewer sees a bounded number of distinct frames). */
#include "cache.h"

#include <stdlib.h>

void mt_sym_cache_init(mt_sym_cache *c)
{
    c->slots = NULL;
    c->cap = c->used = 0;
}

void mt_sym_cache_free(mt_sym_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].module)
            mt_sym_result_free(c->slots[i].result);
    free(c->slots);
    mt_sym_cache_init(c);
}

static size_t hash(uint32_t module, uint64_t offset)
{
    uint64_t h = (offset ^ ((uint64_t)module << 40)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

static mt_sym_cache_entry *slot_for(mt_sym_cache_entry *slots, size_t cap, uint32_t module,
                                    uint64_t offset)
{
    size_t i = hash(module, offset) & (cap - 1);
    while (slots[i].module && (slots[i].module != module || slots[i].offset != offset))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

mt_sym_result *mt_sym_cache_get(const mt_sym_cache *c, uint32_t module, uint64_t offset)
{
    if (!c->cap)
        return NULL;
    mt_sym_cache_entry *e = slot_for(c->slots, c->cap, module, offset);
    return e->module ? e->result : NULL;
}

static bool grow(mt_sym_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : 1024;
    mt_sym_cache_entry *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].module)
            *slot_for(s, cap, c->slots[i].module, c->slots[i].offset) = c->slots[i];
    free(c->slots);
    c->slots = s;
    c->cap = cap;
    return true;
}

bool mt_sym_cache_put(mt_sym_cache *c, uint32_t module, uint64_t offset, mt_sym_result *r)
{
    if ((c->used + 1) * 2 > c->cap && !grow(c)) {
        mt_sym_result_free(r);
        return false;
    }
    mt_sym_cache_entry *e = slot_for(c->slots, c->cap, module, offset);
    if (e->module)
        mt_sym_result_free(e->result);
    else
        c->used++;
    *e = (mt_sym_cache_entry){module, offset, r};
    return true;
}

mt_sym_result *mt_sym_result_new(unsigned n)
{
    mt_sym_result *r = calloc(1, sizeof *r + (size_t)n * sizeof(mt_sym_frame));
    if (!r)
        return NULL;
    r->frames = (const mt_sym_frame *)(r + 1);
    r->nframes = n;
    return r;
}

void mt_sym_result_free(mt_sym_result *r)
{
    if (!r)
        return;
    mt_sym_frame *f = (mt_sym_frame *)(r + 1);
    for (unsigned i = 0; i < r->nframes; i++) {
        free((char *)f[i].function);
        free((char *)f[i].linkage);
        free((char *)f[i].file);
    }
    free(r);
}
