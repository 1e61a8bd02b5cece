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
 *
 * The counters' protocol (one section under the trace's lock per event, a
 * seqlock read: table_trace.h, "Updates and reads") has its slow parts
 * here: the lock's wait, a take-back, the reader, a fork child's repair.
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
static _Atomic uint64_t g_uncounts;    /* allocations taken back (table_trace.h, seq) */

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

uint64_t mt_trace_lock_wait(mt_trace *t)
{
    for (unsigned spins = 0;; spins++) {
        mt_spin_wait(spins);
        if (atomic_load_explicit(&t->seq, memory_order_relaxed) & 1)
            continue; /* test before the RMW: no cache-line ping-pong while it is held */
        uint64_t s = atomic_fetch_or_explicit(&t->seq, 1, memory_order_acquire);
        if (!(s & 1)) {
            atomic_thread_fence(memory_order_release); /* as mt_trace_lock */
            return s;
        }
    }
}

void mt_trace_uncount_alloc(mt_trace *t, uint64_t count, uint64_t bytes)
{
    uint64_t s = mt_trace_lock(t);
    /* Inside the section, before the unlock (release): a reader that sees
     * seq restored by this take-back sees the generation moved. */
    atomic_fetch_add_explicit(&g_uncounts, 1, memory_order_relaxed);
    atomic_store_explicit(&t->live_bytes, mt_tc_get(&t->live_bytes) - bytes, memory_order_relaxed);
    atomic_store_explicit(&t->alloc_count, mt_tc_get(&t->alloc_count) - count,
                          memory_order_relaxed);
    atomic_store_explicit(&t->seq, s - 2 * count, memory_order_release);
}

/* The counters, seq excepted (the caller validates or holds the lock). */
static void load_counts(const mt_trace *t, mt_trace_counts *c)
{
    c->alloc_count = atomic_load_explicit(&t->alloc_count, memory_order_relaxed);
    c->live_bytes = atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
    c->peak_live_bytes = atomic_load_explicit(&t->peak_live_bytes, memory_order_relaxed);
    c->free_bytes = atomic_load_explicit(&t->free_bytes, memory_order_relaxed);
    c->temp_count = atomic_load_explicit(&t->temp_count, memory_order_relaxed);
    c->temp_bytes = atomic_load_explicit(&t->temp_bytes, memory_order_relaxed);
}

/* One lock-free try (table_trace.h, "Updates and reads"): whether c is a
 * consistent copy; *seq is the even seq it is consistent with. */
static bool read_try(const mt_trace *t, mt_trace_counts *c, uint64_t *seq)
{
    uint64_t u1 = atomic_load_explicit(&g_uncounts, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire); /* a take-back counted in u1 is in s1 */
    uint64_t s1 = atomic_load_explicit(&t->seq, memory_order_acquire);
    if (s1 & 1)
        return false;
    load_counts(t, c);
    atomic_thread_fence(memory_order_acquire); /* a section seen above is seen in s2 */
    uint64_t s2 = atomic_load_explicit(&t->seq, memory_order_acquire);
    uint64_t u2 = atomic_load_explicit(&g_uncounts, memory_order_relaxed);
    *seq = s1;
    return s1 == s2 && u1 == u2;
}

#define READ_TRIES 64u /* lock-free tries before the reader takes the lock */

uint64_t mt_trace_read_seq(const mt_trace *t, mt_trace_counts *c)
{
    uint64_t s = 0;
    bool ok = false;
    for (unsigned i = 0; i < READ_TRIES && !ok; i++) {
        ok = read_try(t, c, &s);
        if (!ok)
            mt_spin_wait(i);
    }
    if (!ok) { /* updated without pause: stop the writers for seven loads */
        mt_trace *w = (mt_trace *)t;
        s = mt_trace_lock(w);
        load_counts(t, c);
        mt_trace_unlock(w, s, 0);
    }
    return s;
}

void mt_traces_child_repair(void)
{
    uint32_t n = mt_trace_count();
    for (uint32_t id = 0; id < n; id++) {
        mt_trace *t = &mt_traces[id];
        uint64_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);
        if (MT_LIKELY(!(s & 1)))
            continue;
        /* 0 <= free_count <= alloc_count: seq / 2 in [ac, 2 ac]. */
        uint64_t ac = mt_tc_get(&t->alloc_count), events = s / 2;
        if (events < ac)
            events = ac;
        if (events > 2 * ac)
            events = 2 * ac;
        atomic_store_explicit(&t->seq, 2 * events, memory_order_relaxed);
    }
}
