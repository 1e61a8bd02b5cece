/* core_thread_state.h -- per-thread state of the hooks. */
#ifndef MT_THREAD_STATE_H
#define MT_THREAD_STATE_H

#include "core_common.h"
#include "core_assert.h"
#include "unwind_memo.h"

#include <stdbool.h>

#define MT_DEFER_MAX 64u

struct mt_tls_hot;

typedef struct mt_thread {
    /* Sampled mode (core_sample.h): the generator's state (the countdown
     * itself is in mt_tls_h). */
    uint64_t sample_rng;
    /* Sampled mode: the TLS block (mt_tls_h) of the thread that holds this
     * record while it lives, whose fast_* counts the publisher adds to the
     * ones below; set by mt_thread_acquire, cleared under g_free_lock when
     * the thread exits (its counts folded in first). */
    _Atomic(struct mt_tls_hot *) hot;
    /* Sampled mode: this record's exact allocation and free counts (the
     * slow paths', and a dead thread's fast_* folded in), written by the
     * thread that holds the record, summed by the publisher over every
     * record ever made (next_all), kept when a record is recycled
     * (pop_free clears what is before and after them: keep them here,
     * together, just before last_alloc). */
    _Atomic uint64_t exact_allocs, exact_bytes, exact_frees;
    struct mt_thread *next_all;
    /* The newest block this thread allocated, if not freed since: its
     * address, birth and trace (an address alone may have been freed and
     * reused by another thread meanwhile). */
    void *last_alloc;
    uint64_t last_birth_ns;
    uint32_t last_trace;
    bool transient; /* borrowed after the thread's key destructor ran */
    /* Frees that arrived while inside a hook (from a signal handler on this
     * thread).  Pushed and popped with compare-and-swap: a handler can
     * interrupt the drain loop between its load and store.  An entry with
     * bit MT_DEFER_REALLOC set is the old block of a handler's realloc:
     * charged as realloc's free half (never temporary).  deferred_free[i]
     * frees entry i (the plain free of the allocator whose entry point the
     * handler called); a push takes the slot first, then writes both
     * (hook_nested.c defer_free), deferred[i] last: a slot is valid once
     * deferred[i] is not NULL, and the drain clears each slot it pops, so
     * that a slot taken but never written (its handler left by siglongjmp
     * in between) is NULL, skipped, never a stale entry freed again. */
    _Atomic uint32_t ndeferred;
    void *deferred[MT_DEFER_MAX];
    void (*deferred_free[MT_DEFER_MAX])(void *);
    struct mt_thread *next_free;
    /* The thread's previous stack walk, for the next one (unwind_memo.h):
     * right after this struct, in the same mapping, sized by the depth. */
    mt_walk_memo *walk;
} mt_thread;

/* Set while this thread runs memtop code.  An allocation call that finds it
 * set (from a signal handler, or from memtop's own callees) goes straight to
 * the real allocator: that is what makes re-entrancy and signal handlers
 * safe.  MT_IN_HOOK: inside an allocation hook (a nested allocation is the
 * program's, e.g. from a signal handler, and is counted as untracked);
 * MT_IN_OWN: memtop's own work (publisher, start-up, symbol lookups,
 * scans, exec and exit), whose allocations are memtop's and not counted
 * when they return into memtop or a runtime (on a program thread, a
 * signal handler's are the program's: hook_nested.h
 * mt_nested_own_is_program); MT_IN_FORK: memtop's fork handlers
 * (core_lifecycle.c), which call no allocator, so that an allocation
 * there is a signal handler's, the program's: counted as untracked, its
 * free matched at once when it can be (hook_libc.c free_nested).
 * Initial-exec TLS: see core_common.h. */
#define MT_DEFER_REALLOC ((uintptr_t)1) /* blocks are at least 8-aligned */

/* MT_IN_REAL: inside a call into the real allocator that memtop makes
 * (a hook's real call, a fast path's, the drain of deferred frees): an
 * allocator entry memtop redirected that is reached then is the
 * allocator's own (an entry calling another, memtop's malloc hook calling
 * an allocator whose malloc is a redirected entry) and passes through
 * uncounted, the outer hook counting the call; one reached while the
 * thread is in memtop's own bookkeeping (MT_IN_HOOK, MT_IN_FORK) is the
 * program's, a signal handler's (hook_nested.h). */
enum { MT_IN_NONE = 0, MT_IN_HOOK = 1, MT_IN_OWN = 2, MT_IN_FORK = 3, MT_IN_REAL = 4 };

/* What every hook reads first, in one initial-exec TLS block so that a
 * hook finds all of it with one GOT load: mt_tls_in_hook and mt_tls_thread
 * name its first fields.  sample_left and sfilter_mask arm sampled mode's
 * fast paths (core_sample.h): bytes left to this thread's next sample, and
 * the mask of an index into the filter sfilter; disarmed
 * (MT_SAMPLE_DISARMED, 0: the initial values) unless this thread has a
 * record of its own and tracking is sampled.
 *
 * They are also the fast paths' only gate: while in_hook is set they are
 * closed (disarmed), their values held in held_left and held_filter, which
 * is what the slow paths read and write (mt_in_hook_set, mt_gate_close),
 * so that a fast path need not test in_hook too. */
typedef struct mt_tls_hot {
    union {
        struct {
            int in_hook;
            /* free's fast-path gate: the mask of a filter slot's index, 0
             * when closed or disarmed (slot 0's bit is always set: NULL's,
             * pinned, or mt_sfilter_closed's), so that sfilter is always a
             * valid pointer. */
            uint32_t sfilter_mask;
        };
        uint64_t hook_word; /* both, for mt_gate_hold: one load, one store */
    };
    mt_thread *thread;
    int64_t sample_left;
    _Atomic uint64_t *sfilter; /* the generation's bits (core_sample.h mt_sfgen) */
    /* Sampled mode's fast paths' exact counts, here so that they need no
     * load of thread: written by this thread alone, one add instruction
     * each (hook_enter.h), read by the publisher relaxed through its
     * record's hot (mt_threads_exact). */
    uint64_t fast_allocs, fast_bytes, fast_frees;
    int64_t held_left;
    _Atomic uint64_t *held_filter; /* NULL: nothing held (disarmed) */
    uint32_t held_mask;            /* held_filter's generation's mask */
} mt_tls_hot;
#define MT_SAMPLE_DISARMED INT64_MIN                  /* no size is below it */
#define MT_TLS_HOT_ALIGN __attribute__((aligned(64))) /* one cache line for the fast paths */
/* The hash's bits (core_sample.h mt_sfilter_slot): the largest filter
 * generation, 1 MiB of slots; a smaller generation masks the low bits of
 * the same index (mapped only in sampled mode, as the live sampled blocks
 * need them: core_sample.c "Generations"). */
#define MT_SFILTER_BITS 20u
/* The filter of a thread that has none: one word, its slot 0 set (core_sample.c). */
extern MT_HIDDEN const uint64_t mt_sfilter_closed[1];
#define MT_TLS_HOT_INIT                                                                            \
    {                                                                                              \
        .sample_left = MT_SAMPLE_DISARMED, .sfilter = (_Atomic uint64_t *)mt_sfilter_closed,       \
        .held_left = MT_SAMPLE_DISARMED                                                            \
    }
extern MT_TLS mt_tls_hot mt_tls_h MT_TLS_HOT_ALIGN;
#define mt_tls_in_hook (mt_tls_h.in_hook)
#define mt_tls_thread (mt_tls_h.thread)

/* Closes the fast paths as this thread enters memtop (in_hook was clear
 * and has just been set): an armed thread's countdown and filter move to
 * held_*.  Disarmed (exact mode, before tracking) it is a load and a
 * branch.  A signal handler between in_hook's store and this sees the
 * fast paths still open: its call is the program's and is counted as
 * such; its countdown update may be lost (the next sample comes a little
 * later), never a count. */
static inline void mt_gate_close(void)
{
    atomic_signal_fence(memory_order_seq_cst); /* in_hook set first */
    if (mt_tls_h.sfilter_mask) {
        mt_tls_h.held_mask = mt_tls_h.sfilter_mask;
        mt_tls_h.sfilter_mask = 0;
        mt_tls_h.held_filter = mt_tls_h.sfilter;
        mt_tls_h.held_left = mt_tls_h.sample_left;
        mt_tls_h.sample_left = MT_SAMPLE_DISARMED;
    }
    atomic_signal_fence(memory_order_seq_cst);
}

/* Opens them again as this thread leaves memtop (before in_hook clears):
 * what the slow path left in held_* goes live, if it is armed. */
static inline void mt_gate_open(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    _Atomic uint64_t *f = mt_tls_h.held_filter;
    if (f) {
        mt_tls_h.sample_left = mt_tls_h.held_left;
        mt_tls_h.sfilter = f;
        atomic_signal_fence(memory_order_seq_cst); /* the filter before its mask */
        mt_tls_h.sfilter_mask = mt_tls_h.held_mask;
    }
    atomic_signal_fence(memory_order_seq_cst); /* then in_hook clears */
}

/* Sets mt_tls_in_hook to how (MT_IN_HOOK, MT_IN_OWN), closing the fast
 * paths if it was clear; returns what it was, for mt_in_hook_restore. */
static inline int mt_in_hook_set(int how)
{
    int was = mt_tls_in_hook;
    mt_tls_in_hook = how;
    if (!was)
        mt_gate_close();
    return was;
}

static inline void mt_in_hook_restore(int was)
{
    if (!was)
        mt_gate_open();
    mt_tls_in_hook = was;
}

/* For a fast path that calls an allocator which may call memtop's hooks
 * back (an allocator's entry reaching another, or the malloc family by
 * name): sets in_hook and closes the gates for that call alone, keeping
 * what they were in registers (mt_gate_close's copy is for the slow paths,
 * which cannot run inside: every hook reached there passes through, so
 * nothing else changes them meanwhile).  Cheaper than mt_in_hook_set.  A
 * signal handler's update of the countdown between the save and the close
 * is lost (the next sample a little later); in a handler that interrupted
 * a transition (in_hook set, the gates still open), the same values are
 * put back. */
typedef struct mt_gate_saved {
    uint64_t hook_word; /* in_hook and sfilter_mask */
    int64_t left;
} mt_gate_saved;

static inline mt_gate_saved mt_gate_hold(void)
{
    mt_gate_saved s = {mt_tls_h.hook_word, mt_tls_h.sample_left};
    /* in_hook set and free's gate closed in one store */
    mt_tls_h.hook_word = (mt_tls_hot){.in_hook = MT_IN_REAL}.hook_word;
    atomic_signal_fence(memory_order_seq_cst);
    mt_tls_h.sample_left = MT_SAMPLE_DISARMED;
    atomic_signal_fence(memory_order_seq_cst);
    return s;
}

static inline void mt_gate_unhold(mt_gate_saved s)
{
    atomic_signal_fence(memory_order_seq_cst);
    mt_tls_h.sample_left = s.left;
    atomic_signal_fence(memory_order_seq_cst);
    mt_tls_h.hook_word = s.hook_word;
}

/* Around a call into the real allocator made inside memtop (in_hook set,
 * the gates closed): in_hook says MT_IN_REAL for the call's length, then
 * what it was.  Two stores; a signal handler that interrupts either sees
 * one value or the other, both inside memtop. */
static inline int mt_real_call_begin(void)
{
    int was = mt_tls_in_hook;
    MT_ASSERT(was != MT_IN_NONE);
    mt_tls_in_hook = MT_IN_REAL;
    atomic_signal_fence(memory_order_seq_cst);
    return was;
}

static inline void mt_real_call_end(int was)
{
    atomic_signal_fence(memory_order_seq_cst);
    mt_tls_in_hook = was;
}

/* mt_real_call_end as MT_REAL_CALL's scope ends, whichever way: also when
 * the call is unwound (a C++ operator new throwing bad_alloc from a signal
 * handler's call inside memtop, through a hook built with -fexceptions:
 * hook_direct.h), which once left in_hook saying MT_IN_REAL until the
 * interrupted hook left (pitfall_sigthrow). */
static inline void mt_real_call_cleanup(const int *was)
{
    mt_real_call_end(*was);
}

/* `expr`, a call into the real allocator, run as MT_IN_REAL (a statement;
 * for one with a value, MT_REAL_CALL(r = call(...))).  Without
 * -fexceptions the cleanup is the plain call after expr. */
#define MT_REAL_CALL(expr)                                                                         \
    do {                                                                                           \
        int real_was_ __attribute__((cleanup(mt_real_call_cleanup))) = mt_real_call_begin();       \
        expr;                                                                                      \
    } while (0)

/* The same for a call that may come from outside memtop (in_hook clear:
 * the call runs as it is, the gates open). */
#define MT_REAL_CALL_ANY(expr)                                                                     \
    do {                                                                                           \
        if (mt_tls_in_hook)                                                                        \
            MT_REAL_CALL(expr);                                                                    \
        else {                                                                                     \
            expr;                                                                                  \
        }                                                                                          \
    } while (0)

/* Set by the key destructor when this thread exits. */
extern MT_TLS bool mt_tls_exiting;

/* How many dl_iterate_phdr calls this thread is inside (hook_dl.c).  While
 * non-zero the thread may hold the loader's lock, and libunwind takes that
 * lock while it holds its own: an allocation here must not unwind (it would
 * deadlock against another thread's unwind).  It is tracked like any other,
 * but attributed to the trace without frames.  A plain counter: a signal
 * handler's own calls increment and decrement it in pairs. */
extern MT_TLS unsigned mt_tls_dl_depth;

/* This thread's state, created on first use (from mmap).  NULL if memory
 * for it cannot be had.  After the thread's key destructor ran, a
 * transient state is returned instead, to be given back at hook exit. */
mt_thread *mt_thread_acquire(void);
void mt_thread_return(mt_thread *t);

bool mt_threads_init(void);

/* Sampled mode: the exact counts summed over every thread record. */
typedef struct mt_exact_totals {
    uint64_t allocs, bytes, frees;
} mt_exact_totals;
void mt_threads_exact(mt_exact_totals *out);
/* A fork child: the other threads' records stop reading their TLS blocks
 * (those threads are gone), their counts folded in.  Single-threaded. */
void mt_threads_fork_child(void);
void mt_threads_lock_all(void);
void mt_threads_unlock_all(void);

#endif
