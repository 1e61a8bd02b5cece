/* replay_live.c -- the live-group hash table (see replay_live.h): 16-byte
 * slots, linear probing, deletion by backward shift, grown at 70% load;
 * the groups whose birth or sums do not fit in a slot in a side array. */
#include "replay_live.h"

#include "big_table.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAP 1024u
#define BYTES_BITS (64u - MT_RVAL_COUNT_BITS)
#define BYTES_MASK (((uint64_t)1 << BYTES_BITS) - 1)
#define COUNT_LIMIT ((int64_t)1 << (MT_RVAL_COUNT_BITS - 1)) /* packed: |count| < this */
#define BYTES_LIMIT ((int64_t)1 << (BYTES_BITS - 1))         /* -this <= bytes < this */
#define HALF_SPAN ((uint64_t)1 << 31)

void mt_rlive_init(mt_rlive *t)
{
    memset(t, 0, sizeof *t);
}

void mt_rlive_free(mt_rlive *t)
{
    mt_big_free(t->slots, t->cap, sizeof *t->slots);
    free(t->wide);
    mt_rlive_init(t);
}

void mt_rlive_clear(mt_rlive *t)
{
    if (t->slots)
        memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->count = t->nwide = t->wide_free = t->nneg = 0;
}

static bool is_wide(uint64_t val)
{
    return (val & ~BYTES_MASK) == MT_RVAL_WIDE;
}

static bool packs(int64_t count, int64_t bytes)
{
    return count > -COUNT_LIMIT && count < COUNT_LIMIT && bytes >= -BYTES_LIMIT &&
           bytes < BYTES_LIMIT;
}

static uint64_t pack(int64_t count, int64_t bytes)
{
    return (uint64_t)count << BYTES_BITS | ((uint64_t)bytes & BYTES_MASK);
}

/* A wide group: its index, or SIZE_MAX when out of memory. */
static size_t wide_new(mt_rlive *t, const mt_rgroup *g)
{
    size_t i = t->wide_free - 1;
    if (t->wide_free)
        t->wide_free = (size_t)t->wide[i].birth_ms;
    else if (mt_grow((void **)&t->wide, &t->wide_cap, t->nwide + 1, sizeof *t->wide) == 0)
        i = t->nwide++;
    else
        return SIZE_MAX;
    t->wide[i] = *g;
    return i;
}

static void wide_drop(mt_rlive *t, size_t i)
{
    t->wide[i] = (mt_rgroup){.birth_ms = t->wide_free};
    t->wide_free = i + 1;
}

static int grow(mt_rlive *t, size_t want)
{
    size_t cap = t->cap ? t->cap : MIN_CAP;
    while (want * 10 > cap * 7)
        cap *= 2;
    if (cap == t->cap)
        return 0;
    mt_rslot *slots = mt_big_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    mt_rslot *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = slots;
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i].val)
            continue;
        size_t j = mt_rlive_home(t, old[i].key);
        while (t->slots[j].val)
            j = (j + 1) & (cap - 1);
        t->slots[j] = old[i];
    }
    mt_big_free(old, oldcap, sizeof *old);
    return 0;
}

/* Close the gap at i: move back every later entry of the run whose home
 * is not cyclically between the gap and itself. */
static __attribute__((noinline)) void shift_back(mt_rlive *t, size_t gap)
{
    size_t mask = t->cap - 1;
    for (size_t j = (gap + 1) & mask; t->slots[j].val; j = (j + 1) & mask) {
        size_t h = mt_rlive_home(t, t->slots[j].key);
        bool stays = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
        if (stays)
            continue;
        t->slots[gap] = t->slots[j];
        gap = j;
    }
    t->slots[gap] = (mt_rslot){0, 0};
    t->count--;
}

/* Sums: modulo 2^64, as the counters they mirror. */
static int64_t sum(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Add to the group of slot i, packed (its birth: birth_ms). */
static int add_packed(mt_rlive *t, size_t i, uint64_t birth_ms, int64_t count, int64_t bytes)
{
    mt_rgroup g;
    mt_rlive_get(t, i, &g);
    size_t nneg = t->nneg - (g.count < 0); /* kept only if the add is */
    g.count = sum(g.count, count);
    g.bytes = sum(g.bytes, bytes);
    if (g.count == 0 && g.bytes == 0) {
        t->nneg = nneg;
        shift_back(t, i);
        return 0;
    }
    if (packs(g.count, g.bytes)) {
        t->nneg = nneg + (g.count < 0);
        t->slots[i].val = pack(g.count, g.bytes);
        return 0;
    }
    g.birth_ms = birth_ms;
    size_t w = wide_new(t, &g);
    if (w == SIZE_MAX)
        return -1; /* the group unchanged, its count too */
    t->nneg = nneg + (g.count < 0);
    t->slots[i].val = MT_RVAL_WIDE | w;
    return 0;
}

/* Add to the wide group of slot i. */
static int add_wide(mt_rlive *t, size_t i, int64_t count, int64_t bytes)
{
    size_t w = (size_t)(t->slots[i].val & BYTES_MASK);
    mt_rgroup *g = &t->wide[w];
    t->nneg -= g->count < 0;
    g->count = sum(g->count, count);
    t->nneg += g->count < 0;
    g->bytes = sum(g->bytes, bytes);
    if (g->count == 0 && g->bytes == 0) {
        wide_drop(t, w);
        shift_back(t, i);
    }
    return 0;
}

/* A new group in the empty slot i. */
static int put_new(mt_rlive *t, size_t i, uint64_t key, bool fits, const mt_rgroup *g)
{
    uint64_t val = pack(g->count, g->bytes);
    if (!fits || !packs(g->count, g->bytes)) {
        size_t w = wide_new(t, g);
        if (w == SIZE_MAX)
            return -1;
        val = MT_RVAL_WIDE | w;
    }
    t->slots[i] = (mt_rslot){key, val};
    t->count++;
    t->nneg += g->count < 0;
    return 0;
}

/* Every case: grow, a new base, packed or wide groups, new and removed ones. */
static __attribute__((noinline)) int add_any(mt_rlive *t, uint32_t trace, uint64_t birth_ms,
                                             int64_t count, int64_t bytes)
{
    /* grow()'s own test, here: it is called for every event */
    if ((!t->cap || (t->count + 1) * 10 > t->cap * 7) && grow(t, t->count + 1) != 0)
        return -1;
    if (!t->count) /* no slot holds a birth against the old base */
        t->base_ms = birth_ms - HALF_SPAN;
    uint64_t key = mt_rlive_key(t, trace, birth_ms);
    bool fits = birth_ms - t->base_ms <= UINT32_MAX; /* a packed slot of key is this group */
    size_t i = mt_rlive_home(t, key);
    for (; t->slots[i].val; i = (i + 1) & (t->cap - 1)) {
        const mt_rslot *s = &t->slots[i];
        if (s->key != key)
            continue;
        if (!is_wide(s->val) && fits)
            return add_packed(t, i, birth_ms, count, bytes);
        if (is_wide(s->val) && t->wide[s->val & BYTES_MASK].birth_ms == birth_ms)
            return add_wide(t, i, count, bytes);
    }
    if (count == 0 && bytes == 0)
        return 0;
    return put_new(t, i, key, fits, &(mt_rgroup){birth_ms, count, bytes, trace, 1});
}

/* The common cases first, with as few registers as the probe needs: in a
 * table that need not grow, a packed group of the key found and added to
 * (or emptied and removed), or a new packed group in the empty slot the
 * probe ends at.  Anything else (a wide group, a birth out of the base's
 * span, a table to grow) goes to add_any, which starts over: nothing is
 * changed before it is called. */
int mt_rlive_add(mt_rlive *t, uint32_t trace, uint64_t birth_ms, int64_t count, int64_t bytes)
{
    if (!t->count || (t->count + 1) * 10 > t->cap * 7 || birth_ms - t->base_ms > UINT32_MAX)
        return add_any(t, trace, birth_ms, count, bytes);
    uint64_t key = mt_rlive_key(t, trace, birth_ms);
    size_t i = mt_rlive_home(t, key);
    for (; t->slots[i].val; i = (i + 1) & (t->cap - 1)) {
        if (t->slots[i].key != key)
            continue;
        uint64_t val = t->slots[i].val;
        if (is_wide(val))
            return add_any(t, trace, birth_ms, count, bytes);
        int64_t c0 = (int64_t)val >> BYTES_BITS;
        int64_t c = sum(c0, count);
        int64_t b = sum((int64_t)(val << MT_RVAL_COUNT_BITS) >> MT_RVAL_COUNT_BITS, bytes);
        if (c == 0 && b == 0) {
            t->nneg -= c0 < 0;
            shift_back(t, i);
            return 0;
        }
        if (!packs(c, b))
            return add_any(t, trace, birth_ms, count, bytes);
        t->nneg = t->nneg - (c0 < 0) + (c < 0);
        t->slots[i].val = pack(c, b);
        return 0;
    }
    if (count == 0 && bytes == 0)
        return 0;
    if (!packs(count, bytes))
        return add_any(t, trace, birth_ms, count, bytes);
    t->slots[i] = (mt_rslot){key, pack(count, bytes)};
    t->count++;
    t->nneg += count < 0;
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
        n += mt_rlive_get(t, i, &out[n]);
    return out;
}

int mt_rlive_import(mt_rlive *t, const mt_rgroup *groups, size_t n)
{
    mt_rlive_clear(t);
    if (grow(t, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (mt_rlive_add(t, groups[i].trace, groups[i].birth_ms, groups[i].count,
                         groups[i].bytes) != 0)
            return -1;
    return 0;
}

int mt_rlive_prune(mt_rlive *t, uint64_t before_ms)
{
    if (!t->nneg)
        return 0; /* nothing to drop: no export */
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
