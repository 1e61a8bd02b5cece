/* record_owner.c -- who allocated each block of the frame, for version 7's
 * references by thread (see .h): per allocation ordinal f, its trace
 * serial k, its thread and its index j among that thread's allocations of
 * the trace; per (trace, thread), n and p in an open-addressing hash
 * (linear probing, no deletion: a rebuild drops the pairs of neither this
 * frame nor the one before).
 */
#include "record_owner.h"

#include "core_assert.h"
#include "core_os_memory.h"
#include "dat_format.h"

#include <string.h>

#define K_BITS 19u   /* k and j: below MT_DAT_FRAME_ALLOCS_MAX */
#define TID_BITS 26u /* the thread in an info word; pid_max is at most 2^22 */
#define TID_NONE ((1u << TID_BITS) - 1u)
#define HASH_MIN_BITS 12u
#define HASH_MAX_BITS 21u
#define INFO_BYTES ((size_t)MT_DAT_FRAME_ALLOCS_MAX * sizeof(uint64_t))
#define LOW(bits) (((uint64_t)1 << (bits)) - 1)

_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= (1u << K_BITS), "k and j fit an info word");
_Static_assert(2 * K_BITS + TID_BITS == 64, "an info word is k | j | thread");

/* n(trace, tid) and p(trace, tid) of frame `epoch`; epoch 0: an empty slot. */
typedef struct ro_ent {
    uint32_t trace, tid, epoch, n, p, pad;
} ro_ent;

static struct {
    uint64_t *info, *pinfo; /* k | j << K_BITS | thread << 2 K_BITS, per f */
    uint32_t n, pn;         /* allocations noted in each (f < n) */
    ro_ent *hash;
    unsigned bits;       /* the hash has 2^bits slots */
    uint32_t used;       /* slots taken, stale ones included */
    uint32_t epoch;      /* this frame's number (>= 2 once a file began) */
    uint32_t full_epoch; /* no pair could be added in this frame */
    ro_ent *last;        /* the entry found last (tick order: the same trace) */
} g;

static size_t hash_bytes(unsigned bits)
{
    return ((size_t)1 << bits) * sizeof(ro_ent);
}

static ro_ent *probe(ro_ent *h, unsigned bits, uint32_t trace, uint32_t tid)
{
    uint64_t mask = LOW(bits);
    uint64_t i = (((uint64_t)trace << 32 | tid) * 0x9e3779b97f4a7c15ull) >> (64u - bits);
    for (;; i = (i + 1) & mask) {
        ro_ent *e = &h[i];
        if (!e->epoch || (e->trace == trace && e->tid == tid))
            return e; /* terminates: at most half full */
    }
}

/* A table for the pairs of this frame and the one before, at most a
 * quarter full with them; false if impossible. */
static bool rebuild(void)
{
    uint32_t live = 0;
    for (size_t i = 0; g.hash && i < ((size_t)1 << g.bits); i++)
        live += g.hash[i].epoch && g.hash[i].epoch + 1u >= g.epoch;
    unsigned bits = HASH_MIN_BITS;
    while (((uint64_t)live + 1) * 4 > ((uint64_t)1 << bits))
        bits++;
    ro_ent *h = bits <= HASH_MAX_BITS ? mt_os_alloc(hash_bytes(bits)) : NULL;
    if (!h)
        return false;
    for (size_t i = 0; g.hash && i < ((size_t)1 << g.bits); i++) {
        const ro_ent *e = &g.hash[i];
        if (e->epoch && e->epoch + 1u >= g.epoch)
            *probe(h, bits, e->trace, e->tid) = *e;
    }
    if (g.hash)
        mt_os_free(g.hash, hash_bytes(g.bits));
    g.hash = h;
    g.bits = bits;
    g.used = live;
    g.last = NULL;
    return true;
}

/* An empty slot for (trace, tid), or NULL: no room (nor any more in this
 * frame, so that no pair's count misses an allocation). */
static ro_ent *add(uint32_t trace, uint32_t tid)
{
    if (g.full_epoch == g.epoch)
        return NULL;
    if (!g.hash || ((uint64_t)g.used + 1) * 2 > ((uint64_t)1 << g.bits)) {
        if (!rebuild()) {
            g.full_epoch = g.epoch;
            return NULL;
        }
    }
    ro_ent *e = probe(g.hash, g.bits, trace, tid);
    *e = (ro_ent){.trace = trace, .tid = tid, .epoch = g.epoch};
    g.used++;
    return e;
}

/* The pair's entry, of this frame (reset when it is another's: p is the
 * frame before's n), added when `create`; NULL when there is none. */
static ro_ent *find(uint32_t trace, uint32_t tid, bool create)
{
    ro_ent *e = g.last;
    if (!e || e->trace != trace || e->tid != tid) {
        e = g.hash ? probe(g.hash, g.bits, trace, tid) : NULL;
        if (!e || !e->epoch) {
            if (!create || !(e = add(trace, tid)))
                return NULL;
        }
    }
    if (e->epoch != g.epoch) {
        e->p = e->epoch + 1u == g.epoch ? e->n : 0;
        e->n = 0;
        e->epoch = g.epoch;
    }
    g.last = e;
    return e;
}

bool mt_ro_note_alloc(uint32_t f, uint32_t trace, uint32_t tid, uint32_t k)
{
    if (!g.epoch) /* no file began (a test's writer): frames count from 2 */
        g.epoch = 2;
    ro_ent *e = find(trace, tid, true);
    uint32_t j = e ? e->n++ : 0; /* counted whatever becomes of the block, as a reader does */
    if (!g.info && !(g.info = mt_os_alloc(INFO_BYTES)))
        return false;
    MT_ASSERT(f < MT_DAT_FRAME_ALLOCS_MAX && k <= f && j <= f);
    uint64_t owner = e && tid < TID_NONE ? tid : TID_NONE;
    g.info[f] = k | (uint64_t)j << K_BITS | owner << (2 * K_BITS);
    g.n = f + 1;
    return true;
}

bool mt_ro_block(bool prev, uint32_t f, uint32_t trace, uint32_t tid, uint64_t *k, uint64_t *own)
{
    const uint64_t *info = prev ? g.pinfo : g.info;
    if (!info || f >= (prev ? g.pn : g.n))
        return false;
    uint64_t x = info[f];
    uint32_t j = (uint32_t)(x >> K_BITS & LOW(K_BITS)), owner = (uint32_t)(x >> (2 * K_BITS));
    *k = x & LOW(K_BITS);
    *own = UINT64_MAX;
    if (owner == TID_NONE || owner != tid)
        return true;
    const ro_ent *e = find(trace, tid, false);
    uint32_t count = e ? (prev ? e->p : e->n) : 0;
    if (j < count) /* always, but a release build checks it too: a wrong ref is a lying file */
        *own = count - 1u - j;
    return true;
}

/* The frame's number moves on by `by`; near a wrap, every pair is forgotten
 * (their counts with them: the frame before's blocks then name nothing). */
static void next_epoch(uint32_t by)
{
    if (g.epoch > UINT32_MAX - 8u) {
        if (g.hash)
            memset(g.hash, 0, hash_bytes(g.bits));
        g.used = 0;
        g.pn = 0;
        g.last = NULL;
        g.full_epoch = 0;
        g.epoch = 2;
        return;
    }
    g.epoch = g.epoch < 2 ? 2 : g.epoch + by;
}

void mt_ro_new_frame(void)
{
    uint64_t *x = g.pinfo;
    g.pinfo = g.info; /* not cleared: every f read was written in its frame */
    g.info = x;
    g.pn = g.n;
    g.n = 0;
    next_epoch(1);
}

void mt_ro_new_file(void)
{
    g.n = g.pn = 0;
    next_epoch(2); /* a frame between: no pair's count becomes a p */
}

void mt_ro_child_reset(void)
{
    if (g.info || g.pinfo || g.hash || g.epoch) /* a page the child does not write is not copied */
        memset(&g, 0, sizeof g);
}

void mt_ro_release(void)
{
    uint64_t *info = g.info, *pinfo = g.pinfo;
    ro_ent *h = g.hash;
    size_t hb = hash_bytes(g.bits);
    uint32_t epoch = g.epoch;
    memset(&g, 0, sizeof g); /* the pointers first, as mt_rbuf_free */
    g.epoch = epoch;
    mt_os_free(info, INFO_BYTES); /* NULL: nothing */
    mt_os_free(pinfo, INFO_BYTES);
    mt_os_free(h, hb);
}

uint64_t mt_ro_bytes(void)
{
    return (g.info ? INFO_BYTES : 0) + (g.pinfo ? INFO_BYTES : 0) +
           (g.hash ? hash_bytes(g.bits) : 0);
}
