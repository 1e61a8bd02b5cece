/* trace_table.c -- deduplicate backtraces and hold per-trace counters.
 *
 * Traces live in two arrays indexed by id, the counters (one cache line
 * each) and the definitions (hash, frames, ...: 32 bytes), both reserved up
 * front (MAP_NORESERVE) and touched in order, so an id never moves and the
 * hooks and publisher can hold plain pointers.  Frames live in an
 * append-only arena, unpadded.  Lookup by
 * backtrace goes through MT_TRACE_SHARDS independently locked open-address
 * indexes of ids; the hooks reach it only on a miss of their per-thread
 * cache.  Collisions are resolved by comparing the frames, so two distinct
 * backtraces never share an id here.
 */
#include "trace_table.h"

#include "hash.h"
#include "os_memory.h"
#include "spinlock.h"

#include <string.h>

#define MT_TRACE_SHARDS 16u               /* each index takes at least a page */
#define FRAMES_ARENA_WORDS (512ull << 20) /* 4 GiB of address space, touched as used */

typedef struct {
    mt_spinlock lock;
    uint32_t cap; /* power of two */
    uint32_t count;
    uint32_t *ids; /* id + 1; 0 = empty */
} __attribute__((aligned(MT_CACHELINE))) trace_shard;

static trace_shard g_shards[MT_TRACE_SHARDS];
mt_trace *mt_traces;
mt_trace_def *mt_trace_defs;
static _Atomic uint32_t g_next_id;
static uint64_t *g_frames;
static _Atomic uint64_t g_frames_used; /* words */

bool mt_traces_init(void)
{
    mt_traces = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(mt_trace));
    mt_trace_defs = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(mt_trace_def));
    g_frames = mt_os_reserve(FRAMES_ARENA_WORDS * sizeof(uint64_t));
    if (!mt_traces || !mt_trace_defs || !g_frames)
        return false;
    /* Id 0: the overflow trace, no frames. */
    atomic_store_explicit(&g_next_id, 1, memory_order_relaxed);
    atomic_store_explicit(&mt_traces[0].ready, 1, memory_order_release);
    mt_os_account(sizeof(mt_trace) + sizeof(mt_trace_def));
    return true;
}

uint32_t mt_trace_count(void)
{
    uint32_t n = atomic_load_explicit(&g_next_id, memory_order_acquire);
    return n > MT_TRACE_MAX ? MT_TRACE_MAX : n;
}

static bool same_trace(const mt_trace_def *d, const uint64_t *frames, uint32_t n, uint64_t hash)
{
    return d->hash == hash && d->nframes == n && memcmp(d->frames, frames, n * sizeof *frames) == 0;
}

static bool shard_grow(trace_shard *s)
{
    uint32_t ncap = s->cap ? s->cap * 2 : 1024; /* 4 KiB: one page */
    uint32_t *nids = mt_os_alloc(ncap * sizeof(uint32_t));
    if (!nids)
        return false;
    for (uint32_t i = 0; i < s->cap; i++) {
        uint32_t v = s->ids[i];
        if (!v)
            continue;
        uint32_t j = (uint32_t)(mt_trace_defs[v - 1].hash >> 32) & (ncap - 1);
        while (nids[j])
            j = (j + 1) & (ncap - 1);
        nids[j] = v;
    }
    mt_os_free(s->ids, s->cap * sizeof(uint32_t));
    s->ids = nids;
    s->cap = ncap;
    return true;
}

static const uint64_t *store_frames(const uint64_t *frames, uint32_t n)
{
    uint64_t at = atomic_fetch_add_explicit(&g_frames_used, n, memory_order_relaxed);
    if (at + n > FRAMES_ARENA_WORDS)
        return NULL;
    memcpy(&g_frames[at], frames, n * sizeof *frames);
    mt_os_account((int64_t)(n * sizeof *frames));
    return &g_frames[at];
}

/* Creates trace `id`; the caller holds the shard lock. */
static bool trace_create(uint32_t id, const uint64_t *frames, uint32_t n, uint64_t hash,
                         uint16_t flags, uint64_t now_ns)
{
    const uint64_t *stored = store_frames(frames, n);
    if (!stored)
        return false;
    mt_trace_def *d = &mt_trace_defs[id];
    d->hash = hash;
    d->frames = stored;
    d->nframes = n;
    d->flags = flags;
    d->first_seen_ns = now_ns;
    mt_os_account(sizeof(mt_trace) + sizeof(mt_trace_def));
    atomic_store_explicit(&mt_traces[id].ready, 1, memory_order_release);
    return true;
}

uint32_t mt_trace_intern(const uint64_t *frames, uint32_t n, uint64_t hash, uint16_t flags,
                         uint64_t now_ns)
{
    trace_shard *s = &g_shards[hash & (MT_TRACE_SHARDS - 1)];
    uint32_t result = MT_TRACE_OVERFLOW;
    mt_spin_lock(&s->lock);
    if ((s->count + 1) * 2 > s->cap && !shard_grow(s))
        goto out;
    uint32_t j = (uint32_t)(hash >> 32) & (s->cap - 1);
    for (; s->ids[j]; j = (j + 1) & (s->cap - 1)) {
        if (same_trace(&mt_trace_defs[s->ids[j] - 1], frames, n, hash)) {
            result = s->ids[j] - 1;
            goto out;
        }
    }
    uint32_t id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
    if (id >= MT_TRACE_MAX) {
        atomic_store_explicit(&g_next_id, MT_TRACE_MAX, memory_order_relaxed);
        goto out;
    }
    if (!trace_create(id, frames, n, hash, flags, now_ns)) {
        /* Id burnt without frames: publish it as an empty, ready trace. */
        atomic_store_explicit(&mt_traces[id].ready, 1, memory_order_release);
        goto out;
    }
    s->ids[j] = id + 1;
    s->count++;
    result = id;
out:
    mt_spin_unlock(&s->lock);
    return result;
}

void mt_traces_lock_all(void)
{
    for (unsigned i = 0; i < MT_TRACE_SHARDS; i++)
        mt_spin_lock(&g_shards[i].lock);
}

void mt_traces_unlock_all(void)
{
    for (unsigned i = 0; i < MT_TRACE_SHARDS; i++)
        mt_spin_unlock(&g_shards[i].lock);
}
