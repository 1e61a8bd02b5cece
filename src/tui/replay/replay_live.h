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

typedef struct mt_rgroup {
    uint64_t birth_ms;
    int64_t count, bytes;
    uint32_t trace;
    uint32_t used; /* 0 = empty slot */
} mt_rgroup;

typedef struct mt_rlive {
    mt_rgroup *slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
} mt_rlive;

void mt_rlive_init(mt_rlive *t);
void mt_rlive_free(mt_rlive *t);
void mt_rlive_clear(mt_rlive *t);

/* Add count blocks and bytes (either may be negative) to the group of
 * (trace, birth_ms); a group that drops to nothing is removed.  -1 when
 * out of memory. */
int mt_rlive_add(mt_rlive *t, uint32_t trace, uint64_t birth_ms, int64_t count, int64_t bytes);

/* The home slot of (trace, birth_ms) (cap > 0): Fibonacci hashing (the
 * top bits of key * 2^64/phi) of trace << 32 ^ birth_ms, so the keys of
 * one trace (births a millisecond apart) and of one millisecond (traces
 * one apart) both spread over the table.  One multiply: the hash is taken
 * twice per event (prefetch, add); a full mixer (splitmix64's) cost 20
 * instructions each (the bench recording: 28 fewer per event in all,
 * probing included).  cap >= 1024 (replay_live.c), so the shift is < 64. */
static inline size_t mt_rlive_home(const mt_rlive *t, uint32_t trace, uint64_t birth_ms)
{
    uint64_t h = ((uint64_t)trace << 32 ^ birth_ms) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (__builtin_clzll(t->cap) + 1)); /* cap = 2^bits: the top bits */
}

/* A hint: the group of (trace, birth_ms) is about to be added to; its home
 * slot is fetched into the cache (nothing changes).  Inline: it is taken
 * for every event. */
static inline void mt_rlive_prefetch(const mt_rlive *t, uint32_t trace, uint64_t birth_ms)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[mt_rlive_home(t, trace, birth_ms)], 1);
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
