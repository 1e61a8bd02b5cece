/* table_trace_index.c -- the trace index's writer side: backtrace -> id, creating
 * the trace on first sight.
 *
 * MT_TRACE_SHARDS open-addressing indexes of ids, each behind its own spin
 * lock; the layout, the publication protocol and the lock-free readers are
 * in table_trace_index.h.  Here, under the shard's lock, collisions are resolved
 * by comparing the frames, so two distinct backtraces never get one id.
 * The hooks come here only when mt_trace_find() missed: for a new trace,
 * or rarely after a race with a growth.
 *
 * Arrays are never freed (a reader may be probing a replaced one), so they
 * come from an append-only arena of address space reserved up front and
 * counted in tracker_bytes as its pages are touched.  Without the page
 * rounding of one mapping per array, the 16 shards' first arrays take
 * 32 KiB, not 64.
 *
 * Retired traces.  A trace is its addresses, and addresses are reused: a
 * library unloaded and another loaded where it was has other code at the
 * same addresses.  Viewers name a trace's frames from the modules loaded
 * when it was taken (an unload is stamped with the next trace id:
 * publish_modules.c), so a trace taken in the second library must not get
 * the id of one taken in the first.  When a dlclose unloads modules, every
 * trace with a frame in them is retired (mt_traces_retire): under its
 * shard's lock, its `key` becomes mt_trace_retired_key(hash), which the
 * lock-free lookup never matches, and the locked one skips it (same_trace
 * compares the key too).  Its slot stays, as a tombstone that probes pass
 * over; its counters and definition stay too (its blocks are freed under
 * its id).  A backtrace seen after that gets a new id, created beyond the
 * unload's stamp.  The hooks' paths do not change: the scan is the
 * dlclose's, over the traces that can be in the modules (taken since they
 * were loaded, or given back: mt_traces_retire) and their frames.  What is left is the window
 * hook_dl.c describes: a library loaded by another thread at the unloaded
 * one's place between the real dlclose and the scan.
 * Given back: the same build of the library loaded again at its place (a
 * plugin run in a loop) would get new ids for its traces at each life, and
 * each dlclose would scan more of them.  So when the locked lookup misses
 * and a retired trace has the backtrace, and the module now at its frames
 * is the build they were taken in (table_trace_places.c: the build-id
 * where it was), its key is made live again and its id returned: viewers
 * name it from that build's module, as before.
 */
#include "table_trace_index.h"

#include "core_os_memory.h"
#include "core_spinlock.h"

#include <string.h>

#define MIN_CAP_LOG2 9u /* 512 slots, 2 KiB: room for 256 traces */
_Static_assert(MIN_CAP_LOG2 >= 4, "arrays of >= 16 slots keep the arena 64-byte aligned");
/* Every shard's arrays sum to less than twice its current one, which is at
 * most 4 slots per trace (it grows at half full): 8 slots per trace. */
#define ARENA_SLOTS (8ull * MT_TRACE_MAX + (2ull * MT_TRACE_SHARDS << MIN_CAP_LOG2))

/* Writer state of a shard; its array is mt_trace_index[shard]. */
typedef struct {
    mt_spinlock lock;
    uint32_t count;
} __attribute__((aligned(MT_CACHELINE))) trace_shard;

/* What every shard publishes until its first trace: one empty slot. */
static _Atomic uint32_t g_empty_slots[1] __attribute__((aligned(64)));

static trace_shard g_shards[MT_TRACE_SHARDS];
_Atomic uintptr_t mt_trace_index[MT_TRACE_SHARDS] __attribute__((aligned(MT_CACHELINE))) = {
    [0 ... MT_TRACE_SHARDS - 1] = (uintptr_t)g_empty_slots};
static _Atomic uint32_t *g_arena;
static _Atomic uint64_t g_arena_used; /* slots */

bool mt_tidx_init(void)
{
    g_arena = mt_os_reserve(ARENA_SLOTS * sizeof(uint32_t));
    return g_arena != NULL;
}

/* n zeroed slots from the arena, 64-byte aligned (n is a power of two >=
 * 16); NULL when it is used up.  Its pages are counted as first touched:
 * the ranges handed out tile the arena, so the page counts add up. */
static _Atomic uint32_t *arena_take(uint64_t n)
{
    uint64_t at = atomic_fetch_add_explicit(&g_arena_used, n, memory_order_relaxed);
    if (at + n > ARENA_SLOTS)
        return NULL;
    size_t touched = mt_os_whole_pages((at + n) * sizeof(uint32_t));
    mt_os_account((int64_t)(touched - mt_os_whole_pages(at * sizeof(uint32_t))));
    return &g_arena[at];
}

/* Copies the shard's slots into an array twice as large and publishes it.
 * Caller holds the shard lock. */
static bool shard_grow(uint32_t shard)
{
    uintptr_t w = atomic_load_explicit(&mt_trace_index[shard], memory_order_relaxed);
    _Atomic uint32_t *old = mt_tidx_slots(w);
    uint32_t cap = mt_tidx_mask(w) + 1;
    uintptr_t nlog2 = (w & MT_TIDX_LOG2_MASK) + 1;
    if (nlog2 < MIN_CAP_LOG2)
        nlog2 = MIN_CAP_LOG2;
    uint32_t nmask = (1u << nlog2) - 1;
    _Atomic uint32_t *nslots = arena_take(nmask + 1);
    if (!nslots)
        return false;
    for (uint32_t i = 0; i < cap; i++) {
        uint32_t v = atomic_load_explicit(&old[i], memory_order_relaxed);
        if (!v)
            continue;
        uint64_t hash = mt_trace_def_get(v & MT_TIDX_ID_MASK)->hash;
        uint32_t j = mt_tidx_home(hash) & nmask;
        while (atomic_load_explicit(&nslots[j], memory_order_relaxed))
            j = (j + 1) & nmask;
        atomic_store_explicit(&nslots[j], v, memory_order_relaxed);
    }
    /* Release: the copied slots (and the traces behind them) before the
     * array, for readers that load the word with acquire. */
    atomic_store_explicit(&mt_trace_index[shard], (uintptr_t)nslots | nlog2, memory_order_release);
    return true;
}

/* The key of a trace not retired (mt_trace_create: a crafted hash of 0
 * has key 1). */
static uint64_t live_key(uint64_t hash)
{
    return hash ? hash : 1;
}

/* Whether trace id is this backtrace with this key (live or retired),
 * under the shard lock, which a retirement or a give-back holds. */
static bool same_keyed(uint32_t id, const uint64_t *frames, uint32_t n, uint64_t hash, uint64_t key)
{
    const mt_trace_def *d = mt_trace_def_get(id);
    return d->hash == hash && d->nframes == n &&
           atomic_load_explicit(&mt_trace_get(id)->key, memory_order_relaxed) == key &&
           memcmp(mt_trace_def_frames(d), frames, n * sizeof *frames) == 0;
}

/* Whether trace id is this backtrace, and not retired (under the shard
 * lock, which its retirement held). */
static bool same_trace(uint32_t id, const uint64_t *frames, uint32_t n, uint64_t hash)
{
    return same_keyed(id, frames, n, hash, live_key(hash));
}

/* The slot holding this backtrace's id, or the empty slot where it goes.
 * Caller holds the shard lock. */
static _Atomic uint32_t *locked_probe(uint32_t shard, const uint64_t *frames, uint32_t n,
                                      uint64_t hash)
{
    uintptr_t w = atomic_load_explicit(&mt_trace_index[shard], memory_order_relaxed);
    _Atomic uint32_t *slots = mt_tidx_slots(w);
    uint32_t mask = mt_tidx_mask(w);
    for (uint32_t j = mt_tidx_home(hash) & mask;; j = (j + 1) & mask) {
        uint32_t v = atomic_load_explicit(&slots[j], memory_order_relaxed);
        if (!v || (mt_tidx_tag_match(v, hash) && same_trace(v & MT_TIDX_ID_MASK, frames, n, hash)))
            return &slots[j];
    }
}

/* A retired trace of this backtrace whose module's build is back at its
 * place (see the top), made live again; 0 if none.  Caller holds the
 * shard lock (the retirement's, which it undoes). */
static uint32_t give_back(uint32_t shard, const uint64_t *frames, uint32_t n, uint64_t hash)
{
    uintptr_t w = atomic_load_explicit(&mt_trace_index[shard], memory_order_relaxed);
    _Atomic uint32_t *slots = mt_tidx_slots(w);
    uint32_t mask = mt_tidx_mask(w);
    for (uint32_t j = mt_tidx_home(hash) & mask;; j = (j + 1) & mask) {
        uint32_t v = atomic_load_explicit(&slots[j], memory_order_relaxed);
        if (!v)
            return 0;
        uint32_t id = v & MT_TIDX_ID_MASK;
        _Atomic uint64_t *key = &mt_trace_get(id)->key;
        if (mt_tidx_tag_match(v, hash) &&
            same_keyed(id, frames, n, hash, mt_trace_retired_key(hash)) &&
            mt_places_same(id, frames, n)) {
            /* relaxed: its definition was published when it was made */
            atomic_store_explicit(key, live_key(hash), memory_order_relaxed);
            mt_places_given_back(id); /* older than its module's life */
            return id;
        }
    }
}

uint32_t mt_trace_intern(const uint64_t *frames, uint32_t n, uint64_t hash, uint16_t flags,
                         uint64_t now_ns)
{
    uint32_t shard = mt_tidx_shard(hash);
    trace_shard *s = &g_shards[shard];
    uint32_t id = MT_TRACE_OVERFLOW;
    mt_spin_lock(&s->lock);
    uintptr_t w = atomic_load_explicit(&mt_trace_index[shard], memory_order_relaxed);
    if ((s->count + 1) * 2 <= mt_tidx_mask(w) + 1 || shard_grow(shard)) {
        _Atomic uint32_t *slot = locked_probe(shard, frames, n, hash);
        uint32_t v = atomic_load_explicit(slot, memory_order_relaxed);
        if (v) {
            id = v & MT_TIDX_ID_MASK;
        } else if (mt_places_any() && (id = give_back(shard, frames, n, hash))) {
            /* a retired trace, live again */
        } else if ((id = mt_trace_create(frames, n, hash, flags, now_ns)) != MT_TRACE_OVERFLOW) {
            /* Release: the trace's definition (and key) before its slot. */
            atomic_store_explicit(slot, mt_tidx_slot(id, hash), memory_order_release);
            s->count++;
        }
    }
    mt_spin_unlock(&s->lock);
    return id;
}

static bool in_ranges(const uint64_t *frames, uint32_t n, const mt_code_range *gone, uint32_t ng)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t g = 0; g < ng; g++)
            if (frames[i] - gone[g].lo < gone[g].hi - gone[g].lo)
                return true;
    return false;
}

/* Whether trace id is live (ready, not retired). */
static bool is_live(uint32_t id)
{
    uint64_t k = atomic_load_explicit(&mt_trace_get(id)->key, memory_order_acquire);
    return k && k == live_key(mt_trace_def_get(id)->hash);
}

/* Retires trace id if it is live and has a frame in gone.  A definition
 * is read only once its key says it is complete (acquire); the key changes
 * under the shard lock, where it is checked again. */
static void retire_one(uint32_t id, const mt_code_range *gone, uint32_t n)
{
    _Atomic uint64_t *key = &mt_trace_get(id)->key;
    uint64_t k = atomic_load_explicit(key, memory_order_acquire);
    const mt_trace_def *d = mt_trace_def_get(id);
    if (!k || k != live_key(d->hash) || !in_ranges(mt_trace_def_frames(d), d->nframes, gone, n))
        return; /* not ready (its creator's, in the window), not live, or not there */
    trace_shard *s = &g_shards[mt_tidx_shard(d->hash)];
    mt_spin_lock(&s->lock);
    /* Relaxed: the lookups that must miss it are this thread's, after the
     * dlclose, and those of threads that learn of the dlclose later (the
     * window at the top aside). */
    if (atomic_load_explicit(key, memory_order_relaxed) == k)
        atomic_store_explicit(key, mt_trace_retired_key(d->hash), memory_order_relaxed);
    mt_spin_unlock(&s->lock);
}

/* By id, not by the index's slots: the ids handed out are dense, the
 * slots at most half full and at least 512 per shard.  Only the ids a
 * trace taken in the modules can have: from the oldest module's `since`
 * (a plugin loaded since the last dlclose: only the traces taken since),
 * and the traces given back meanwhile, which are older (kept for the next
 * retirement if not retired now: another module's; read, not taken, so
 * that another thread's dlclose retiring at the same time sees them too). */
void mt_traces_retire(const mt_code_range *gone, uint32_t n)
{
    if (!n)
        return;
    uint32_t count = mt_trace_count();
    mt_places_add(gone, n, count); /* above every trace taken in them */
    uint32_t from = count, back[MT_PLACES_GIVEN_BACK];
    for (uint32_t g = 0; g < n; g++)
        from = gone[g].since < from ? gone[g].since : from;
    bool all = false;
    uint32_t nback = mt_places_read_given_back(back, &all);
    for (uint32_t id = all || !from ? 1 : from; id < count; id++)
        retire_one(id, gone, n);
    for (uint32_t i = 0; i < nback; i++)
        if (!all && back[i] < from)
            retire_one(back[i], gone, n);
    mt_places_prune_given_back(is_live); /* the live ones: for their own modules' unloads */
}

void mt_traces_lock_all(void)
{
    for (unsigned i = 0; i < MT_TRACE_SHARDS; i++)
        mt_spin_lock(&g_shards[i].lock);
    mt_places_lock(); /* after the shard locks, as give_back takes it */
}

void mt_traces_unlock_all(void)
{
    mt_places_unlock();
    for (unsigned i = 0; i < MT_TRACE_SHARDS; i++)
        mt_spin_unlock(&g_shards[i].lock);
}
