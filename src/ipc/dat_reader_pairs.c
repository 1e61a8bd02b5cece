/* dat_reader_pairs.c -- the (trace, thread) pairs of the EVENTS2 frame
 * context (see .h): a dense array of pairs, an open-addressing index over
 * it rebuilt at each frame, and each pair's lists of serials. */
#include "dat_reader_pairs.h"

#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define LIST_MIN 4u
#define SLOTS_MIN 64u

void mt_dpairs_free(mt_dpairs *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->p[i].list);
        free(s->p[i].plist);
    }
    free(s->p);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static size_t slot_of(const mt_dpairs *s, uint32_t trace, uint32_t tid)
{
    uint64_t key = (uint64_t)trace << 32 | tid;
    key *= 0x9e3779b97f4a7c15ull;
    return (size_t)(key >> 32) & (s->nslots - 1);
}

/* Pair i into the index (it has room: at most half full). */
static void index_put(mt_dpairs *s, size_t i)
{
    size_t k = slot_of(s, s->p[i].trace, s->p[i].tid);
    while (s->slots[k])
        k = (k + 1) & (s->nslots - 1);
    s->slots[k] = (uint32_t)i + 1;
}

/* The index for want pairs, at most half full, every pair put again; -1
 * when out of memory (the index is then as it was). */
static int index_build(mt_dpairs *s, size_t want)
{
    size_t n = SLOTS_MIN;
    while (n < 2 * want)
        n *= 2;
    if (n != s->nslots) {
        uint32_t *slots = malloc(n * sizeof *slots);
        if (!slots)
            return -1;
        free(s->slots);
        s->slots = slots;
        s->nslots = n;
    }
    memset(s->slots, 0, s->nslots * sizeof *s->slots);
    for (size_t i = 0; i < s->n; i++)
        index_put(s, i);
    return 0;
}

/* A pair's list for the next frame, when it has fewer entries than the
 * frame that ends allocated: one of that many (a power of two) at once,
 * rather than doublings that copy it (its contents are of no use).  Out
 * of memory: as it was. */
static void presize(mt_dpair *p)
{
    uint32_t want = LIST_MIN;
    while (want < p->pcount)
        want *= 2;
    if (p->cap >= want)
        return;
    uint32_t *l = malloc(want * sizeof *l);
    if (!l)
        return;
    free(p->list);
    p->list = l;
    p->cap = want;
}

/* Pair p at a frame's end: its list becomes its frame before's, and the
 * old one of the frame before its list for the next frame if it has at
 * most four entries per allocation of the frame that ends, else it is
 * freed.  False (both freed) when it did not allocate in that frame. */
static bool hand_over(mt_dpair *p)
{
    uint32_t *old = p->plist, old_cap = p->pcap;
    if (!p->count) {
        free(p->list);
        free(old);
        return false;
    }
    p->plist = p->list;
    p->pcap = p->cap;
    p->pcount = p->count;
    p->list = NULL;
    p->cap = p->count = 0;
    if (old_cap <= 4u * p->pcount) {
        p->list = old;
        p->cap = old_cap;
        old = NULL;
    }
    free(old);
    presize(p);
    return true;
}

void mt_dpairs_new_frame(mt_dpairs *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (hand_over(&s->p[i]))
            s->p[n++] = s->p[i];
    s->n = n;
    if (s->nslots && index_build(s, n) != 0) /* a smaller index failed: keep the old size */
        index_build(s, s->nslots / 2);
}

mt_dpair *mt_dpairs_find_slow(mt_dpairs *s, uint32_t trace, uint32_t tid, uint32_t *hint)
{
    if (!s->nslots)
        return NULL;
    for (size_t k = slot_of(s, trace, tid);; k = (k + 1) & (s->nslots - 1)) {
        uint32_t i = s->slots[k];
        if (!i)
            return NULL;
        mt_dpair *p = &s->p[i - 1];
        if (p->trace == trace && p->tid == tid) {
            *hint = i - 1;
            return p;
        }
    }
}

static mt_errc nomem(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory for the threads' blocks of a frame");
}

/* A new pair (trace, tid), indexed; NULL when out of memory. */
static mt_dpair *pair_new(mt_dpairs *s, uint32_t trace, uint32_t tid, uint32_t *hint)
{
    if (2 * (s->n + 1) > s->nslots && index_build(s, s->n + 1) != 0)
        return NULL;
    if (mt_grow((void **)&s->p, &s->cap, s->n + 1, sizeof *s->p) != 0)
        return NULL;
    s->p[s->n] = (mt_dpair){trace, tid, 0, 0, 0, 0, NULL, NULL};
    index_put(s, s->n);
    *hint = (uint32_t)s->n;
    return &s->p[s->n++];
}

mt_errc mt_dpairs_add_slow(mt_dpairs *s, uint32_t trace, uint32_t tid, uint32_t *hint,
                           uint32_t serial, mt_err *err)
{
    mt_dpair *p = mt_dpairs_find(s, trace, tid, hint); /* the hint's pair is full, mostly */
    if (!p && !(p = pair_new(s, trace, tid, hint)))
        return nomem(err);
    if (p->count == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : LIST_MIN;
        uint32_t *l = realloc(p->list, cap * sizeof *l);
        if (!l)
            return nomem(err);
        p->list = l;
        p->cap = cap;
    }
    p->list[p->count++] = serial;
    return MT_OK;
}
