/* record_tick.c -- tick order: a run's events sorted by trace, frees of
 * older blocks first, each allocation followed by its free when the run
 * holds it (record_tick.h says why and what is kept).
 *
 * Two passes over the run: one pairs frees with the run's allocations at
 * their address (a table of 2 x MT_RT_EVENTS_MAX slots, stamped with the
 * run's number so that it is never cleared); one stable radix sort by
 * trace of each list, 11 bits a digit (8 for a run of fewer than BIG_RUN
 * events; as many passes as the largest id needs: two for the bench's
 * 1,024 traces, ids 1,027 to 2,888).  Writer thread only.
 */
#define _GNU_SOURCE
#include "record_tick.h"

#include "core_assert.h"
#include "core_os_memory.h"

#include <string.h>

#define SLOTS_BITS 14u /* 2 x MT_RT_EVENTS_MAX slots: at most half full */
#define NONE UINT32_MAX
#define DIGIT_BITS 11u
#define SMALL_RUN 32u /* insertion sort below this */
#define SMALL_DIGIT_BITS 8u
#define BIG_RUN 1024u /* DIGIT_BITS a digit from this on, SMALL_DIGIT_BITS below */

_Static_assert((1u << SLOTS_BITS) >= 2u * MT_RT_EVENTS_MAX, "the pairing table at most half full");

/* The run's allocation at an address, while its block is not freed. */
typedef struct rt_slot {
    uint64_t addr;
    uint32_t idx; /* NONE: its block was freed in the run */
    uint32_t run; /* the run that wrote the slot; another: empty */
} rt_slot;

typedef struct rt_scratch {
    mt_rec_event ev[MT_RT_EVENTS_MAX];
    uint32_t order[MT_RT_EVENTS_MAX];
    uint32_t frees[MT_RT_EVENTS_MAX], allocs[MT_RT_EVENTS_MAX], tmp[MT_RT_EVENTS_MAX];
    uint32_t partner[MT_RT_EVENTS_MAX]; /* an allocation's free in the run, or NONE */
    mt_rt_key keys[MT_RT_EVENTS_MAX], ktmp[MT_RT_EVENTS_MAX]; /* sorts by size, by ref */
    rt_slot slots[1u << SLOTS_BITS];
    uint32_t run;
} rt_scratch;

static rt_scratch *g_rt; /* the writer's; mapped once */

bool mt_rt_ready(void)
{
    if (!g_rt)
        g_rt = mt_os_alloc(sizeof *g_rt); /* zeroed: every slot of run 0, which is never used */
    return g_rt != NULL;
}

void mt_rt_release(void)
{
    rt_scratch *s = g_rt;
    g_rt = NULL; /* first, as mt_rbuf_free */
    mt_os_free(s, sizeof *s);
}

mt_rec_event *mt_rt_events(void)
{
    return g_rt ? g_rt->ev : NULL;
}

static rt_slot *slot_of(rt_scratch *s, uint64_t addr)
{
    uint64_t i = (addr * 0x9e3779b97f4a7c15ull) >> (64u - SLOTS_BITS);
    for (;; i = (i + 1) & ((1u << SLOTS_BITS) - 1)) {
        rt_slot *sl = &s->slots[i];
        if (sl->run != s->run || sl->addr == addr)
            return sl; /* empty, or addr's: terminates, the table is at most half full */
    }
}

/* Is free f the free of allocation a's block (same trace, size, birth)? */
static bool frees_block(const mt_rec_event *f, const mt_rec_event *a)
{
    return mt_rev_trace(f) == mt_rev_trace(a) && mt_rev_size(f) == mt_rev_size(a) &&
           mt_rev_birth_ms(f) == a->t_ns / 1000000u;
}

/* Splits the run into frees of older blocks and allocations, and pairs
 * each allocation with its free when the run holds it. */
static void pair(rt_scratch *s, const mt_rec_event *ev, uint32_t n, uint32_t *nf, uint32_t *na)
{
    if (++s->run == 0) { /* wrapped: forget every slot once */
        memset(s->slots, 0, sizeof s->slots);
        s->run = 1;
    }
    uint32_t f = 0, a = 0;
    for (uint32_t i = 0; i < n; i++) {
        rt_slot *sl = slot_of(s, ev[i].addr);
        bool here = sl->run == s->run;
        if (mt_rev_kind(&ev[i]) == MT_DAT_EV_ALLOC) {
            *sl = (rt_slot){ev[i].addr, i, s->run};
            s->partner[i] = NONE;
            s->allocs[a++] = i;
        } else if (here && sl->idx != NONE && frees_block(&ev[i], &ev[sl->idx])) {
            s->partner[sl->idx] = i;
            sl->idx = NONE;
        } else {
            s->frees[f++] = i;
        }
    }
    *nf = f;
    *na = a;
}

static void insertion_sort(const mt_rec_event *ev, uint32_t *a, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = a[i], key = mt_rev_trace(&ev[x]), j = i;
        for (; j > 0 && mt_rev_trace(&ev[a[j - 1]]) > key; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Stable: a[0..n) by trace, tmp as room.  A run of fewer than BIG_RUN
 * events takes SMALL_DIGIT_BITS a digit: a pass's 2^DIGIT_BITS counters
 * cost more than such a run's events (callgrind, runs of 64 to 128 over
 * 3,000 traces: ~500 instructions per event with 11 bits, ~200 with 8). */
static void sort_by_trace(const mt_rec_event *ev, uint32_t *a, uint32_t n, uint32_t *tmp)
{
    if (n < SMALL_RUN) {
        insertion_sort(ev, a, n);
        return;
    }
    uint32_t all = 0;
    for (uint32_t i = 0; i < n; i++)
        all |= mt_rev_trace(&ev[a[i]]);
    unsigned bits = n < BIG_RUN ? SMALL_DIGIT_BITS : DIGIT_BITS;
    uint32_t mask = (1u << bits) - 1, *from = a, *to = tmp;
    for (unsigned shift = 0; shift == 0 || (all >> shift); shift += bits) {
        uint32_t at[1u << DIGIT_BITS];
        memset(at, 0, (mask + 1) * sizeof *at);
        for (uint32_t i = 0; i < n; i++)
            at[(mt_rev_trace(&ev[from[i]]) >> shift) & mask]++;
        for (uint32_t d = 0, sum = 0; d <= mask; d++) {
            uint32_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++)
            to[at[(mt_rev_trace(&ev[from[i]]) >> shift) & mask]++] = from[i];
        uint32_t *x = from;
        from = to;
        to = x;
    }
    if (from != a)
        memcpy(a, from, (size_t)n * sizeof *a);
}

mt_rt_key *mt_rt_keys(void)
{
    return g_rt ? g_rt->keys : NULL;
}

static void insertion_sort_keys(mt_rt_key *a, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        mt_rt_key x = a[i];
        uint32_t j = i;
        for (; j > 0 && a[j - 1].key > x.key; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Stable, by key: insertion sort when short, else a bottom-up merge sort
 * through the scratch's second array (no allocation: the writer runs
 * inside the allocator's hooks' process, qsort may malloc). */
void mt_rt_sort(mt_rt_key *a, uint32_t n)
{
    if (n < SMALL_RUN) {
        insertion_sort_keys(a, n);
        return;
    }
    MT_ASSERT(g_rt && a == g_rt->keys && n <= MT_RT_EVENTS_MAX);
    mt_rt_key *from = a, *to = g_rt->ktmp;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                to[o++] = from[j].key < from[i].key ? from[j++] : from[i++];
            while (i < mid)
                to[o++] = from[i++];
            while (j < hi)
                to[o++] = from[j++];
        }
        mt_rt_key *x = from;
        from = to;
        to = x;
    }
    if (from != a)
        memcpy(a, from, (size_t)n * sizeof *a);
}

/* Within each trace of a[0..n) (sorted by trace), by ascending size: a
 * version-7 file writes a size above the trace's last one as the gap. */
static void sort_sizes(rt_scratch *s, const mt_rec_event *ev, uint32_t *a, uint32_t n)
{
    for (uint32_t i = 0, j; i < n; i = j) {
        uint32_t trace = mt_rev_trace(&ev[a[i]]);
        for (j = i + 1; j < n && mt_rev_trace(&ev[a[j]]) == trace; j++)
            ;
        if (j - i < 2)
            continue;
        for (uint32_t k = i; k < j; k++)
            s->keys[k - i] = (mt_rt_key){mt_rev_size(&ev[a[k]]), a[k]};
        mt_rt_sort(s->keys, j - i);
        for (uint32_t k = i; k < j; k++)
            a[k] = s->keys[k - i].idx;
    }
}

const uint32_t *mt_rt_order(const mt_rec_event *ev, uint32_t n, bool by_size, uint32_t *nfrees)
{
    rt_scratch *s = g_rt;
    MT_ASSERT(s && n <= MT_RT_EVENTS_MAX);
    uint32_t nf, na, k = 0;
    pair(s, ev, n, &nf, &na);
    sort_by_trace(ev, s->frees, nf, s->tmp);
    sort_by_trace(ev, s->allocs, na, s->tmp);
    if (by_size)
        sort_sizes(s, ev, s->allocs, na);
    *nfrees = nf;
    memcpy(s->order, s->frees, (size_t)nf * sizeof *s->order);
    k = nf;
    for (uint32_t i = 0; i < na; i++) { /* blocks freed in the run, each with its free */
        uint32_t x = s->allocs[i];
        if (s->partner[x] == NONE)
            continue;
        s->order[k++] = x;
        s->order[k++] = s->partner[x];
    }
    for (uint32_t i = 0; i < na; i++) /* then the run's survivors: each is its address's last */
        if (s->partner[s->allocs[i]] == NONE)
            s->order[k++] = s->allocs[i];
    MT_ASSERT(k == n);
    return s->order;
}
