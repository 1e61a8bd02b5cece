/* hook_libc.c -- the exported allocation functions that interpose on libc's.
 *
 * Each hook: pass straight through if this thread is already inside memtop
 * (signal handler, memtop's own callees) or tracking is not ready; else call
 * the real function, then record the result.  errno is what the real
 * function left, whatever memtop's bookkeeping did.  The free side takes
 * the record out BEFORE the real free, so an address reused by another
 * thread's malloc at once is always recorded afresh.
 *
 * Inside dl_iterate_phdr (mt_tls_dl_depth, hook_dl.c) the hooks track as
 * usual but do not unwind: the tracker attributes those blocks to the trace
 * without frames, so their frees are still matched and every count exact.
 *
 * Accounting of realloc: the old block is freed (charged to its own trace,
 * never temporary) and the new one allocated at realloc's call site, even
 * when the address does not change.  realloc(p, 0) returning NULL is a
 * free of p, temporary by free()'s rule (realloc_done).
 *
 * Where backtraces start: every exported hook that records a block takes
 * its own frame address (HOOK_FRAME), which makes GCC give it a frame
 * pointer (push %rbp; mov %rsp,%rbp): its frame record then holds the
 * caller's rbp and the return address into the caller, and the own walker
 * starts right there instead of stepping out of memtop's frames
 * (unwind_backtrace.h).  It is taken in the exported function itself and handed
 * down (malloc's in malloc_tracked, which malloc reaches by a tail call:
 * malloc itself keeps sampled mode's fast path frameless;
 * tests/unwind/unw_hook_frames.py checks both), and a hook that serves
 * another (realloc(NULL, n) as malloc,
 * reallocarray as realloc) hands down its own: the walk's first frame is
 * always the call into the hook the program called.  (Should a record
 * ever point into memtop after all, the walk steps out of memtop's frames
 * from there, as without one.)
 */
#define _GNU_SOURCE
#include "unwind_backtrace.h"
#include "hook_enter.h"
#include "hook_direct.h"
#include "core_common.h"
#include "hook_real_alloc.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "table_ptr.h"
#include "core_tracker.h"
#include "core_assert.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* malloc once the real allocator is known; start: see the top. */
static inline void *malloc_at(size_t size, const mt_hook_frame *start)
{
    mt_thread *t = hook_enter();
    if (!t) {
        void *p = mt_real.malloc(size);
        count_untracked(p);
        return p;
    }
    return alloc_done(t, mt_real.malloc(size), size, start);
}

/* The tracked malloc, kept out of line so that sampled mode's fast path
 * in malloc stays small (no frame, no saved registers).  malloc reaches it
 * by a tail call, so its frame record still holds the program's caller
 * (see the top); where the compiler makes a real call instead, the walk
 * steps out of memtop's frame. */
static __attribute__((noinline)) void *malloc_tracked(size_t size)
{
    return malloc_at(size, HOOK_FRAME());
}

/* A fast path's real call failed: its count is taken back (out of line,
 * so that the fast path keeps only the size across the call). */
static __attribute__((noinline, cold)) void *fast_failed(size_t size)
{
    hook_fast_uncount(size);
    return NULL;
}

MT_EXPORT void *malloc(size_t size)
{
    if (hook_fast_unsampled(size)) { /* sampled mode, not sampled: hook_enter.h */
        hook_fast_count(size);
        void *p = mt_real.malloc_fast(size);
        return MT_LIKELY(p) ? p : fast_failed(size);
    }
    if (MT_UNLIKELY(!mt_real_ready()))
        return mt_boot_alloc(size, 16);
    return malloc_tracked(size);
}

MT_EXPORT void *calloc(size_t n, size_t m)
{
    size_t total;
    bool overflow = __builtin_mul_overflow(n, m, &total);
    if (!overflow && hook_fast_unsampled(total)) { /* sampled mode, not sampled: hook_enter.h */
        hook_fast_count(total);
        void *p = mt_real.calloc_fast(n, m);
        return MT_LIKELY(p) ? p : fast_failed(total);
    }
    if (MT_UNLIKELY(!mt_real_ready()))
        return overflow ? NULL : mt_boot_alloc(total, 16);
    mt_thread *t = hook_enter();
    if (!t) {
        void *p = mt_real.calloc(n, m);
        count_untracked(p);
        return p;
    }
    void *p = mt_real.calloc(n, m);
    return alloc_done(t, p, p ? n * m : 0, HOOK_FRAME());
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

/* The free of p by a call made inside a hook, accounted now if its shard is
 * free (mt_try_on_free); false if it is busy. */
static inline bool try_free_now(void *p, bool temporary_ok)
{
    mt_thread *t = mt_tls_thread;
    return MT_LIKELY(t) ? mt_try_on_free(t, p, temporary_ok) : try_on_free_unowned(p, temporary_ok);
}

/* Queues p for the outer hook, which accounts it and frees it on leaving
 * (mt_drain_deferred); false when the queue is full or the thread has
 * none.  Only inside a hook (MT_IN_HOOK): a fork handler has no hook to
 * leave. */
static bool defer_free(mt_thread *t, void *p, bool realloc_half)
{
    MT_ASSERT(((uintptr_t)p & MT_DEFER_REALLOC) == 0);
    if (realloc_half)
        p = (void *)((uintptr_t)p | MT_DEFER_REALLOC);
    uint32_t n = t ? atomic_load_explicit(&t->ndeferred, memory_order_relaxed) : MT_DEFER_MAX;
    while (n < MT_DEFER_MAX) {
        t->deferred[n] = p;
        if (atomic_compare_exchange_weak_explicit(&t->ndeferred, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    }
    return false;
}

/* A nested free that could be neither matched nor queued: sampled mode
 * counts every free (not matched); in exact mode, inside a hook, the stale
 * record is found when the address is reused (a missed free); inside
 * memtop's fork handlers, with the block table held by the fork, it is
 * counted as an unknown free (right for a block the handler allocated
 * meanwhile, untracked; a tracked one's record stays, found as a missed
 * free when its address is reused). */
static void free_unmatched(int in)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate))
        mt_count_nested_free();
    else if (in == MT_IN_FORK)
        atomic_fetch_add_explicit(&mt_g.unknown_free_count, 1, memory_order_relaxed);
}

/* Whether a call that found this thread inside memtop is the program's (a
 * signal handler's, interrupting a hook or memtop's fork handlers, which
 * call no allocator), whose frees are accounted; not memtop's own work
 * (MT_IN_OWN) nor a call before tracking. */
static inline bool nested_is_program(int in)
{
    return in == MT_IN_HOOK || in == MT_IN_FORK;
}

/* Frees a block that arrived while this thread was inside a hook (from a
 * signal handler).  If its shard is free, account it and free it at once:
 * like the program without memtop, the block goes straight back to the
 * allocator's thread cache, which a handler's next malloc may need (taking
 * the arena lock instead would deadlock against an interrupted malloc).
 * If the shard is locked (maybe by the interrupted code), queue it for the
 * outer hook; if it cannot be queued, free it now (free_unmatched).  Either
 * way it is counted once: a handler's free is the program's.  Inside
 * memtop's fork handlers nothing is queued: no hook will leave to drain the
 * queue, and the block must go back now (glibc's fork may hold the arena
 * locks for a handler run as fork returns). */
static void free_nested(void *p)
{
    int in = mt_tls_in_hook;
    if (nested_is_program(in) && !try_free_now(p, true)) {
        if (in == MT_IN_HOOK && defer_free(mt_tls_thread, p, false))
            return;
        free_unmatched(in);
    }
    mt_real.free(p);
}

/* realloc by a call made inside memtop (a signal handler's, as for
 * free_nested): the new block is untracked, as every nested allocation;
 * the old one's free is the program's and accounted as free_nested
 * accounts one (it was once counted nowhere, its record left live).  Its
 * shard busy, the old block cannot go to the real realloc, which would
 * free it before the outer hook accounts for it (another thread may take
 * the address meanwhile): the new block is made apart (malloc and copy, as
 * a moving realloc) and the old one queued like a free.  A failed realloc
 * whose old block was accounted leaves it live in the program, its later
 * free an unknown one. */
static void *realloc_nested(void *old, size_t size)
{
    int in = mt_tls_in_hook;
    /* never temporary, realloc(p, 0) too: whether it frees is known only
     * after the real call (glibc's returns NULL, mimalloc's a new block) */
    if (nested_is_program(in) && !try_free_now(old, false)) {
        mt_thread *t = mt_tls_thread;
        if (in == MT_IN_HOOK && t && mt_real.malloc_usable_size) {
            /* a moving realloc, realloc(p, 0) included: a block back (what
             * C allows), never a NULL a program could take for "p is still
             * yours" while p is queued to be freed */
            void *p = mt_real.malloc(size);
            if (!p)
                return NULL; /* failed: the old block stays, and its record */
            size_t n = mt_real.malloc_usable_size(old);
            memcpy(p, old, n < size ? n : size);
            count_untracked(p);
            if (defer_free(t, old, true))
                return p;
            free_unmatched(in); /* the queue is full */
            mt_real.free(old);
            return p;
        }
        free_unmatched(in);
    }
    void *p = mt_real.realloc(old, size);
    count_untracked(p);
    return p;
}

static void free_tracked(void *p);

MT_EXPORT void free(void *p)
{
    if (hook_fast_free(p)) { /* sampled mode, a real block not sampled: hook_enter.h */
        /* Counted first (one add: hook_enter.h), then the real free as a
         * tail call: no frame. */
        hook_fast_count_free();
        mt_real.free_fast(p);
        return;
    }
    if (!p || MT_UNLIKELY(mt_is_boot_ptr(p)))
        return;
    if (MT_UNLIKELY(!mt_real_ready()))
        return; /* cannot happen for a real block: it came from the real allocator */
    free_tracked(p);
}

/* The rest of free, out of line like malloc_tracked. */
static __attribute__((noinline)) void free_tracked(void *p)
{
    int saved = errno;
    mt_thread *t = hook_enter();
    if (MT_LIKELY(t)) {
        /* Two cache misses are coming: our record and the allocator's chunk
         * header.  Start the header's now, so that it overlaps with ours
         * (mt_ptr_remove starts both of our record's lines at once). */
        __builtin_prefetch((char *)p - 16, 1);
        mt_on_free(t, p);
        mt_real.free(p);
        hook_leave(t);
    } else {
        free_nested(p);
    }
    errno = saved;
}

static void *realloc_boot(void *old, size_t size, const mt_hook_frame *start)
{
    void *p = MT_LIKELY(mt_real_ready()) ? malloc_at(size, start) : mt_boot_alloc(size, 16);
    if (p) {
        size_t n = mt_boot_size(old);
        memcpy(p, old, n < size ? n : size);
    }
    return p;
}

/* realloc for a tracked thread: see the accounting rule at the top. */
static void *realloc_tracked(mt_thread *t, void *old, size_t size, const mt_hook_frame *start)
{
    mt_block b;
    bool known = mt_take(old, &b);
    void *p = mt_real.realloc(old, size);
    return realloc_done(t, old, known, &b, p, size, false, start);
}

static inline void *realloc_at(void *old, size_t size, const mt_hook_frame *start)
{
    if (!old)
        return MT_LIKELY(mt_real_ready()) ? malloc_at(size, start) : mt_boot_alloc(size, 16);
    if (MT_UNLIKELY(mt_is_boot_ptr(old)))
        return realloc_boot(old, size, start);
    if (MT_UNLIKELY(!mt_real_ready()))
        return NULL;
    mt_thread *t = hook_enter();
    if (!t)
        return realloc_nested(old, size);
    return realloc_tracked(t, old, size, start);
}

/* Sampled mode's fast path of realloc (hook_enter.h): the old block (if
 * any) certainly not sampled, the new one not to be.  Counted by
 * realloc_done's rules: nothing when it fails and old stays; else the
 * free of old, and the new block. */
static inline bool realloc_fast_ok(const void *old, size_t size)
{
    /* armed: tracking ready, the thread's filter generation there (any
     * generation counts every live sampled block); NULL and boot blocks:
     * pinned */
    return hook_fast_unsampled(size) && (!old || hook_fast_free(old));
}

MT_EXPORT void *realloc(void *old, size_t size)
{
    if (realloc_fast_ok(old, size)) {
        void *p = mt_real.realloc_fast(old, size);
        if (old && (p || size == 0))
            hook_fast_count_free();
        hook_fast_counted(p, size);
        return p;
    }
    return realloc_at(old, size, HOOK_FRAME());
}

MT_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_at(old, total, HOOK_FRAME());
}

MT_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (MT_UNLIKELY(!mt_real_ready())) {
        void *p = mt_boot_alloc(size, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
    mt_thread *t = hook_enter();
    if (!t) {
        int rc = mt_real.posix_memalign(out, align, size);
        count_untracked(rc == 0 ? *out : NULL);
        return rc;
    }
    int rc = mt_real.posix_memalign(out, align, size);
    alloc_done(t, rc == 0 ? *out : NULL, size, HOOK_FRAME());
    return rc;
}

/* memalign, aligned_alloc, valloc and pvalloc share one shape. */
#define ALIGNED_HOOK(name, params, args, boot_align, size_expr)                                    \
    MT_EXPORT void *name params                                                                    \
    {                                                                                              \
        if (MT_UNLIKELY(!mt_real_ready()))                                                         \
            return mt_boot_alloc(size_expr, boot_align);                                           \
        mt_thread *t = hook_enter();                                                               \
        if (!t) {                                                                                  \
            void *p = mt_real.name args;                                                           \
            count_untracked(p);                                                                    \
            return p;                                                                              \
        }                                                                                          \
        return alloc_done(t, mt_real.name args, size_expr, HOOK_FRAME());                          \
    }

ALIGNED_HOOK(memalign, (size_t align, size_t size), (align, size), align, size)
ALIGNED_HOOK(aligned_alloc, (size_t align, size_t size), (align, size), align, size)
ALIGNED_HOOK(valloc, (size_t size), (size), 4096, size)
ALIGNED_HOOK(pvalloc, (size_t size), (size), 4096, size)

/* Redis asks after every allocation, so this stays short: NULL is not a
 * boot block (the range test is unsigned) and goes on to the real
 * function, which answers 0 as it would without memtop (glibc, jemalloc,
 * mimalloc and tcmalloc all do; pitfall test pf_api checks it). */
MT_EXPORT size_t malloc_usable_size(void *p)
{
    if (MT_UNLIKELY(mt_is_boot_ptr(p)))
        return mt_boot_size(p);
    if (MT_UNLIKELY(!mt_real_ready()))
        return 0;
    return mt_real.malloc_usable_size(p);
}
