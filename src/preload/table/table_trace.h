/* table_trace.h -- unique backtraces and their counters.  Backtrace -> id
 * (mt_trace_id, mt_trace_intern) is in table_trace_index.h. */
#ifndef MT_TRACE_TABLE_H
#define MT_TRACE_TABLE_H

#include "core_assert.h"
#include "core_common.h"
#include "core_spinlock.h"

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

/* One unique backtrace's counters: one cache line, updated by the hooks
 * under the trace's own lock and read by the publisher and the recorder
 * as one consistent set (a seqlock: "Updates and reads" below).
 *
 * `seq` is 2 * (alloc_count + free_count) | locked: bit 0 is the lock, and
 * the rest counts the events, so free_count is not stored but derived
 * (seq / 2 - alloc_count).  That keeps the line at eight words: the lock
 * and the sequence a reader validates cost no room of their own.
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
    _Atomic uint64_t seq; /* 2 * (alloc_count + free_count), bit 0: locked */
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

/* Updates and reads (CONCURRENCY.md, "A trace's counters").
 *
 * Every event changes several counters (a free: live_bytes, free_bytes,
 * the temporary pair and free_count), and a reader that loaded them one by
 * one while hooks of other threads updated them could see half an event:
 * free_bytes already holding a block whose free_count increment was not
 * yet visible.  So each event is one short critical section under the
 * trace's lock (bit 0 of seq; plain loads and stores of the counters, no
 * call out, nothing that can wait), whose unlock also adds the event to
 * seq, and a reader takes a consistent copy without the lock: seq, the
 * counters, seq again, equal and even (a seqlock).  After a few failed
 * tries (a trace updated without pause) it takes the lock itself for the
 * seven loads, so a read always ends and is always exact.
 *
 * Orders.  Lock: an RMW setting bit 0 with acquire (the previous holder's counters are
 * visible), then a release fence, so that a reader who loads any counter
 * stored in this section and then fences with acquire sees the lock in
 * its second load of seq.  Unlock: the new seq stored with release (the
 * section's stores are visible to whoever acquires that value).  Reader:
 * seq load acquire, counters relaxed, acquire fence, seq load acquire.
 *
 * seq only grows, except when an allocation is taken back
 * (mt_trace_uncount_alloc: its block could not be tracked); an allocation
 * and its take-back between a reader's two loads of seq would restore the
 * value.  Each take-back also bumps a generation (table_trace.c) inside its
 * section; the reader compares it too, before its first seq (and an
 * acquire fence) and after its second (acquire). */
/* mt_trace_lock when the trace is busy: spins (then yields:
 * core_spinlock.h) until it is ours (table_trace.c). */
uint64_t mt_trace_lock_wait(mt_trace *t);

/* Takes the trace's lock; returns seq as it was (even).  The fast path is
 * one `lock bts`: what the hooks inline stays small. */
static inline uint64_t mt_trace_lock(mt_trace *t)
{
    uint64_t s = atomic_fetch_or_explicit(&t->seq, 1, memory_order_acquire);
    if (MT_UNLIKELY(s & 1))
        return mt_trace_lock_wait(t);
    atomic_thread_fence(memory_order_release); /* lock before the counters */
    return s;                                  /* seq before the lock: even */
}

/* Ends the section begun at seq s, adding events (alloc_count and
 * free_count changed by that much in all). */
static inline void mt_trace_unlock(mt_trace *t, uint64_t s, uint64_t events)
{
    atomic_store_explicit(&t->seq, s + 2 * events, memory_order_release);
}

/* Counter access inside a section (ours alone; relaxed because readers
 * load them concurrently). */
static inline uint64_t mt_tc_get(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static inline void mt_tc_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* An allocation of count blocks (1, or a sample's weight) and bytes. */
static inline void mt_trace_count_alloc(mt_trace *t, uint64_t count, uint64_t bytes)
{
    uint64_t s = mt_trace_lock(t);
    uint64_t live = mt_tc_get(&t->live_bytes) + bytes;
    mt_tc_add(&t->alloc_count, count);
    atomic_store_explicit(&t->live_bytes, live, memory_order_relaxed);
    if (live > mt_tc_get(&t->peak_live_bytes))
        atomic_store_explicit(&t->peak_live_bytes, live, memory_order_relaxed);
    mt_trace_unlock(t, s, count);
}

/* A free of what an allocation of this trace counted.  live_bytes holds
 * it: the allocation's section happened-before this one (through the
 * block table's shard lock, CONCURRENCY.md "A trace's counters") **[assert]**. */
static inline void mt_trace_count_free(mt_trace *t, uint64_t count, uint64_t bytes, bool temporary)
{
    uint64_t s = mt_trace_lock(t);
    uint64_t live = mt_tc_get(&t->live_bytes);
    MT_ASSERT(live >= bytes);
    atomic_store_explicit(&t->live_bytes, live - bytes, memory_order_relaxed);
    mt_tc_add(&t->free_bytes, bytes);
    if (temporary) {
        mt_tc_add(&t->temp_count, count);
        mt_tc_add(&t->temp_bytes, bytes);
    }
    mt_trace_unlock(t, s, count);
}

/* Takes back mt_trace_count_alloc (its block could not be tracked). */
void mt_trace_uncount_alloc(mt_trace *t, uint64_t count, uint64_t bytes);

/* One trace's counters as read at one moment by a reader (publisher,
 * recorder): one consistent set, every event in it whole, every free
 * counted with its allocation (alloc_count >= free_count **[assert]**). */
typedef struct mt_trace_counts {
    uint64_t alloc_count, free_count, free_bytes, temp_count, temp_bytes, live_bytes,
        peak_live_bytes;
} mt_trace_counts;

/* The counters but free_count into c, consistent with the even seq it
 * returns (table_trace.c). */
uint64_t mt_trace_read_seq(const mt_trace *t, mt_trace_counts *c);

static inline void mt_trace_read(const mt_trace *t, mt_trace_counts *c)
{
    c->free_count = mt_trace_read_seq(t, c) / 2 - c->alloc_count;
    MT_ASSERT(c->alloc_count >= c->free_count);
}

/* fork child: a section another thread had begun when the process forked
 * never ends in the child; unlock such traces, their counters clamped so
 * that no count is negative (at most that one event off). */
void mt_traces_child_repair(void);

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
