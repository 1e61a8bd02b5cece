/* sym_intern.c -- see sym_intern.h: an open-addressing hash set of owned
 * strings that grows at half load. */
#include "sym_intern.h"
#include "hash_fnv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INTERN_MIN_CAP 64

void mt_intern_init(mt_interner *t)
{
    memset(t, 0, sizeof *t);
}

void mt_intern_free(mt_interner *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i]);
    free(t->slots);
    mt_intern_init(t);
}

static uint64_t hash_str(const char *s)
{
    return mt_fnv_str(MT_FNV_SEED, s);
}

/* The slot holding s, or the empty slot where it belongs (cap > used). */
static size_t find_slot(char *const *slots, size_t cap, const char *s)
{
    size_t i = (size_t)hash_str(s) & (cap - 1);
    while (slots[i] && strcmp(slots[i], s) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

static int grow(mt_interner *t)
{
    size_t cap = t->cap ? t->cap * 2 : INTERN_MIN_CAP;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            slots[find_slot(slots, cap, t->slots[i])] = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

const char *mt_intern_get(mt_interner *t, const char *s)
{
    if (!s)
        return NULL;
    if (t->cap) {
        size_t i = find_slot(t->slots, t->cap, s);
        if (t->slots[i])
            return t->slots[i];
    }
    if ((t->used + 1) * 2 > t->cap && grow(t) != 0)
        return NULL;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    t->slots[find_slot(t->slots, t->cap, s)] = copy;
    t->used++;
    return copy;
}
