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

#define HASH_MIN_BITS 12u
#define HASH_MAX_BITS 21u
#define INFO_BYTES ((size_t)MT_DAT_FRAME_ALLOCS_MAX * sizeof(uint64_t))
#define LOW(bits) (((uint64_t)1 << (bits)) - 1)

_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= (1u << MT_RO_K_BITS), "k and j fit an info word");
_Static_assert(2 * MT_RO_K_BITS + MT_RO_TID_BITS == 64, "an info word is k | j | thread");

typedef mt_ro_ent ro_ent;

mt_ro_hot mt_ro_h;

static struct {
    uint32_t used;       /* slots taken, stale ones included */
    uint32_t full_epoch; /* no pair could be added in this frame */
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
    for (size_t i = 0; mt_ro_h.hash && i < ((size_t)1 << mt_ro_h.bits); i++)
        live += mt_ro_h.hash[i].epoch && mt_ro_h.hash[i].epoch + 1u >= mt_ro_h.epoch;
    unsigned bits = HASH_MIN_BITS;
    while (((uint64_t)live + 1) * 4 > ((uint64_t)1 << bits))
        bits++;
    ro_ent *h = bits <= HASH_MAX_BITS ? mt_os_alloc(hash_bytes(bits)) : NULL;
    if (!h)
        return false;
    for (size_t i = 0; mt_ro_h.hash && i < ((size_t)1 << mt_ro_h.bits); i++) {
        const ro_ent *e = &mt_ro_h.hash[i];
        if (e->epoch && e->epoch + 1u >= mt_ro_h.epoch)
            *probe(h, bits, e->trace, e->tid) = *e;
    }
    if (mt_ro_h.hash)
        mt_os_free(mt_ro_h.hash, hash_bytes(mt_ro_h.bits));
    mt_ro_h.hash = h;
    mt_ro_h.bits = bits;
    g.used = live;
    return true;
}

/* An empty slot for (trace, tid), or NULL: no room (nor any more in this
 * frame, so that no pair's count misses an allocation). */
static ro_ent *add(uint32_t trace, uint32_t tid)
{
    if (g.full_epoch == mt_ro_h.epoch)
        return NULL;
    if (!mt_ro_h.hash || ((uint64_t)g.used + 1) * 2 > ((uint64_t)1 << mt_ro_h.bits)) {
        if (!rebuild()) {
            g.full_epoch = mt_ro_h.epoch;
            return NULL;
        }
    }
    ro_ent *e = probe(mt_ro_h.hash, mt_ro_h.bits, trace, tid);
    *e = (ro_ent){.trace = trace, .tid = tid, .epoch = mt_ro_h.epoch};
    g.used++;
    return e;
}

mt_ro_ent *mt_ro_find_slow(uint32_t trace, uint32_t tid, bool create, uint32_t *hint)
{
    if (!mt_ro_h.epoch) /* no file began (a test's writer): frames count from 2 */
        mt_ro_h.epoch = 2;
    ro_ent *e = mt_ro_h.hash ? probe(mt_ro_h.hash, mt_ro_h.bits, trace, tid) : NULL;
    if ((!e || !e->epoch) && (!create || !(e = add(trace, tid))))
        return NULL;
    if (e->epoch != mt_ro_h.epoch) {
        e->p = e->epoch + 1u == mt_ro_h.epoch ? e->n : 0;
        e->n = 0;
        e->epoch = mt_ro_h.epoch;
    }
    *hint = (uint32_t)(e - mt_ro_h.hash);
    return e;
}

bool mt_ro_map_info(uint32_t f)
{
    if (!mt_ro_h.info && (mt_ro_h.info = mt_os_alloc(INFO_BYTES)) != NULL)
        mt_ro_h.first = f; /* the frame's allocations before f are unknown */
    return mt_ro_h.info != NULL;
}

/* The frame's number moves on by `by`; near a wrap, every pair is forgotten
 * (their counts with them: the frame before's blocks then name nothing). */
static void next_epoch(uint32_t by)
{
    if (mt_ro_h.epoch > UINT32_MAX - 8u) {
        if (mt_ro_h.hash)
            memset(mt_ro_h.hash, 0, hash_bytes(mt_ro_h.bits));
        g.used = 0;
        mt_ro_h.pn = 0;
        g.full_epoch = 0;
        mt_ro_h.epoch = 2;
        return;
    }
    mt_ro_h.epoch = mt_ro_h.epoch < 2 ? 2 : mt_ro_h.epoch + by;
}

void mt_ro_new_frame(void)
{
    uint64_t *x = mt_ro_h.pinfo;
    mt_ro_h.pinfo = mt_ro_h.info; /* not cleared: every f read was written in its frame */
    mt_ro_h.info = x;
    mt_ro_h.pn = mt_ro_h.n;
    mt_ro_h.pfirst = mt_ro_h.first;
    mt_ro_h.n = mt_ro_h.first = 0; /* mapped from the start, or first set when mapped */
    next_epoch(1);
}

void mt_ro_new_file(void)
{
    mt_ro_h.n = mt_ro_h.pn = mt_ro_h.first = mt_ro_h.pfirst = 0;
    next_epoch(2); /* a frame between: no pair's count becomes a p */
}

void mt_ro_child_reset(void)
{
    /* only if set: a page the child does not write is not copied */
    if (mt_ro_h.info || mt_ro_h.pinfo || mt_ro_h.hash || mt_ro_h.epoch) {
        memset(&mt_ro_h, 0, sizeof mt_ro_h);
        memset(&g, 0, sizeof g);
    }
}

void mt_ro_release(void)
{
    uint64_t *info = mt_ro_h.info, *pinfo = mt_ro_h.pinfo;
    ro_ent *h = mt_ro_h.hash;
    size_t hb = hash_bytes(mt_ro_h.bits);
    uint32_t epoch = mt_ro_h.epoch;
    memset(&mt_ro_h, 0, sizeof mt_ro_h); /* the pointers first, as mt_rbuf_free */
    memset(&g, 0, sizeof g);
    mt_ro_h.epoch = epoch;
    mt_os_free(info, INFO_BYTES); /* NULL: nothing */
    mt_os_free(pinfo, INFO_BYTES);
    mt_os_free(h, hb);
}

uint64_t mt_ro_bytes(void)
{
    return (mt_ro_h.info ? INFO_BYTES : 0) + (mt_ro_h.pinfo ? INFO_BYTES : 0) +
           (mt_ro_h.hash ? hash_bytes(mt_ro_h.bits) : 0);
}
