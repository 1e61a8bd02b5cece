/* table_trace.h -- unique backtraces and their counters.  Backtrace -> id
 * (mt_trace_id, mt_trace_intern) is in table_trace_index.h. */
#ifndef MT_TRACE_TABLE_H
#define MT_TRACE_TABLE_H

#include "core_assert.h"
#include "core_common.h"

#include <stdbool.h>

/* Trace 0 is the overflow trace: allocations whose backtrace could not be
 * given an id of its own are counted there.  The table holds at most
 * MEMTOP_MAX_TRACES ids (mt_g.cfg.max_traces, from MT_TRACE_MAX_MIN to
 * MT_TRACE_MAX, default MT_TRACE_MAX_DEFAULT), which bounds what traces
 * cost (about 0.4 KiB each at depth 32, counters, definition, frames and
 * the publisher's state together): once it is full, every new backtrace
 * goes to the overflow trace, mt_traces_full() says so and the snapshot
 * raises MT_FLAG_TRACES_FULL.  Nothing is lost from the totals: the
 * overflow trace's counters are as exact as any other's. */
#define MT_TRACE_OVERFLOW 0u
#define MT_TRACE_MAX (4u << 20)
#define MT_TRACE_MAX_MIN 1024u
#define MT_TRACE_MAX_DEFAULT (256u << 10)

/* One unique backtrace's counters: one cache line, written by the hooks
 * with atomic read-modify-writes.  The invariant "free happens-before read"
 * that lets the publisher derive live_count = alloc_count - free_count >= 0
 * comes from free_count being incremented with release and read with
 * acquire before alloc_count is read.
 *
 * `key` is 0 until the trace's definition (mt_trace_def) is complete, then
 * stored once (release): the backtrace's hash, which is never 0 (the hooks
 * map a 0 hash to 1: core_tracker.c's current_trace).  It sits in this line so that the lock-free
 * lookup (table_trace_index.h) checks a candidate in the very line the hook's counters update needs
 * next, instead of loading the definition's line too (one cache miss fewer per allocation).  Traces
 * that are never looked up (the overflow trace, ids burnt without frames) have key 1. */
typedef struct mt_trace {
    _Atomic uint64_t alloc_count;
    _Atomic uint64_t live_bytes;
    _Atomic uint64_t peak_live_bytes;
    _Atomic uint64_t free_count;
    _Atomic uint64_t free_bytes;
    _Atomic uint64_t temp_count;
    _Atomic uint64_t temp_bytes;
    _Atomic uint64_t key;
} __attribute__((aligned(MT_CACHELINE))) mt_trace;
_Static_assert(sizeof(mt_trace) == MT_CACHELINE, "a trace's counters are one cache line");

/* What the backtrace is: immutable once its trace is ready.  Kept apart
 * from the counters, in a parallel array, so that a trace costs one cache
 * line of counters plus 24 bytes (and its frames), not two lines.  The
 * hooks never read it: the publisher, the recorder and the locked path of
 * the trace index do. */
typedef struct mt_trace_def {
    uint64_t hash;
    uint64_t first_seen_ns;
    uint32_t frames_at; /* where the frames start in the frames arena */
    uint16_t nframes;   /* 0: no frames (the overflow trace, or no room) */
    uint16_t flags;     /* MT_DEF_* from shm_layout.h */
} mt_trace_def;
_Static_assert(sizeof(mt_trace_def) == 24, "a definition is three words");

/* Reserves the arrays; at most max_traces ids (the overflow trace's
 * included) will be handed out. */
bool mt_traces_init(uint32_t max_traces);

/* Hands out a new id and defines it (then sets its `key`).  For the trace
 * index (table_trace_index.c), under its shard lock, which makes sure the
 * backtrace has no id yet.  MT_TRACE_OVERFLOW when ids (the table's bound)
 * or room for frames run out. */
uint32_t mt_trace_create(const uint64_t *frames, uint32_t n, uint64_t hash, uint16_t flags,
                         uint64_t now_ns);

/* Number of ids handed out so far (some may not be ready yet). */
uint32_t mt_trace_count(void);

/* Whether a backtrace was refused an id because the table is full. */
bool mt_traces_full(void);

/* The trace arrays, indexed by id (see table_trace.c). */
extern mt_trace *mt_traces;
extern mt_trace_def *mt_trace_defs;
extern uint64_t *mt_trace_frames; /* the frames arena */

static inline mt_trace *mt_trace_get(uint32_t id)
{
    return &mt_traces[id];
}

/* Whether the trace's definition is complete (acquire: it is visible). */
static inline bool mt_trace_ready(const mt_trace *t)
{
    return atomic_load_explicit(&t->key, memory_order_acquire) != 0;
}

/* One trace's counters as read at one moment by a reader (publisher,
 * recorder).  The counters are not read atomically together: the free
 * side is read first, with acquire, then alloc_count with acquire, so that
 * every free counted here has its allocation counted too (the hook's
 * alloc_count increment happens-before the block's free, which is released
 * by free_count's increment): alloc_count >= free_count always holds in a
 * read, and live_count = alloc_count - free_count never wraps.  The byte
 * counters are relaxed: they may be off by the allocations in flight. */
typedef struct mt_trace_counts {
    uint64_t alloc_count, free_count, free_bytes, temp_count, temp_bytes, live_bytes,
        peak_live_bytes;
} mt_trace_counts;

static inline void mt_trace_read(const mt_trace *t, mt_trace_counts *c)
{
    c->free_count = atomic_load_explicit(&t->free_count, memory_order_acquire);
    c->free_bytes = atomic_load_explicit(&t->free_bytes, memory_order_relaxed);
    c->temp_count = atomic_load_explicit(&t->temp_count, memory_order_relaxed);
    c->temp_bytes = atomic_load_explicit(&t->temp_bytes, memory_order_relaxed);
    c->alloc_count = atomic_load_explicit(&t->alloc_count, memory_order_acquire);
    c->live_bytes = atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
    c->peak_live_bytes = atomic_load_explicit(&t->peak_live_bytes, memory_order_relaxed);
    MT_ASSERT(c->alloc_count >= c->free_count);
}

/* Trace id's definition; read it only once mt_trace_ready(id's trace). */
static inline const mt_trace_def *mt_trace_def_get(uint32_t id)
{
    return &mt_trace_defs[id];
}

/* The definition's frames (d->nframes of them). */
static inline const uint64_t *mt_trace_def_frames(const mt_trace_def *d)
{
    return &mt_trace_frames[d->frames_at];
}

#endif
