/* core_tracker.c -- the accounting rules, applied on every allocation and free.
 *
 * Rules (README "Accounting"):
 *  - bytes are what the caller asked for;
 *  - a free is charged to the trace that allocated the block;
 *  - "temporary": freed within MEMTOP_TEMP_MS of its birth, or freed while
 *    it is still the newest block its thread allocated (a malloc followed
 *    immediately by free is temporary under any setting);
 *  - a free of a block memtop never saw only counts an unknown free;
 *  - a block allocated inside dl_iterate_phdr is charged to the trace
 *    without frames (no unwinding there: hook_dl.c), its free as usual;
 *  - an insert that finds its address already live means that block's free
 *    was missed (e.g. it arrived in a signal handler while the deferred-free
 *    queue was full): it is charged as freed then, and counted as missed.
 *
 * While a recording runs (record.h), each accounted event is also handed
 * to the recorder with what was charged; when none runs, that costs one
 * predictable branch per call on a relaxed load.
 *
 * Sampled mode (MEMTOP_SAMPLE, core_sample.h): an unsampled allocation is
 * only counted down (and counted exactly per thread); a sampled one is
 * tracked as above with the weights of sample_weight.h instead of its size
 * and 1, and so is its free, whose weight is computed again from the same
 * size and address.  A free the filter rules out only counts a free.  Only
 * sampled blocks are in the table, so a free it does not know is not an
 * "unknown free" there.
 *
 * A trace's counters change in one short section under the trace's lock
 * per event (table_trace.h, "Updates and reads"), so that readers copy
 * them whole; the process-wide live bytes and peak are relaxed atomics.
 */
#include "core_tracker.h"

#include "core_assert.h"
#include "unwind_backtrace.h"
#include "core_clock.h"
#include "dat_format.h"
#include "core_hash.h"
#include "core_sample.h"
#include "sample_weight.h"
#include "hook_real_alloc.h"
#include "record.h"
#include "core_state.h"
#include "shm_layout.h"
#include "table_trace_index.h"
#include "table_trace.h"

static inline void raise_peak(_Atomic uint64_t *peak, uint64_t value)
{
    uint64_t cur = atomic_load_explicit(peak, memory_order_relaxed);
    while (value > cur && !atomic_compare_exchange_weak_explicit(
                              peak, &cur, value, memory_order_relaxed, memory_order_relaxed))
        ;
}

static __attribute__((noinline)) mt_sample_weight weigh_sampled(uint32_t trace, uint64_t birth_ns,
                                                                uint64_t size)
{
    return mt_sample_weigh(size, mt_g.cfg.sample_rate, mt_sample_key(trace, birth_ns / 1000000u));
}

/* What block p of size bytes stands for: itself, or its sampling weight
 * (out of line: the exact path stays small enough to inline).  sampled is
 * a constant where the caller knows the mode (the exact hot paths), else
 * sampling(). */
static inline mt_sample_weight weigh(const mt_block *b, bool sampled)
{
    if (!sampled)
        return (mt_sample_weight){b->size, 1};
    return weigh_sampled(b->trace, b->birth_ns, b->size);
}

static inline bool sampling(void)
{
    return mt_g.cfg.sample_rate != 0;
}

static inline void account_alloc(uint32_t id, mt_sample_weight w)
{
    uint64_t size = w.bytes;
    mt_trace_count_alloc(mt_trace_get(id), w.count, size);
    uint64_t plive = atomic_fetch_add_explicit(&mt_g.live_bytes, size, memory_order_relaxed) + size;
    raise_peak(&mt_g.peak_live_bytes, plive);
}

/* Takes back account_alloc when the block could not be recorded (no
 * memory for bookkeeping).  The peak it may have raised stays: rare. */
static void unaccount_alloc(uint32_t id, mt_sample_weight w)
{
    atomic_fetch_sub_explicit(&mt_g.live_bytes, w.bytes, memory_order_relaxed);
    mt_trace_uncount_alloc(mt_trace_get(id), w.count, w.bytes);
}

/* live >= 0: the block's own account_alloc happened-before this (through
 * the block table's shard lock), so the counters it takes the block's
 * bytes from hold them (CONCURRENCY.md, "A trace's counters"). */
static inline __attribute__((always_inline)) void account_free(const mt_block *b, bool temporary,
                                                               bool sampled)
{
    mt_sample_weight w = weigh(b, sampled);
    uint64_t plive = atomic_fetch_sub_explicit(&mt_g.live_bytes, w.bytes, memory_order_relaxed);
    MT_ASSERT(plive >= w.bytes);
    (void)plive;
    mt_trace_count_free(mt_trace_get(b->trace), w.count, w.bytes, temporary);
}

/* Trace id for the caller's backtrace, from the shared index: lock-free
 * when the trace is known (table_trace_index.h), which is almost always:
 * then the frames are not even copied out of the walk's memo.  Inside
 * dl_iterate_phdr no backtrace is taken (core_thread_state.h): the block goes to
 * the trace without frames. */
static uint32_t current_trace(mt_thread *t, uint64_t now, const mt_hook_frame *start)
{
    uint64_t frames[MT_MAX_DEPTH];
    bool truncated = false, in_memo = false;
    uint64_t h = mt_hash_finish(MT_HASH_SEED, 0); /* no frames */
    uint32_t n = MT_LIKELY(!mt_tls_dl_depth) ? mt_backtrace(start, t->walk, frames, mt_g.cfg.depth,
                                                            &truncated, &h, &in_memo)
                                             : 0;
    h ^= truncated ? 0x5bd1e995u : 0;
    h += !h; /* never 0 (table_trace.h: the hash is the trace's key) */
    uint32_t id = mt_trace_find(h);
    if (MT_LIKELY(id))
        return id;
    if (in_memo)
        mt_backtrace_frames(t->walk, frames, n);
    return mt_trace_intern(frames, n, h, truncated ? MT_DEF_TRUNCATED : 0, now);
}

/* Order: count the allocation, then make the block findable.  A fork by
 * another thread between the two leaves the child with a block counted but
 * not in the table (shown live for ever), never with a block in the table
 * that was not counted (whose free would drive the counters below zero).
 * Returns the trace id, or UINT32_MAX if the block went untracked; *missed
 * is set when a stale record (a missed free, in *stale) was charged.  h:
 * p's hash in the block table (mt_ptr_prefetch), exact mode only. */
static inline uint32_t track_alloc(mt_thread *t, void *p, uint64_t h, size_t size, uint64_t now,
                                   mt_block *stale, bool *missed, const mt_hook_frame *start,
                                   bool sampled)
{
    uint32_t id = current_trace(t, now, start);
    mt_block b = {.size = size, .birth_ns = now, .trace = id};
    mt_sample_weight w = weigh(&b, sampled);
    account_alloc(id, w);
    mt_insert_result r = sampled ? mt_ptr_insert_sampled((uintptr_t)p, &b, stale)
                                 : mt_ptr_insert_hashed((uintptr_t)p, h, &b, stale);
    switch (r) {
    case MT_INSERT_FAILED:
        unaccount_alloc(id, w);
        atomic_fetch_add_explicit(&mt_g.untracked_alloc_count, 1, memory_order_relaxed);
        return UINT32_MAX;
    case MT_INSERT_REPLACED:
        account_free(stale, false, sampled);
        atomic_fetch_add_explicit(&mt_g.missed_free_count, 1, memory_order_relaxed);
        *missed = true;
        break;
    case MT_INSERT_NEW:
        break;
    }
    t->last_alloc = p;
    t->last_birth_ns = b.birth_ns;
    t->last_trace = id;
    return id;
}

/* The same while recording: wait out a starting recording's pause, then
 * record what was accounted (record.h).  One copy per mode (sampled is a
 * constant in each caller): the exact one without the sampled branches.
 * h: as track_alloc's. */
static inline __attribute__((always_inline)) void alloc_recorded(mt_thread *t, void *p, uint64_t h,
                                                                 size_t size,
                                                                 const mt_hook_frame *start,
                                                                 bool sampled)
{
    mt_rec_gate();
    uint64_t now = mt_now_ns();
    mt_block stale;
    bool missed = false;
    uint32_t id = track_alloc(t, p, h, size, now, &stale, &missed, start, sampled);
    if (missed)
        mt_rec_free(now, p, &stale, MT_DAT_EVF_MISSED, true);
    if (id != UINT32_MAX)
        mt_rec_alloc(now, p, id, size);
}

static void __attribute__((noinline))
alloc_recorded_exact(mt_thread *t, void *p, uint64_t h, size_t size, const mt_hook_frame *start)
{
    alloc_recorded(t, p, h, size, start, false);
}

static void __attribute__((noinline))
alloc_recorded_sampled(mt_thread *t, void *p, uint64_t h, size_t size, const mt_hook_frame *start)
{
    alloc_recorded(t, p, h, size, start, true);
}

/* Tracks an allocation, recording it if a recording runs; sampled is a
 * constant in each caller, so the exact path stays as it was.  h: as
 * track_alloc's. */
static inline __attribute__((always_inline)) void alloc_tracked(mt_thread *t, void *p, uint64_t h,
                                                                size_t size,
                                                                const mt_hook_frame *start,
                                                                bool sampled)
{
    if (MT_UNLIKELY(mt_rec_on())) {
        if (sampled)
            alloc_recorded_sampled(t, p, h, size, start);
        else
            alloc_recorded_exact(t, p, h, size, start);
        return;
    }
    mt_block stale;
    bool missed = false;
    track_alloc(t, p, h, size, mt_now_ns(), &stale, &missed, start, sampled);
}

/* A sampled allocation (mt_sample_skip drew the next distance): as
 * usual (the table's insert tells the filter), then a larger filter if
 * the live sampled blocks outgrew it, outside every table lock. */
static void __attribute__((noinline))
alloc_sampled(mt_thread *t, void *p, size_t size, const mt_hook_frame *start)
{
    alloc_tracked(t, p, 0, size, start, true);
    mt_sfilter_grow();
}

void mt_on_alloc(mt_thread *t, void *p, size_t size, const mt_hook_frame *start)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate)) {
        if (!mt_sample_skip(t, size))
            alloc_sampled(t, p, size, start);
        return;
    }
    /* The block's record is a cache miss away (an insert reads both of
     * its candidate lines): start loading them now, so that the misses
     * overlap with the unwind that comes first (docs/performance.md,
     * "Exact mode").  Its hash is the insert's. */
    uint64_t h = mt_ptr_prefetch((uintptr_t)p);
    alloc_tracked(t, p, h, size, start, false);
}

static inline bool take_block(void *p, mt_block *out)
{
    if (MT_LIKELY(mt_ptr_remove((uintptr_t)p, out)))
        return true;
    atomic_fetch_add_explicit(&mt_g.unknown_free_count, 1, memory_order_relaxed);
    return false;
}

/* take_block in sampled mode: a block the table does not hold was not
 * sampled, not unknown; the table's removal lowers the filter's count. */
static bool take_sampled(void *p, mt_block *out)
{
    return mt_ptr_remove_sampled((uintptr_t)p, out);
}

static inline bool take_any(void *p, mt_block *out)
{
    return MT_UNLIKELY(mt_g.cfg.sample_rate) ? take_sampled(p, out) : take_block(p, out);
}

/* Charges the free of b; returns whether it counted as temporary.  now is
 * only read when temporary_ok. */
static inline __attribute__((always_inline)) bool charge_block(mt_thread *t, void *p,
                                                               const mt_block *b, bool temporary_ok,
                                                               uint64_t now, bool sampled)
{
    bool newest = t->last_alloc == p && t->last_birth_ns / 1000000u == b->birth_ns / 1000000u &&
                  t->last_trace == b->trace;
    if (newest)
        t->last_alloc = NULL;
    bool temporary = false;
    if (temporary_ok) {
        uint64_t age = now > b->birth_ns ? now - b->birth_ns : 0; /* same clock tick: age 0 */
        temporary = newest || age < mt_g.cfg.temporary_ns;
    }
    account_free(b, temporary, sampled);
    return temporary;
}

/* charge_block while recording.  may_wait: false in a signal handler.
 * Inline into its three callers, themselves out of the exact path: a call
 * level here cost ~20 instructions per recorded free (callgrind). */
static inline __attribute__((always_inline)) void charge_recorded_as(mt_thread *t, void *p,
                                                                     const mt_block *b,
                                                                     bool temporary_ok,
                                                                     bool may_wait, bool sampled)
{
    uint64_t now = mt_now_ns();
    bool temporary = charge_block(t, p, b, temporary_ok, now, sampled);
    unsigned flags = temporary ? MT_DAT_EVF_TEMPORARY : 0u;
    if (!temporary_ok)
        flags |= MT_DAT_EVF_REALLOC;
    mt_rec_free(now, p, b, flags, may_wait);
}

static inline __attribute__((always_inline)) void
charge_recorded(mt_thread *t, void *p, const mt_block *b, bool temporary_ok, bool may_wait)
{
    charge_recorded_as(t, p, b, temporary_ok, may_wait, sampling());
}

bool mt_take(void *p, mt_block *out)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate) && !mt_sfilter_maybe(p))
        return false; /* not sampled */
    if (MT_UNLIKELY(mt_rec_on()))
        mt_rec_gate();
    return take_any(p, out);
}

void mt_charge_free(mt_thread *t, void *p, const mt_block *b, bool temporary_ok)
{
    if (MT_UNLIKELY(mt_rec_on())) {
        mt_rec_gate();
        charge_recorded(t, p, b, temporary_ok, true);
        return;
    }
    charge_block(t, p, b, temporary_ok, temporary_ok ? mt_now_ns() : 0, sampling());
}

/* One copy per mode, as alloc_recorded. */
static inline __attribute__((always_inline)) void free_recorded(mt_thread *t, void *p, bool sampled)
{
    mt_rec_gate();
    mt_block b;
    if (sampled ? take_sampled(p, &b) : take_block(p, &b))
        charge_recorded_as(t, p, &b, true, true, sampled);
}

static void __attribute__((noinline)) free_recorded_exact(mt_thread *t, void *p)
{
    free_recorded(t, p, false);
}

static void __attribute__((noinline)) free_recorded_sampled(mt_thread *t, void *p)
{
    free_recorded(t, p, true);
}

/* The rest of a free once the block may be tracked; sampled is a
 * constant in each caller, so the exact path stays as it was. */
static inline __attribute__((always_inline)) void take_and_charge(mt_thread *t, void *p,
                                                                  bool sampled)
{
    if (MT_UNLIKELY(mt_rec_on())) {
        if (sampled)
            free_recorded_sampled(t, p);
        else
            free_recorded_exact(t, p);
        return;
    }
    mt_block b;
    if (sampled ? take_sampled(p, &b) : take_block(p, &b))
        charge_block(t, p, &b, true, mt_now_ns(), sampled);
}

/* mt_on_free in sampled mode: counted exactly; the filter rules most
 * blocks out at once. */
static void __attribute__((noinline)) free_sampled(mt_thread *t, void *p)
{
    mt_exact_add(&t->exact_frees, 1);
    mt_sample_arm(t);
    if (MT_LIKELY(!mt_sfilter_maybe(p)))
        return;
    take_and_charge(t, p, true);
}

void mt_on_free(mt_thread *t, void *p)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate)) {
        free_sampled(t, p);
        return;
    }
    take_and_charge(t, p, false);
}

bool mt_try_on_free(mt_thread *t, void *p, bool temporary_ok)
{
    bool rec = mt_rec_on();
    if (rec && mt_rec_paused())
        return false; /* a recording is capturing its initial state: defer */
    bool sampled = mt_g.cfg.sample_rate != 0;
    if (sampled && !mt_sfilter_maybe(p)) {
        mt_count_nested_free();
        return true;
    }
    mt_block b;
    switch (sampled ? mt_ptr_try_remove_sampled((uintptr_t)p, &b)
                    : mt_ptr_try_remove((uintptr_t)p, &b)) {
    case MT_TRY_BUSY:
        return false;
    case MT_TRY_ABSENT:
        if (sampled)
            mt_count_nested_free();
        else
            atomic_fetch_add_explicit(&mt_g.unknown_free_count, 1, memory_order_relaxed);
        return true;
    case MT_TRY_REMOVED:
        if (sampled)
            mt_count_nested_free();
        if (rec)
            charge_recorded(t, p, &b, temporary_ok, false);
        else
            charge_block(t, p, &b, temporary_ok, temporary_ok ? mt_now_ns() : 0, sampled);
        return true;
    }
    return false;
}

void mt_count_nested_free(void)
{
    atomic_fetch_add_explicit(&mt_g.nested_frees, 1, memory_order_relaxed);
}

void mt_untake(void *p, const mt_block *b)
{
    mt_block stale;
    if (MT_UNLIKELY(mt_g.cfg.sample_rate)) {
        mt_ptr_insert_sampled((uintptr_t)p, b, &stale);
        mt_sfilter_grow();
        return;
    }
    mt_ptr_insert((uintptr_t)p, b, &stale);
}

/* One block popped from the deferral queue: accounted, then freed with
 * its allocator's free. */
static void drain_one(mt_thread *t, void *p, void (*real_free)(void *))
{
    if ((uintptr_t)p & MT_DEFER_REALLOC) { /* realloc's free half (realloc_done) */
        p = (void *)((uintptr_t)p & ~MT_DEFER_REALLOC);
        mt_block b;
        if (mt_take(p, &b))
            mt_charge_free(t, p, &b, false);
        mt_count_realloc_free(t, p);
    } else {
        mt_on_free(t, p);
    }
    MT_REAL_CALL(real_free(p));
}

void mt_drain_deferred(mt_thread *t)
{
    /* Frees queued by a signal handler that interrupted us: the handler ran
     * on this thread, so the queue is ours alone. */
    uint32_t n = atomic_load_explicit(&t->ndeferred, memory_order_relaxed);
    while (n) {
        /* Slot n - 1 is ours until the pop (a handler that interrupts here
         * pushes above it): cleared before the pop, as a handler may take
         * it right after, and put back if the pop fails. */
        uint32_t top = n - 1;
        void *p = t->deferred[top];
        void (*real_free)(void *) = t->deferred_free[top];
        t->deferred[top] = NULL;
        t->deferred_free[top] = NULL;
        atomic_signal_fence(memory_order_seq_cst); /* read and cleared before the pop */
        if (!atomic_compare_exchange_weak_explicit(&t->ndeferred, &n, top, memory_order_relaxed,
                                                   memory_order_relaxed)) {
            t->deferred[top] = p; /* a handler pushed meanwhile: n was reloaded */
            t->deferred_free[top] = real_free;
            continue;
        }
        /* NULL: taken, never written (its handler was left: defer_free) */
        if (p && real_free)
            drain_one(t, p, real_free);
        n = atomic_load_explicit(&t->ndeferred, memory_order_relaxed);
    }
}
