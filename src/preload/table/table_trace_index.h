/* table_trace_index.h -- the trace index's layout and its lock-free read side.
 *
 * Backtrace -> trace id goes through MT_TRACE_SHARDS open-addressing
 * indexes of ids (linear probing, at most half full, no deletions).  Each
 * shard's current array is published as one word, mt_trace_index[shard]:
 * the array's address (64-byte aligned) with log2 of its capacity in the
 * low 6 bits, so a reader gets address and capacity from one load and can
 * never pair an array with another array's capacity.
 *
 * A slot holds 0 (empty) or id | tag << MT_TIDX_ID_BITS, where the tag is
 * the hash's top 10 bits: a probe that lands on another trace is told apart
 * without touching its definition 1023 times in 1024 (a different tag is a
 * different hash).  Id 0 (the overflow trace) is never indexed, so a slot
 * is never 0 once filled.
 *
 * Writers (table_trace_index.c) hold the shard's lock and are the authority:
 * they compare whole backtraces and create traces.  A trace's definition
 * (mt_trace_def, and its `key`) is complete before its slot is stored with
 * release, and a grown array is complete before it is published with
 * release; a slot changes once, 0 -> filled.  An array replaced by a larger
 * one is never freed (a reader may still be probing it): the arrays come
 * from an append-only arena, where the replaced ones of a shard sum to less
 * than its current one, and stay counted in tracker_bytes.
 *
 * mt_trace_find() is the readers' lookup: no lock, no store, so it is safe
 * from any thread at any time, a signal handler included.  It loads the
 * word and each slot with acquire, which makes the trace behind a slot
 * visible (directly from the inserting writer, or through the chain of
 * shard lock and array publication when the slot was copied by a growth).
 * It trusts the 64-bit hash, compared with the trace's `key` in its
 * counters' cache line (table_trace.h), the line the hook updates next:
 * the hash folds in every frame and the count, has full avalanche, and
 * each step is a bijection of the frame (core_hash.h), so two traces that
 * differ in a single frame never collide, and the odds that two of N
 * traces share all 64 bits are below N^2 / 2^65 (2^-25 for a million
 * traces).  A miss (trace new, slot not yet stored, or an array that a
 * growth already replaced) is not an answer: the caller goes to
 * mt_trace_intern(), which locks and compares the frames themselves.
 */
#ifndef MT_TRACE_INDEX_H
#define MT_TRACE_INDEX_H

#include "table_trace.h"
#include "table_trace_places.h"

#define MT_TRACE_SHARDS 16u /* locked apart, so that threads creating traces rarely wait */
#define MT_TIDX_ID_BITS 22u
#define MT_TIDX_ID_MASK ((1u << MT_TIDX_ID_BITS) - 1)
#define MT_TIDX_LOG2_MASK ((uintptr_t)63) /* low bits of a published word */
_Static_assert(MT_TRACE_MAX <= (1u << MT_TIDX_ID_BITS), "an id fits beside the tag");

bool mt_tidx_init(void); /* from mt_traces_init() */

/* The id of the backtrace, creating it on first sight: the authoritative,
 * locked lookup.  Takes one shard lock; never allocates through the hooked
 * allocator.  MT_TRACE_OVERFLOW if the trace could not be created. */
uint32_t mt_trace_intern(const uint64_t *frames, uint32_t n, uint64_t hash, uint16_t flags,
                         uint64_t now_ns);

/* Retires every trace with a frame in one of the n modules a dlclose
 * unloaded: no lookup finds it again, so a backtrace taken later gets an id
 * of its own even when its addresses are those of a retired trace (another
 * library loaded where the unloaded one was: its traces must not be named
 * from the one that held those addresses before), unless the same build of
 * the module is back at its place (table_trace_places.h): then the trace is
 * given back.  The dlclose hook's, after the real dlclose (hook_dl.c); the
 * hooks' paths are unchanged.  See "Retired traces" at the top of
 * table_trace_index.c. */
void mt_traces_retire(const mt_code_range *gone, uint32_t n);

/* The key of a retired trace whose hash is h: never 0 (the trace stays
 * ready), never h, and its top bits are not h's, so that no lookup ever
 * returns it: a slot's tag is h's top bits, and a hash that matched the
 * key would have other top bits (mt_trace_find checks the tag first). */
static inline uint64_t mt_trace_retired_key(uint64_t h)
{
    return ~h | 1;
}

/* fork support: take/release every shard lock. */
void mt_traces_lock_all(void);
void mt_traces_unlock_all(void);

/* Published word of each shard; never 0 (an empty one-slot array at
 * first). */
extern _Atomic uintptr_t mt_trace_index[MT_TRACE_SHARDS];

static inline uint32_t mt_tidx_shard(uint64_t hash)
{
    return (uint32_t)hash & (MT_TRACE_SHARDS - 1);
}

/* First slot to probe, before masking with capacity - 1. */
static inline uint32_t mt_tidx_home(uint64_t hash)
{
    return (uint32_t)(hash >> 32);
}

static inline uint32_t mt_tidx_slot(uint32_t id, uint64_t hash)
{
    return id | (uint32_t)(hash >> (32 + MT_TIDX_ID_BITS)) << MT_TIDX_ID_BITS;
}

/* Whether slot value v may hold the trace of this hash. */
static inline bool mt_tidx_tag_match(uint32_t v, uint64_t hash)
{
    return ((v ^ mt_tidx_slot(0, hash)) & ~MT_TIDX_ID_MASK) == 0;
}

static inline _Atomic uint32_t *mt_tidx_slots(uintptr_t word)
{
    return (_Atomic uint32_t *)(word & ~MT_TIDX_LOG2_MASK);
}

static inline uint32_t mt_tidx_mask(uintptr_t word)
{
    return (1u << (word & MT_TIDX_LOG2_MASK)) - 1;
}

/* The id of the backtrace if the index has it, else MT_TRACE_OVERFLOW (0):
 * then ask mt_trace_intern().  Lock-free; see the top of the file for what
 * it compares. */
static inline uint32_t mt_trace_find(uint64_t hash)
{
    uintptr_t w = atomic_load_explicit(&mt_trace_index[mt_tidx_shard(hash)], memory_order_acquire);
    _Atomic uint32_t *slots = mt_tidx_slots(w);
    uint32_t mask = mt_tidx_mask(w);
    for (uint32_t j = mt_tidx_home(hash) & mask;; j = (j + 1) & mask) {
        uint32_t v = atomic_load_explicit(&slots[j], memory_order_acquire);
        if (!v)
            return MT_TRACE_OVERFLOW;
        if (!mt_tidx_tag_match(v, hash))
            continue;
        uint32_t id = v & MT_TIDX_ID_MASK;
        if (MT_LIKELY(atomic_load_explicit(&mt_trace_get(id)->key, memory_order_relaxed) == hash))
            return id;
    }
}

/* Backtrace -> id: the lock-free lookup, then the locked one that creates
 * the trace if it is new.  MT_TRACE_OVERFLOW if it could not be created. */
static inline uint32_t mt_trace_id(const uint64_t *frames, uint32_t n, uint64_t hash,
                                   uint16_t flags, uint64_t now_ns)
{
    uint32_t id = mt_trace_find(hash);
    return MT_LIKELY(id) ? id : mt_trace_intern(frames, n, hash, flags, now_ns);
}

#endif
