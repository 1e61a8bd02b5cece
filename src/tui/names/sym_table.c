/* sym_table.c -- see sym_table.h: records in an open-addressing hash
 * table keyed by (kind, key) that grows at half load; nothing is removed. */
#include "sym_table.h"

#include <stdlib.h>
#include <string.h>

#define TABLE_MIN_CAP 256

void mt_symw_table_init(mt_symw_table *t)
{
    memset(t, 0, sizeof *t);
}

void mt_symw_table_free(mt_symw_table *t)
{
    for (mt_symw_entry *e = t->all, *next; e; e = next) {
        next = e->next_all;
        free(e->res);
        free(e);
    }
    free(t->slots);
    mt_symw_table_init(t);
}

static size_t hash_key(mt_symw_kind kind, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot holding (kind, key), or the empty slot where it belongs. */
static size_t find_slot(mt_symw_entry *const *slots, size_t cap, mt_symw_kind kind, uint64_t key)
{
    size_t i = hash_key(kind, key) & (cap - 1);
    while (slots[i] && (slots[i]->kind != kind || slots[i]->key != key))
        i = (i + 1) & (cap - 1);
    return i;
}

mt_symw_entry *mt_symw_table_find(const mt_symw_table *t, mt_symw_kind kind, uint64_t key)
{
    return t->cap ? t->slots[find_slot(t->slots, t->cap, kind, key)] : NULL;
}

static int grow(mt_symw_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : TABLE_MIN_CAP;
    mt_symw_entry **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        mt_symw_entry *e = t->slots[i];
        if (e)
            slots[find_slot(slots, cap, e->kind, e->key)] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static mt_symw_entry *entry_new(mt_symw_kind kind, uint64_t key, const uint64_t *frames, unsigned n)
{
    mt_symw_entry *e = calloc(1, sizeof *e + (size_t)n * sizeof e->frames[0]);
    if (!e)
        return NULL;
    e->key = key;
    e->kind = (uint8_t)kind;
    e->nframes = n;
    memcpy(e->frames, frames, (size_t)n * sizeof e->frames[0]);
    return e;
}

mt_symw_entry *mt_symw_table_add(mt_symw_table *t, mt_symw_kind kind, uint64_t key,
                                 const uint64_t *frames, unsigned n)
{
    if ((t->used + 1) * 2 > t->cap && grow(t) != 0)
        return NULL;
    mt_symw_entry *e = entry_new(kind, key, frames, n);
    if (!e)
        return NULL;
    size_t i = find_slot(t->slots, t->cap, kind, key);
    if (t->slots[i])
        t->slots[i]->orphan = true;
    else
        t->used++;
    t->slots[i] = e;
    e->next_all = t->all;
    t->all = e;
    return e;
}
