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
#include "hook_nested.h"
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

/* A block from a call that could not enter memtop and returns to ret:
 * untracked, unless the call is a hooked allocator's own from inside
 * memtop's real call, whose block the outer hook counts, or memtop's own
 * work's (hook_nested.h mt_nested_libc_is_program). */
static inline void count_nested(void *p, const void *ret)
{
    int in = mt_tls_in_hook;
    if (in == MT_IN_NONE || mt_nested_libc_is_program(in, ret))
        count_untracked(p);
}

/* malloc once the real allocator is known; start: see the top; ret: where
 * the program's call returns.  Always inlined: start is the caller's own
 * frame, which a tail call to an out-of-line copy would pop before the
 * walk reads it. */
static inline __attribute__((always_inline)) void *
malloc_at(size_t size, const mt_hook_frame *start, const void *ret)
{
    mt_thread *t = hook_enter();
    if (!t) {
        void *p;
        MT_REAL_CALL_ANY(p = mt_real.malloc(size));
        count_nested(p, ret);
        return p;
    }
    void *p;
    HOOK_REAL(p = mt_real.malloc(size));
    return alloc_done(t, p, size, start);
}

/* The tracked malloc, kept out of line so that sampled mode's fast path
 * in malloc stays small (no frame, no saved registers).  malloc reaches it
 * by a tail call, so its frame record still holds the program's caller
 * (see the top); where the compiler makes a real call instead, the walk
 * steps out of memtop's frame. */
static __attribute__((noinline)) void *malloc_tracked(size_t size, const void *ret)
{
    return malloc_at(size, HOOK_FRAME(), ret);
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
    return malloc_tracked(size, __builtin_return_address(0));
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
        void *p;
        MT_REAL_CALL_ANY(p = mt_real.calloc(n, m));
        count_nested(p, __builtin_return_address(0));
        return p;
    }
    void *p;
    HOOK_REAL(p = mt_real.calloc(n, m));
    return alloc_done(t, p, p ? n * m : 0, HOOK_FRAME());
}

/* libc's functions, for a nested realloc's block made apart
 * (hook_nested.h). */
static const mt_nested_fns *libc_fns(mt_nested_fns *f)
{
    *f = (mt_nested_fns){mt_real.malloc, mt_real.malloc_usable_size, mt_real.free};
    return f;
}

/* Frees a block that arrived while this thread was inside memtop (from a
 * signal handler; ret: where its call returns): accounted once
 * (hook_nested.c), then freed unless it waits in the queue for the outer
 * hook; a hooked allocator's own free (hook_nested.h) is only freed. */
static void free_nested(void *p, const void *ret)
{
    int in = mt_tls_in_hook;
    if (mt_nested_libc_is_program(in, ret) && mt_nested_free(p, in, mt_real.free))
        return;
    MT_REAL_CALL_ANY(mt_real.free(p));
}

/* realloc by a call made inside memtop (a signal handler's, as for
 * free_nested): the new block is untracked, as every nested allocation;
 * the old one's free is the program's and accounted as free_nested
 * accounts one (it was once counted nowhere, its record left live). */
static void *realloc_nested(void *old, size_t size, const void *ret)
{
    int in = mt_tls_in_hook;
    void *p;
    mt_nested_fns fns;
    bool program = mt_nested_libc_is_program(in, ret);
    if (program && mt_nested_realloc_apart(old, size, in, libc_fns(&fns), &p))
        return p;
    MT_REAL_CALL_ANY(p = mt_real.realloc(old, size));
    if (program)
        mt_nested_realloc_done(old, size, p, in);
    count_nested(p, ret);
    return p;
}

static void free_tracked(void *p, const void *ret);

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
    free_tracked(p, __builtin_return_address(0));
}

/* The rest of free, out of line like malloc_tracked. */
static __attribute__((noinline)) void free_tracked(void *p, const void *ret)
{
    int saved = errno;
    mt_thread *t = hook_enter();
    if (MT_LIKELY(t)) {
        /* Two cache misses are coming: our record and the allocator's chunk
         * header.  Start the header's now, so that it overlaps with ours
         * (mt_ptr_remove starts both of our record's lines at once). */
        __builtin_prefetch((char *)p - 16, 1);
        mt_on_free(t, p);
        HOOK_REAL(mt_real.free(p));
        hook_leave(t);
    } else {
        free_nested(p, ret);
    }
    errno = saved;
}

static void *realloc_boot(void *old, size_t size, const mt_hook_frame *start, const void *ret)
{
    void *p = MT_LIKELY(mt_real_ready()) ? malloc_at(size, start, ret) : mt_boot_alloc(size, 16);
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
    void *p;
    HOOK_REAL(p = mt_real.realloc(old, size));
    return realloc_done(t, old, known, &b, p, size, false, start);
}

static inline __attribute__((always_inline)) void *
realloc_at(void *old, size_t size, const mt_hook_frame *start, const void *ret)
{
    if (!old)
        return MT_LIKELY(mt_real_ready()) ? malloc_at(size, start, ret) : mt_boot_alloc(size, 16);
    if (MT_UNLIKELY(mt_is_boot_ptr(old)))
        return realloc_boot(old, size, start, ret);
    if (MT_UNLIKELY(!mt_real_ready()))
        return NULL;
    mt_thread *t = hook_enter();
    if (!t)
        return realloc_nested(old, size, ret);
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
    return realloc_at(old, size, HOOK_FRAME(), __builtin_return_address(0));
}

MT_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_at(old, total, HOOK_FRAME(), __builtin_return_address(0));
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
        int rc;
        MT_REAL_CALL_ANY(rc = mt_real.posix_memalign(out, align, size));
        count_nested(rc == 0 ? *out : NULL, __builtin_return_address(0));
        return rc;
    }
    int rc;
    HOOK_REAL(rc = mt_real.posix_memalign(out, align, size));
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
            void *p;                                                                               \
            MT_REAL_CALL_ANY(p = mt_real.name args);                                               \
            count_nested(p, __builtin_return_address(0));                                          \
            return p;                                                                              \
        }                                                                                          \
        void *p;                                                                                   \
        HOOK_REAL(p = mt_real.name args);                                                          \
        return alloc_done(t, p, size_expr, HOOK_FRAME());                                          \
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
