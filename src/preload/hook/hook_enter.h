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

/* Sampled mode's fast path (core_sample.h): the thread's state if it may
 * skip hook_enter/hook_leave, that is, the gate is open (sampled mode,
 * tracking ready: not a fork child yet to restart; so the real allocator
 * is known too), the thread is tracked and not inside memtop; *filter is
 * then the filter.  The caller decides with the countdown (malloc) or the
 * filter (free) and, if nothing is to be tracked, counts the call exactly
 * with mt_tls_in_hook set (so that a signal handler's call in between
 * passes through instead of racing on the thread's counters).  In exact
 * mode: one load and a branch. */
static inline mt_thread *hook_fast_thread(_Atomic uint8_t **filter)
{
    _Atomic uint8_t *f = atomic_load_explicit(&mt_sfast, memory_order_acquire);
    if (MT_LIKELY(!f))
        return NULL;
    mt_thread *t = mt_tls_thread;
    if (MT_LIKELY(t) && MT_LIKELY(!mt_tls_in_hook)) {
        *filter = f;
        return t;
    }
    return NULL;
}

/* An allocation of size bytes that the countdown does not reach.  Between
 * two calls sample_left is positive (it is drawn again before a call
 * leaves memtop); a size of 2^63 or more compares as negative, so it takes
 * the fast path, where the real allocator fails it and nothing is
 * counted. */
static inline bool hook_fast_unsampled(const mt_thread *t, size_t size)
{
    return (int64_t)size < t->sample_left;
}

/* After the real call of an unsampled allocation p (NULL: failed). */
static inline void hook_fast_counted(mt_thread *t, const void *p, size_t size)
{
    if (MT_LIKELY(p)) {
        t->sample_left -= (int64_t)size;
        mt_exact_add(&t->exact_allocs, 1);
        mt_exact_add(&t->exact_bytes, size);
    }
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
