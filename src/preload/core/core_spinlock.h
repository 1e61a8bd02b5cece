/* core_spinlock.h -- the only lock used inside allocation hooks.
 *
 * A test-and-test-and-set lock that yields the CPU after a short spin, so a
 * preempted holder does not burn the other core.  No futex, no pthread
 * mutex: pthread mutexes may be interposed or instrumented, and this lock
 * must be safe to take inside malloc (a trace's lock, table_trace.h, spins
 * the same way: mt_spin_wait).  Critical sections guarded by it are
 * short and never call out of memtop (no allocation, no unwinding, no I/O).
 */
#ifndef MT_SPINLOCK_H
#define MT_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    _Atomic int held;
} mt_spinlock;

static inline bool mt_spin_trylock(mt_spinlock *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

/* One wait of a spin loop, the spins-th: pause, then yield the CPU. */
static inline void mt_spin_wait(unsigned spins)
{
    if (spins < 64)
        __builtin_ia32_pause();
    else
        sched_yield();
}

static inline void mt_spin_lock(mt_spinlock *l)
{
    for (unsigned spins = 0; !mt_spin_trylock(l); spins++)
        mt_spin_wait(spins);
}

static inline void mt_spin_unlock(mt_spinlock *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

#endif
