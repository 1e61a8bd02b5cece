/* hook_nested.c -- accounting the program's frees that arrive while the
 * thread is inside memtop (hook_nested.h says when and why). */
#include "hook_nested.h"

#include "core_assert.h"
#include "core_state.h"
#include "core_tracker.h"
#include "hook_enter.h"
#include "hook_real_alloc.h"

#include <signal.h>
#include <string.h>

/* The hooked allocators' modules (pinned: never unloaded), their
 * trampolines' pages and the runtimes (runtime set).  Written under the
 * scan's lock, each range before the count that shows it (release); read
 * by any thread, a signal handler's too (acquire). */
#define CODE_MAX 32u
static struct {
    uint64_t lo, hi;
    bool runtime;
} g_code[CODE_MAX];
static _Atomic uint32_t g_ncode;

static void code_add(uint64_t lo, uint64_t hi, bool runtime)
{
    uint32_t n = atomic_load_explicit(&g_ncode, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        if (g_code[i].lo == lo && g_code[i].hi == hi)
            return;
    if (n == CODE_MAX || lo >= hi)
        return;
    g_code[n].lo = lo;
    g_code[n].hi = hi;
    g_code[n].runtime = runtime;
    atomic_store_explicit(&g_ncode, n + 1, memory_order_release);
}

void mt_nested_code_add(uint64_t lo, uint64_t hi)
{
    code_add(lo, hi, false);
}

void mt_nested_runtime_add(uint64_t lo, uint64_t hi)
{
    code_add(lo, hi, true);
}

bool mt_nested_in_allocator(uintptr_t pc, bool runtimes)
{
    if (pc >= mt_g.self_lo && pc < mt_g.self_hi)
        return true;
    uint32_t n = atomic_load_explicit(&g_ncode, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (pc - g_code[i].lo < g_code[i].hi - g_code[i].lo && (runtimes || !g_code[i].runtime))
            return true;
    return false;
}

/* mt_try_on_free for a thread that has no record yet: a signal handler
 * that interrupted the thread's first hook while it acquires one
 * (hook_enter), which cannot be made here.  A zeroed stand-in serves: only
 * the "newest block" test reads it, and it names no block. */
static __attribute__((noinline, cold)) bool try_on_free_unowned(void *p, bool temporary_ok)
{
    mt_thread none;
    memset(&none, 0, sizeof none);
    return mt_try_on_free(&none, p, temporary_ok);
}

/* The free of p accounted now if its shard is free (mt_try_on_free);
 * false if it is busy. */
static bool try_free_now(void *p, bool temporary_ok)
{
    mt_thread *t = mt_tls_thread;
    return MT_LIKELY(t) ? mt_try_on_free(t, p, temporary_ok) : try_on_free_unowned(p, temporary_ok);
}

/* Whether a block may wait in this thread's queue (space aside): the
 * thread has one, the allocator's free is known, and a hook will leave to
 * drain it (not memtop's fork handlers: the block must go back now,
 * glibc's fork may hold the arena locks for a handler run as fork
 * returns). */
static bool can_defer(int in, void (*real_free)(void *))
{
    return mt_tls_thread && real_free && (in == MT_IN_HOOK || in == MT_IN_REAL);
}

/* Queues p for the outer hook, which accounts it and frees it with
 * real_free on leaving (mt_drain_deferred); false when it cannot wait
 * (can_defer) or the queue is full. */
static bool defer_free(int in, void *p, void (*real_free)(void *), bool realloc_half)
{
    mt_thread *t = mt_tls_thread;
    if (!can_defer(in, real_free))
        return false;
    MT_ASSERT(((uintptr_t)p & MT_DEFER_REALLOC) == 0);
    if (realloc_half)
        p = (void *)((uintptr_t)p | MT_DEFER_REALLOC);
    uint32_t n = atomic_load_explicit(&t->ndeferred, memory_order_relaxed);
    while (n < MT_DEFER_MAX) {
        /* The slot taken first, then its two words written: a handler that
         * interrupts in between (a second signal) takes slot n + 1.  Writing
         * them before the push let a handler between the two stores fill
         * slot n, whose free this one's second store then overwrote: the
         * handler's block freed by another allocator's free.  The block's
         * address last: it makes the slot valid.  Only the outer hook
         * drains, after every handler on the thread has returned, yet a
         * handler may never return to write its slot: a second signal's
         * handler that siglongjmps out of it, into this handler's own
         * sigsetjmp (the outer hook goes on).  The slot stays NULL, as the
         * drain left it (core_thread_state.h), and the drain skips it: the
         * block was never freed, its record rightly live. */
        if (atomic_compare_exchange_weak_explicit(&t->ndeferred, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            atomic_signal_fence(memory_order_seq_cst); /* the slot taken before it is written */
            if (MT_UNLIKELY(mt_g.cfg.test_defer_signal))
                raise(mt_g.cfg.test_defer_signal);
            t->deferred_free[n] = real_free;
            atomic_signal_fence(memory_order_seq_cst); /* the free before the block */
            t->deferred[n] = p;
            return true;
        }
    }
    return false;
}

/* A nested free that could be neither matched nor queued: sampled mode
 * counts every free (not matched); in exact mode, inside a hook, the stale
 * record is found when the address is reused (a missed free); inside
 * memtop's fork handlers, with the block table held by the fork, or its
 * own work, it is counted as an unknown free (right for a block the
 * handler allocated meanwhile, untracked; a tracked one's record stays,
 * found as a missed free when its address is reused). */
static void free_unmatched(int in)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate))
        mt_count_nested_free();
    else if (in == MT_IN_FORK || in == MT_IN_OWN)
        atomic_fetch_add_explicit(&mt_g.unknown_free_count, 1, memory_order_relaxed);
}

/* MEMTOP_TEST_DEFER_SIGNAL: inside a hook, a nested free finds its
 * block's shard busy, as if the interrupted hook held it (it waits in the
 * queue when it can, or is counted unmatched). */
static bool busy_forced(int in)
{
    return MT_UNLIKELY(mt_g.cfg.test_defer_signal) && mt_tls_thread &&
           (in == MT_IN_HOOK || in == MT_IN_REAL);
}

/* The free of p matched now if it can be: not inside memtop's own work
 * (MT_IN_OWN), which may hold the recording's locks or have sealed it
 * (dlclose's module list, an exec's preparation, exit): there it is
 * counted unmatched (free_unmatched), never queued (no hook leaves to
 * drain). */
static bool match_now(void *p, int in, bool temporary_ok)
{
    return in != MT_IN_OWN && try_free_now(p, temporary_ok);
}

/* If its shard is free, the block is accounted and freed at once: like
 * the program without memtop, it goes straight back to the allocator's
 * thread cache, which a handler's next malloc may need (taking the arena
 * lock instead would deadlock against an interrupted malloc).  Either way
 * it is counted once: a handler's free is the program's. */
bool mt_nested_free(void *p, int in, void (*real_free)(void *))
{
    if (!busy_forced(in) && match_now(p, in, true))
        return false;
    if (defer_free(in, p, real_free, false))
        return true;
    free_unmatched(in);
    return false;
}

void mt_nested_gone(void *p, int in, bool temporary_ok)
{
    if (p && !match_now(p, in, temporary_ok))
        free_unmatched(in);
}

/* Inside memtop's own work, in exact mode: a block's record is neither
 * matched nor queued there, and what became of it is known only after the
 * real call (mt_nested_resized, mt_nested_realloc_done). */
static bool own_exact(int in)
{
    return in == MT_IN_OWN && !MT_UNLIKELY(mt_g.cfg.sample_rate);
}

/* Inside memtop's own work (MT_IN_OWN), in exact mode, the block table is
 * not touched (match_now): the block keeps its record, and the size it had,
 * which stays right in every count but its bytes (it is freed under that
 * record later), and the resize counts as untracked, which says so.
 * Counting its record unmatched (an unknown free) was wrong: nothing was
 * freed, and the record's free comes with the block's.  Sampled mode counts
 * the free of the size it had, as everywhere (free_unmatched). */
void mt_nested_resized(void *p, int in)
{
    if (!p)
        return;
    if (!own_exact(in))
        mt_nested_gone(p, in, false);
    count_untracked(p);
}

/* Its shard busy, the old block cannot go to the real realloc, which would
 * free it before the outer hook accounts for it (another thread may take
 * the address meanwhile): the new block is made apart (malloc and copy, as
 * a moving realloc) and the old one queued like a free.  realloc(p, 0)
 * included: a block back (what C allows), never a NULL a program could
 * take for "p is still yours" while p is queued to be freed.  A failed
 * realloc whose old block was accounted leaves it live in the program,
 * its later free an unknown one. */
bool mt_nested_realloc_apart(void *old, size_t size, int in, const mt_nested_fns *fns, void **out)
{
    /* never temporary, realloc(p, 0) too: whether it frees is known only
     * after the real call (glibc's returns NULL, mimalloc's a new block) */
    if (!busy_forced(in) && match_now(old, in, false))
        return false;
    if (!fns || !fns->malloc || !fns->usable_size || !can_defer(in, fns->free)) {
        if (!own_exact(in)) /* else after the call: mt_nested_realloc_done */
            free_unmatched(in);
        return false;
    }
    void *p;
    size_t n;
    MT_REAL_CALL(p = fns->malloc(size));
    if (!p) {
        *out = NULL; /* failed: the old block stays, and its record */
        return true;
    }
    MT_REAL_CALL(n = fns->usable_size(old));
    memcpy(p, old, n < size ? n : size);
    count_untracked(p);
    *out = p;
    if (defer_free(in, old, fns->free, true))
        return true;
    free_unmatched(in); /* the queue is full */
    MT_REAL_CALL(fns->free(old));
    return true;
}

/* The old block's record stays (own_exact): freed by the call (moved, or
 * realloc(p, 0)'s NULL), it is counted as free_unmatched counts a free
 * there; resized in place, it keeps its record and the size it had (as
 * mt_nested_resized: the caller counts the block untracked); failed, it is
 * still the program's, under its record.  Each once counted an unknown
 * free before the call, whatever became of the block. */
void mt_nested_realloc_done(void *old, size_t size, const void *got, int in)
{
    if (old && own_exact(in) && got != old && (got || size == 0))
        free_unmatched(in);
}
