/* core_spinlock.h -- the only lock used inside allocation hooks.
 *
 * A test-and-test-and-set lock that yields the CPU after a short spin, then
 * naps (mt_spin_wait), so a preempted holder does not burn the other core
 * and a waiter of higher real-time priority cannot starve it.  No futex, no pthread
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    _Atomic int held;
} mt_spinlock;

static inline bool mt_spin_trylock(mt_spinlock *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

/* One wait of a spin loop, the spins-th: pause, then yield the CPU, then
 * nap.  sched_yield only lets threads of the waiter's own priority run: a
 * SCHED_FIFO/RR waiter sharing a CPU with a preempted holder of lower
 * priority would yield to nobody and spin for ever (the holder never runs
 * again on that CPU).  A nap (50 us) takes the waiter off the CPU for any
 * policy.  A raw system call: nanosleep is a cancellation point, and a
 * thread cancelled inside malloc would unwind with memtop's state held. */
static inline void mt_spin_wait(unsigned spins)
{
    if (spins < 64) {
        __builtin_ia32_pause();
    } else if (spins < 128) {
        sched_yield();
    } else {
        struct timespec nap = {0, 50000};
        syscall(SYS_nanosleep, &nap, NULL);
    }
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
