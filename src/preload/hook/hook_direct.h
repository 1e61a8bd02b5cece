/* hook_direct.h -- the shared end of every allocation hook (hook_libc.c on
 * libc's names, alloc_mimalloc.c, alloc_tcmalloc.c and alloc_je_redirect.c
 * on an allocator's own API): recording what the real function returned,
 * by the rules of hook_libc.c, and leaving memtop; and the shapes of the
 * hooks that redirected entry points reach. */
#ifndef MT_HOOKS_DIRECT_H
#define MT_HOOKS_DIRECT_H

#include "unwind_backtrace.h"
#include "core_sample.h"
#include "hook_enter.h"
#include "hook_nested.h"
#include "table_ptr.h"
#include "core_tracker.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define HOOK_FRAME() ((const mt_hook_frame *)__builtin_frame_address(0))

/* After an allocating call: p (if any) is a block of size bytes. */
static inline void *alloc_done(mt_thread *t, void *p, size_t size, const mt_hook_frame *start)
{
    int saved = errno;
    if (p)
        mt_on_alloc(t, p, size, start);
    hook_leave(t);
    errno = saved;
    return p;
}

/* A C++ operator new (jemalloc's, tcmalloc's; mimalloc's mi_new when a
 * new_handler throws) may throw bad_alloc through the hook that called it.
 * The hook must leave memtop then too: otherwise the thread keeps
 * mt_tls_in_hook set and passes through memtop, uncounted yet "exact", for
 * the rest of its life.  So the files using HOOK_ALLOC_RETURN or
 * HOOK_REALLOC_RETURN are built with -fexceptions (src/preload/CMakeLists.txt,
 * checked below) and keep a hook_guard across the real call: if the call
 * is unwound, its cleanup puts a taken block back (realloc: the old block
 * stays live) and leaves memtop.  The guard's scope is the real call
 * alone, disarmed (t = NULL) as it returns: on that path the cleanup folds
 * away, and memtop's own calls after it need no landing pad. */
typedef struct hook_guard {
    mt_thread *t;      /* inside memtop across the call; NULL: disarmed */
    void *old;         /* a block taken out before the call, or NULL */
    const mt_block *b; /* what it held */
} hook_guard;

static inline void hook_unwound(const hook_guard *g)
{
    if (MT_UNLIKELY(g->t)) {
        if (g->old)
            mt_untake(g->old, g->b);
        hook_leave(g->t);
    }
}

#ifdef __EXCEPTIONS
#define HOOK_GUARD(name, t, old, b)                                                                \
    hook_guard name __attribute__((cleanup(hook_unwound))) = {t, old, b}
#define HOOK_UNWINDABLE 1
#else
#define HOOK_GUARD(name, t, old, b) hook_guard name __attribute__((unused)) = {t, old, b}
#define HOOK_UNWINDABLE 0
#endif
#define HOOK_NEEDS_UNWIND                                                                          \
    _Static_assert(HOOK_UNWINDABLE,                                                                \
                   "a hook that C++ code may throw through: build with -fexceptions")

/* An allocating entry's call that found the thread inside memtop: the
 * allocator's own or memtop's passes through; the program's (a signal
 * handler's, hook_nested.h) is counted as untracked.
 * A GNU statement expression: `call` is evaluated once. */
#define hook_nested_alloc(call)                                                                    \
    ({                                                                                             \
        void *np_;                                                                                 \
        if (mt_nested_entry_is_program(mt_tls_in_hook, __builtin_return_address(0))) {             \
            MT_REAL_CALL(np_ = call);                                                              \
            count_untracked(np_);                                                                  \
        } else {                                                                                   \
            np_ = call;                                                                            \
        }                                                                                          \
        np_;                                                                                       \
    })

/* The body of an allocating hook of an allocator's own API whose real
 * function is reached by `call` (an expression); size_expr: what the
 * caller asked for (evaluated before and after the call: no side
 * effects).  In sampled mode an allocation the countdown does not reach
 * takes hook_libc.c malloc's fast path (hook_enter.h).  Returns from the
 * hook. */
#define HOOK_ALLOC_RETURN(call, size_expr)                                                         \
    do {                                                                                           \
        HOOK_NEEDS_UNWIND;                                                                         \
        if (hook_fast_unsampled(size_expr)) { /* sampled mode, not sampled */                      \
            mt_gate_saved gs_ = mt_gate_hold();                                                    \
            void *fp_;                                                                             \
            { /* the guard's scope: the real call alone */                                         \
                HOOK_GUARD(fg_, mt_tls_thread, NULL, NULL);                                        \
                fp_ = call;                                                                        \
                fg_.t = NULL;                                                                      \
            }                                                                                      \
            mt_gate_unhold(gs_);                                                                   \
            hook_fast_counted(fp_, (size_expr));                                                   \
            return fp_;                                                                            \
        }                                                                                          \
        if (mt_tls_in_hook) /* inside memtop: hook_nested.h */                                     \
            return hook_nested_alloc(call);                                                        \
        mt_thread *t_ = hook_enter();                                                              \
        if (!t_) {                                                                                 \
            void *p_ = call;                                                                       \
            count_untracked(p_);                                                                   \
            return p_;                                                                             \
        }                                                                                          \
        void *p_;                                                                                  \
        {                                                                                          \
            HOOK_GUARD(g_, t_, NULL, NULL);                                                        \
            HOOK_REAL(p_ = call);                                                                  \
            g_.t = NULL;                                                                           \
        }                                                                                          \
        return alloc_done(t_, p_, size_expr, HOOK_FRAME());                                        \
    } while (0)

/* The body of a freeing hook of an allocator's own API: the block p is
 * taken out before `call` (the real free: the address may be reused at
 * once by another thread), errno kept.  In sampled mode a block that is
 * certainly not a sampled one takes a fast path like hook_libc.c free's:
 * counted, then freed, mt_tls_in_hook set throughout (unlike free's, the
 * real call may reach another redirected entry, operator delete jumping to
 * free: it must pass through, not count the block again).  plain_free:
 * the allocator's free of p alone, for a program's call that must wait in
 * the queue (hook_nested.h; NULL: not known). */
#define HOOK_FREE_CALL(p, call, plain_free)                                                        \
    do {                                                                                           \
        if ((p) && hook_fast_free(p)) { /* sampled mode, certainly not a sampled block */          \
            mt_gate_saved gs_ = mt_gate_hold();                                                    \
            hook_fast_count_free();                                                                \
            atomic_signal_fence(memory_order_seq_cst);                                             \
            call;                                                                                  \
            mt_gate_unhold(gs_);                                                                   \
            break;                                                                                 \
        }                                                                                          \
        mt_thread *t_ = (p) ? hook_enter() : NULL;                                                 \
        int saved_ = errno;                                                                        \
        if (!t_) {                                                                                 \
            int in_ = mt_tls_in_hook;                                                              \
            if ((p) && mt_nested_entry_is_program(in_, __builtin_return_address(0))) {             \
                if (!mt_nested_free(p, in_, plain_free))                                           \
                    MT_REAL_CALL(call);                                                            \
            } else {                                                                               \
                call;                                                                              \
            }                                                                                      \
            errno = saved_;                                                                        \
            break;                                                                                 \
        }                                                                                          \
        mt_on_free(t_, p);                                                                         \
        HOOK_REAL(call);                                                                           \
        hook_leave(t_);                                                                            \
        errno = saved_;                                                                            \
    } while (0)

/* realloc's rule (hook_libc.c): the old block freed, never temporary, the new
 * one allocated at the call site; a failure leaves the old block live,
 * except for a function that frees it then (mi_reallocf).  realloc(p, 0)
 * that returns NULL (glibc's, jemalloc's) is a free, temporary by the same
 * rule as free()'s: the block's life ended there, nothing took its place. */
static inline void *realloc_done(mt_thread *t, void *old, bool known, const mt_block *b, void *p,
                                 size_t size, bool frees_on_failure, const mt_hook_frame *start)
{
    int saved = errno;
    if (!p && size != 0 && !frees_on_failure) {
        if (known)
            mt_untake(old, b);
    } else {
        if (known)
            mt_charge_free(t, old, b, !p && size == 0);
        mt_count_realloc_free(t, old);
        if (p)
            mt_on_alloc(t, p, size, start);
    }
    hook_leave(t);
    errno = saved;
    return p;
}

/* The body of a realloc-like hook of the block p whose real function is
 * reached by `call`: realloc_done's rules.  nested_fns: the allocator's
 * plain functions for a program's call inside memtop (hook_nested.h), NULL
 * for a call that keeps an alignment, a heap or flags.  Returns from the
 * hook. */
#define HOOK_REALLOC_RETURN(p, call, size_expr, frees_on_failure, nested_fns)                      \
    do {                                                                                           \
        HOOK_NEEDS_UNWIND;                                                                         \
        mt_thread *t_ = hook_enter();                                                              \
        if (!t_) {                                                                                 \
            int in_ = mt_tls_in_hook;                                                              \
            if (!mt_nested_entry_is_program(in_, __builtin_return_address(0)))                     \
                return call;                                                                       \
            void *nq_;                                                                             \
            if ((p) && mt_nested_realloc_apart(p, size_expr, in_, nested_fns, &nq_))               \
                return nq_;                                                                        \
            MT_REAL_CALL(nq_ = call);                                                              \
            mt_nested_realloc_done(p, size_expr, nq_, in_);                                        \
            count_untracked(nq_);                                                                  \
            return nq_;                                                                            \
        }                                                                                          \
        mt_block b_;                                                                               \
        bool known_ = (p) && mt_take(p, &b_);                                                      \
        void *q_;                                                                                  \
        {                                                                                          \
            HOOK_GUARD(g_, t_, known_ ? (void *)(p) : NULL, &b_);                                  \
            HOOK_REAL(q_ = call);                                                                  \
            g_.t = NULL;                                                                           \
        }                                                                                          \
        return realloc_done(t_, p, known_, &b_, q_, size_expr, frees_on_failure, HOOK_FRAME());    \
    } while (0)

/* ---- hooks reached through a redirected entry point (alloc_patch.h) ----
 * Each finds the original, the trampoline, in its slot (an _Atomic(void *)
 * stored with release before the entry is redirected). */

/* An allocating entry: size_expr is what the caller asked for. */
#define HOOK_ALLOC_ENTRY(fn, slot, params, args, size_expr)                                        \
    static void *fn params                                                                         \
    {                                                                                              \
        void *(*real)params =                                                                      \
            (void *(*)params)atomic_load_explicit(&(slot), memory_order_acquire);                  \
        HOOK_ALLOC_RETURN(real args, size_expr);                                                   \
    }

/* A realloc-like entry of the block p (realloc_done's rules); nested_fns
 * as HOOK_REALLOC_RETURN's. */
#define HOOK_REALLOC_ENTRY(fn, slot, params, args, size_expr, nested_fns)                          \
    static void *fn params                                                                         \
    {                                                                                              \
        void *(*real)params =                                                                      \
            (void *(*)params)atomic_load_explicit(&(slot), memory_order_acquire);                  \
        HOOK_REALLOC_RETURN(p, real args, size_expr, false, nested_fns);                           \
    }

/* A freeing entry of the block p; plain_free as HOOK_FREE_CALL's. */
#define HOOK_FREE_ENTRY(fn, slot, params, args, plain_free)                                        \
    static void fn params                                                                          \
    {                                                                                              \
        void(*real) params = (void(*) params)atomic_load_explicit(&(slot), memory_order_acquire);  \
        HOOK_FREE_CALL(p, real args, plain_free);                                                  \
    }

/* posix_memalign(out, a, n): the block in *out when it returns 0. */
#define HOOK_POSIX_MEMALIGN_ENTRY(fn, slot)                                                        \
    static int fn(void **out, size_t a, size_t n)                                                  \
    {                                                                                              \
        int (*real)(void **, size_t, size_t) =                                                     \
            (int (*)(void **, size_t, size_t))atomic_load_explicit(&(slot), memory_order_acquire); \
        int in = mt_tls_in_hook, rc;                                                               \
        if (in) { /* inside memtop: hook_nested_alloc's rule */                                    \
            if (!mt_nested_entry_is_program(in, __builtin_return_address(0)))                      \
                return real(out, a, n);                                                            \
            MT_REAL_CALL(rc = real(out, a, n));                                                    \
            count_untracked(rc == 0 ? *out : NULL);                                                \
            return rc;                                                                             \
        }                                                                                          \
        mt_thread *t = hook_enter();                                                               \
        if (!t) {                                                                                  \
            rc = real(out, a, n);                                                                  \
            count_untracked(rc == 0 ? *out : NULL);                                                \
            return rc;                                                                             \
        }                                                                                          \
        HOOK_REAL(rc = real(out, a, n));                                                           \
        alloc_done(t, rc == 0 ? *out : NULL, n, HOOK_FRAME());                                     \
        return rc;                                                                                 \
    }

#endif
