/* replay_live.h -- the live blocks of a replayed recording, grouped by
 * (trace, birth millisecond): a count and bytes per group, in an
 * open-addressing hash table.
 *
 * Why: ages at a cursor need the births of the blocks still live, and the
 * recording gives each free its block's trace and birth millisecond (no
 * addresses).  Memory follows the live groups at the cursor, at most the
 * live blocks, never the recording.  Counts are signed: a free recorded by
 * one thread may come before the allocation another thread recorded. */
#ifndef MEMTOP_REPLAY_LIVE_H
#define MEMTOP_REPLAY_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A group as exported (and imported, for checkpoints). */
typedef struct mt_rgroup {
    uint64_t birth_ms;
    int64_t count, bytes;
    uint32_t trace;
    uint32_t used; /* 1 */
} mt_rgroup;

/* A slot of the table: 16 bytes, so that the random probes touch half the
 * memory (a cache miss per probe on a large table is most of their cost).
 * key: trace << 32 | (uint32_t)(birth_ms - base_ms).  val: 0 = empty;
 * else count (signed, the top MT_RVAL_COUNT_BITS) and bytes (signed, the
 * rest), the group born at base_ms + the key's low 32 bits; or, for a
 * group whose birth or sums do not fit, MT_RVAL_WIDE | an index into the
 * wide groups (which hold the whole birth: several slots may then have
 * one key). */
typedef struct mt_rslot {
    uint64_t key;
    uint64_t val;
} mt_rslot;

#define MT_RVAL_COUNT_BITS 24u
#define MT_RVAL_WIDE ((uint64_t)1 << 63) /* count field -2^23: never a packed count */

typedef struct mt_rlive {
    mt_rslot *slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
    uint64_t base_ms; /* set when the table is empty: the first birth - 2^31 */
    mt_rgroup *wide;  /* [wide_cap]; a free one has used 0, birth_ms = the next free one + 1 */
    size_t nwide, wide_cap;
    size_t wide_free; /* free list head: index + 1, 0 = empty */
    size_t nneg;      /* groups whose count is below zero (what mt_rlive_prune may drop) */
} mt_rlive;

void mt_rlive_init(mt_rlive *t);
void mt_rlive_free(mt_rlive *t);
void mt_rlive_clear(mt_rlive *t);

/* Add count blocks and bytes (either may be negative) to the group of
 * (trace, birth_ms); a group that drops to nothing is removed.  -1 when
 * out of memory. */
int mt_rlive_add(mt_rlive *t, uint32_t trace, uint64_t birth_ms, int64_t count, int64_t bytes);

/* The key of (trace, birth_ms) in a slot. */
static inline uint64_t mt_rlive_key(const mt_rlive *t, uint32_t trace, uint64_t birth_ms)
{
    return (uint64_t)trace << 32 | (uint32_t)(birth_ms - t->base_ms);
}

/* The home slot of a key (cap > 0): Fibonacci hashing (the top bits of
 * key * 2^64/phi), so the keys of one trace (births a millisecond apart)
 * and of one millisecond (traces one apart) both spread over the table.
 * One multiply: the hash is taken twice per event (prefetch, add); a full
 * mixer (splitmix64's) cost 20 instructions each (the bench recording: 28
 * fewer per event in all, probing included).  cap >= 1024
 * (replay_live.c), so the shift is < 64. */
static inline size_t mt_rlive_home(const mt_rlive *t, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (__builtin_clzll(t->cap) + 1)); /* cap = 2^bits: the top bits */
}

/* A hint: the group of (trace, birth_ms) is about to be added to; its home
 * slot is fetched into the cache (nothing changes).  Always inline: a copy
 * out of line has no side effect (a prefetch has none), and GCC 12 then
 * drops every call to it (it did, unseen, until this attribute). */
static inline __attribute__((always_inline)) void
mt_rlive_prefetch(const mt_rlive *t, uint32_t trace, uint64_t birth_ms)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[mt_rlive_home(t, mt_rlive_key(t, trace, birth_ms))], 1);
}

/* Slot i (< cap): true with its group in *g, false if it is empty.
 * Inline: the reports and checkpoints walk every slot. */
static inline bool mt_rlive_get(const mt_rlive *t, size_t i, mt_rgroup *g)
{
    const unsigned bytes_bits = 64u - MT_RVAL_COUNT_BITS;
    uint64_t val = t->slots[i].val, key = t->slots[i].key;
    if (!val)
        return false;
    if ((val >> bytes_bits) == MT_RVAL_WIDE >> bytes_bits) {
        *g = t->wide[val & (((uint64_t)1 << bytes_bits) - 1)];
        return true;
    }
    *g = (mt_rgroup){t->base_ms + (uint32_t)key, (int64_t)val >> bytes_bits,
                     (int64_t)(val << MT_RVAL_COUNT_BITS) >> MT_RVAL_COUNT_BITS,
                     (uint32_t)(key >> 32), 1};
    return true;
}

/* Drop the groups with fewer than zero blocks born before before_ms: the
 * frees of allocations the recording dropped, which no later event can
 * balance any more.  -1 when out of memory (nothing dropped). */
int mt_rlive_prune(mt_rlive *t, uint64_t before_ms);

/* The groups as a dense array (count entries, any order); NULL if out of
 * memory or empty.  free() it. */
mt_rgroup *mt_rlive_export(const mt_rlive *t);

/* Replace the contents with n groups (as exported).  -1 when out of memory. */
int mt_rlive_import(mt_rlive *t, const mt_rgroup *groups, size_t n);

#endif
