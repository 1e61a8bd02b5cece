/* table_trace.c -- the traces: ids, per-trace counters and definitions.
 *
 * Traces live in two arrays indexed by id, the counters (one cache line
 * each) and the definitions (hash, frames, ...: 24 bytes), both reserved up
 * front (MAP_NORESERVE) and touched in order, so an id never moves and the
 * hooks and publisher can hold plain pointers.  Frames live in an
 * append-only arena, unpadded.  Which backtrace has which id is the trace
 * index's job (table_trace_index.h, table_trace_index.c), which creates traces here.
 * At most MEMTOP_MAX_TRACES ids are handed out (table_trace.h): the arrays
 * are reserved for MT_TRACE_MAX, but only that many entries are touched.
 */
#include "table_trace.h"

#include "core_os_memory.h"
#include "table_trace_index.h"

#include <string.h>

#define FRAMES_ARENA_WORDS (512ull << 20) /* 4 GiB of address space, touched as used */
_Static_assert(FRAMES_ARENA_WORDS < UINT32_MAX, "a definition's frames_at is 32 bits");

mt_trace *mt_traces;
mt_trace_def *mt_trace_defs;
uint64_t *mt_trace_frames;
static _Atomic uint32_t g_next_id;
static _Atomic uint64_t g_frames_used; /* words */
static uint32_t g_limit;               /* ids handed out at most: MEMTOP_MAX_TRACES */
static _Atomic bool g_full;            /* an id was refused: the table is full */

bool mt_traces_init(uint32_t max_traces)
{
    mt_traces = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(mt_trace));
    mt_trace_defs = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(mt_trace_def));
    mt_trace_frames = mt_os_reserve(FRAMES_ARENA_WORDS * sizeof(uint64_t));
    if (!mt_traces || !mt_trace_defs || !mt_trace_frames || !mt_tidx_init())
        return false;
    g_limit = max_traces < MT_TRACE_MAX ? max_traces : MT_TRACE_MAX;
    if (g_limit < 2)
        g_limit = 2; /* the overflow trace and one more */
    /* Id 0: the overflow trace, no frames. */
    atomic_store_explicit(&g_next_id, 1, memory_order_relaxed);
    atomic_store_explicit(&mt_traces[0].key, 1, memory_order_release);
    mt_os_account(sizeof(mt_trace) + sizeof(mt_trace_def));
    return true;
}

uint32_t mt_trace_count(void)
{
    uint32_t n = atomic_load_explicit(&g_next_id, memory_order_acquire);
    return n > g_limit ? g_limit : n;
}

bool mt_traces_full(void)
{
    return atomic_load_explicit(&g_full, memory_order_relaxed);
}

/* Copies the frames into the arena: where they start, or UINT32_MAX when
 * the arena is full. */
static uint32_t store_frames(const uint64_t *frames, uint32_t n)
{
    uint64_t at = atomic_fetch_add_explicit(&g_frames_used, n, memory_order_relaxed);
    if (at + n > FRAMES_ARENA_WORDS)
        return UINT32_MAX;
    memcpy(&mt_trace_frames[at], frames, n * sizeof *frames);
    mt_os_account((int64_t)(n * sizeof *frames));
    return (uint32_t)at;
}

uint32_t mt_trace_create(const uint64_t *frames, uint32_t n, uint64_t hash, uint16_t flags,
                         uint64_t now_ns)
{
    /* Once full, only a load: no store to a shared line per new backtrace. */
    if (atomic_load_explicit(&g_full, memory_order_relaxed))
        return MT_TRACE_OVERFLOW;
    uint32_t id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
    if (id >= g_limit) {
        /* Put the counter back (it must never wrap); the overflow trace
         * counts this backtrace's blocks from now on. */
        atomic_store_explicit(&g_next_id, g_limit, memory_order_relaxed);
        atomic_store_explicit(&g_full, true, memory_order_relaxed);
        return MT_TRACE_OVERFLOW;
    }
    uint32_t at = store_frames(frames, n);
    if (at == UINT32_MAX) {
        /* Id burnt without frames: publish it as an empty, ready trace. */
        atomic_store_explicit(&mt_traces[id].key, 1, memory_order_release);
        return MT_TRACE_OVERFLOW;
    }
    mt_trace_def *d = &mt_trace_defs[id];
    d->hash = hash;
    d->frames_at = at;
    d->nframes = (uint16_t)n;
    d->flags = flags;
    d->first_seen_ns = now_ns;
    mt_os_account(sizeof(mt_trace) + sizeof(mt_trace_def));
    /* A crafted hash of 0 (tests) gets key 1: never found lock-free, so
     * every lookup of it takes the locked path, which compares frames. */
    atomic_store_explicit(&mt_traces[id].key, hash ? hash : 1, memory_order_release);
    return id;
}
