/* replay_live.c -- the live-group hash table (see replay_live.h): linear
 * probing, deletion by backward shift, grown at 70% load. */
#include "replay_live.h"

#include "big_table.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAP 1024u

void mt_rlive_init(mt_rlive *t)
{
    memset(t, 0, sizeof *t);
}

void mt_rlive_free(mt_rlive *t)
{
    mt_big_free(t->slots, t->cap, sizeof *t->slots);
    mt_rlive_init(t);
}

void mt_rlive_clear(mt_rlive *t)
{
    if (t->slots)
        memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->count = 0;
}

static size_t home(const mt_rlive *t, uint32_t trace, uint64_t birth_ms)
{
    return mt_rlive_home(t, trace, birth_ms);
}

static void insert_new(mt_rlive *t, const mt_rgroup *g)
{
    size_t i = home(t, g->trace, g->birth_ms);
    while (t->slots[i].used)
        i = (i + 1) & (t->cap - 1);
    t->slots[i] = *g;
    t->slots[i].used = 1;
    t->count++;
}

static int grow(mt_rlive *t, size_t want)
{
    size_t cap = t->cap ? t->cap : MIN_CAP;
    while (want * 10 > cap * 7)
        cap *= 2;
    if (cap == t->cap)
        return 0;
    mt_rgroup *slots = mt_big_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    mt_rgroup *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = slots;
    t->cap = cap;
    t->count = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used)
            insert_new(t, &old[i]);
    mt_big_free(old, oldcap, sizeof *old);
    return 0;
}

/* Close the gap at i: move back every later entry of the run whose home
 * is not cyclically between the gap and itself. */
static void shift_back(mt_rlive *t, size_t gap)
{
    size_t mask = t->cap - 1;
    for (size_t j = (gap + 1) & mask; t->slots[j].used; j = (j + 1) & mask) {
        size_t h = home(t, t->slots[j].trace, t->slots[j].birth_ms);
        bool stays = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
        if (stays)
            continue;
        t->slots[gap] = t->slots[j];
        gap = j;
    }
    memset(&t->slots[gap], 0, sizeof t->slots[gap]);
}

int mt_rlive_add(mt_rlive *t, uint32_t trace, uint64_t birth_ms, int64_t count, int64_t bytes)
{
    /* grow()'s own test, here: it is called for every event */
    if ((!t->cap || (t->count + 1) * 10 > t->cap * 7) && grow(t, t->count + 1) != 0)
        return -1;
    size_t i = home(t, trace, birth_ms);
    for (; t->slots[i].used; i = (i + 1) & (t->cap - 1)) {
        mt_rgroup *g = &t->slots[i];
        if (g->trace != trace || g->birth_ms != birth_ms)
            continue;
        g->count = (int64_t)((uint64_t)g->count + (uint64_t)count);
        g->bytes = (int64_t)((uint64_t)g->bytes + (uint64_t)bytes);
        if (g->count == 0 && g->bytes == 0) {
            shift_back(t, i);
            t->count--;
        }
        return 0;
    }
    if (count == 0 && bytes == 0)
        return 0;
    t->slots[i] = (mt_rgroup){birth_ms, count, bytes, trace, 1};
    t->count++;
    return 0;
}

mt_rgroup *mt_rlive_export(const mt_rlive *t)
{
    if (!t->count)
        return NULL;
    mt_rgroup *out = malloc(t->count * sizeof *out);
    if (!out)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].used)
            out[n++] = t->slots[i];
    return out;
}

int mt_rlive_import(mt_rlive *t, const mt_rgroup *groups, size_t n)
{
    mt_rlive_clear(t);
    if (grow(t, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        insert_new(t, &groups[i]);
    return 0;
}

int mt_rlive_prune(mt_rlive *t, uint64_t before_ms)
{
    mt_rgroup *all = mt_rlive_export(t);
    if (!all)
        return t->count ? -1 : 0;
    size_t n = t->count, kept = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].count >= 0 || all[i].birth_ms >= before_ms)
            all[kept++] = all[i];
    int rc = kept < n ? mt_rlive_import(t, all, kept) : 0;
    free(all);
    return rc;
}
