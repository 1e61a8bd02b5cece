/* hook_enter.h -- entering and leaving memtop from an allocation hook:
 * the exported hooks (hook_libc.c) and the hooks memtop installs into other
 * allocators (alloc_jemalloc.c) share them, so that a block is counted
 * once whichever way it came (a thread already inside memtop passes
 * through). */
#ifndef MT_HOOK_ENTER_H
#define MT_HOOK_ENTER_H

#include "core_common.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "core_tracker.h"
#include "core_sample.h"

#include <errno.h>

/* Tracking is not running: start it if it may start here.  Never inside
 * dl_iterate_phdr, maybe holding the loader's lock (starting unwinds,
 * dlopens and creates threads): such a call passes through like any call
 * before tracking starts. */
static inline bool hook_start(void)
{
    int st = atomic_load_explicit(&mt_g.state, memory_order_relaxed);
    if (st == MT_ST_OFF || mt_tls_dl_depth)
        return false;
    int saved = errno; /* starting up may set it (e.g. no segment) */
    bool ready = mt_ensure_ready();
    errno = saved;
    return ready;
}

/* Enters memtop on this thread, or returns NULL to pass through. */
static inline mt_thread *hook_enter(void)
{
    if (MT_UNLIKELY(mt_tls_in_hook))
        return NULL;
    if (MT_UNLIKELY(atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY) &&
        !hook_start())
        return NULL;
    mt_thread *t = mt_tls_thread;
    mt_tls_in_hook = MT_IN_HOOK;
    if (MT_UNLIKELY(!t) && !(t = mt_thread_acquire())) {
        mt_tls_in_hook = 0;
        return NULL;
    }
    return t;
}

static inline void hook_leave(mt_thread *t)
{
    if (MT_UNLIKELY(atomic_load_explicit(&t->ndeferred, memory_order_relaxed)))
        mt_drain_deferred(t);
    if (MT_UNLIKELY(t->transient))
        mt_thread_return(t);
    mt_tls_in_hook = 0;
}

/* Sampled mode's fast paths (core_sample.h): a call that is not to be
 * tracked skips hook_enter/hook_leave.  They read mt_tls_h only (one GOT
 * load): the thread is not inside memtop, and its fast paths are armed,
 * which a slow path of sampled mode did (mt_sample_skip, mt_sample_arm:
 * tracking was ready, so the real allocator is known, and the thread has
 * a record of its own in mt_tls_thread).  A disarmed thread's countdown is
 * below every size and its filter NULL, so in exact mode, before tracking
 * is ready and in a fork child until its first hook restarts it, each
 * costs one comparison.  Counted with single add instructions
 * (mt_exact_add), which a signal handler cannot split. */

/* An allocation of size bytes that the countdown does not reach.  A size
 * of 2^63 or more compares as negative, so it takes the fast path, where
 * the real allocator fails it and nothing is counted. */
static inline bool hook_fast_unsampled(size_t size)
{
    return (int64_t)size < mt_tls_h.sample_left && MT_LIKELY(!mt_tls_in_hook); /* exact: one test */
}

/* After the real call of an unsampled allocation p (NULL: failed).  The
 * caller sets mt_tls_in_hook around the real call, so that an allocator
 * that reports to memtop's other hooks (jemalloc's) is not counted twice. */
static inline void hook_fast_counted(const void *p, size_t size)
{
    if (MT_LIKELY(p)) {
        mt_tls_h.sample_left -= (int64_t)size;
        mt_thread *t = mt_tls_thread;
        mt_exact_add(&t->exact_allocs, 1);
        mt_exact_add(&t->exact_bytes, size);
    }
}

/* A free of p, certainly not a sampled block's. */
static inline bool hook_fast_free(const void *p)
{
    _Atomic uint8_t *f = mt_tls_h.sfilter;
    return f && MT_LIKELY(!mt_tls_in_hook) && !mt_sfilter_maybe_in(f, p); /* exact: one test */
}

/* A pass-through allocation of the program's while tracking runs is one we
 * cannot attribute.  memtop's own allocations are not the program's. */
static inline void count_untracked(void *p)
{
    if (p && mt_tls_in_hook != MT_IN_OWN &&
        atomic_load_explicit(&mt_g.state, memory_order_relaxed) == MT_ST_READY)
        atomic_fetch_add_explicit(&mt_g.untracked_alloc_count, 1, memory_order_relaxed);
}

#endif
