/* group.c -- label arena and label -> row hash (see group.h). */
#include "group.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash_fnv.h"

void mt_groups_init(mt_groups *g)
{
    memset(g, 0, sizeof *g);
}

void mt_groups_free(mt_groups *g)
{
    free(g->arena);
    free(g->off);
    free(g->hash);
    free(g->slots);
    mt_groups_init(g);
}

static int reserve_rows(mt_groups *g, size_t rows)
{
    if (rows <= g->cap_rows)
        return 0;
    size_t want = mt_grown_cap(g->cap_rows, rows, 64);
    size_t *off = realloc(g->off, want * sizeof *off);
    if (off)
        g->off = off;
    uint64_t *hash = realloc(g->hash, want * sizeof *hash);
    if (hash)
        g->hash = hash;
    if (!off || !hash)
        return -1;
    g->cap_rows = want;
    return 0;
}

int mt_groups_begin(mt_groups *g)
{
    g->used = 0;
    g->nrows = 0;
    if (g->slots)
        memset(g->slots, 0, g->nslots * sizeof *g->slots);
    return 0;
}

static int arena_put(mt_groups *g, const char *s, size_t *off)
{
    size_t len = strlen(s) + 1;
    if (g->used + len > g->cap) {
        size_t cap = g->cap ? g->cap : 4096;
        while (cap < g->used + len)
            cap *= 2;
        char *a = realloc(g->arena, cap);
        if (!a)
            return -1;
        g->arena = a;
        g->cap = cap;
    }
    memcpy(g->arena + g->used, s, len);
    *off = g->used;
    g->used += len;
    return 0;
}

long mt_groups_add(mt_groups *g, const char *label)
{
    if (reserve_rows(g, g->nrows + 1) < 0)
        return -1;
    if (arena_put(g, label, &g->off[g->nrows]) < 0)
        return -1;
    g->hash[g->nrows] = 0;
    return (long)g->nrows++;
}

uint64_t mt_label_hash(const char *s)
{
    return mt_fnv_str(MT_FNV_SEED, s);
}

/* Room for one more hashed row (the table stays at most half full); the
 * rows so far are all hashed. */
static int reserve_slots(mt_groups *g)
{
    if ((g->nrows + 1) * 2 <= g->nslots)
        return 0;
    size_t want = g->nslots ? g->nslots : 64;
    while (want < (g->nrows + 1) * 2)
        want *= 2;
    if (want == g->nslots)
        return 0;
    uint32_t *s = calloc(want, sizeof *s);
    if (!s)
        return -1;
    for (size_t r = 0; r < g->nrows; r++) {
        size_t i = (size_t)g->hash[r] & (want - 1);
        while (s[i])
            i = (i + 1) & (want - 1);
        s[i] = (uint32_t)r + 1;
    }
    free(g->slots);
    g->slots = s;
    g->nslots = want;
    return 0;
}

long mt_groups_find_or_add(mt_groups *g, const char *label, int *added)
{
    *added = 0;
    if (reserve_slots(g) < 0)
        return -1;
    uint64_t h = mt_label_hash(label);
    size_t mask = g->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint32_t r = g->slots[i];
        if (!r) {
            long row = mt_groups_add(g, label);
            if (row < 0)
                return -1;
            g->hash[row] = h;
            g->slots[i] = (uint32_t)row + 1;
            *added = 1;
            return row;
        }
        if (g->hash[r - 1] == h && strcmp(g->arena + g->off[r - 1], label) == 0)
            return (long)r - 1;
    }
}

const char *mt_groups_label(const mt_groups *g, size_t row)
{
    return g->arena + g->off[row];
}
