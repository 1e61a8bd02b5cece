/* core_nocancel.h -- memtop's sections on a program's thread that call
 * cancellation points run with the thread's cancellation disabled.
 *
 * A thread whose cancel is pending (pthread_cancel, deferred: the default)
 * is cancelled at its next cancellation point.  malloc, free, dlsym,
 * dlclose, exit and the exec functions are none, yet memtop calls some on
 * the caller's thread inside them: open/read/close (the recording's disk
 * check, the allocator scan's reading of a module), write (the recording,
 * a log line), nanosleep (waits), pthread_join (exit and exec end the
 * publisher).  A cancel acted upon there would unwind the thread out of
 * memtop with its state half-updated (mt_tls_in_hook, a ring's busy flag)
 * or a lock held (the scan's, the recording's, the exec lock): later
 * scans, the publisher or the writer wait for ever, the thread's later
 * calls go uncounted, and a call that never returns in a plain run did
 * not return.  So each such section disables cancellation and puts back
 * the state it found; a pending cancel stays pending, for the program's
 * next cancellation point (enabling again acts on it only under
 * asynchronous cancellation, which malloc does not support anyway:
 * docs/pitfalls.md).  Cheap: glibc (2.34 and later) changes a word of the
 * thread's descriptor with an atomic operation, no system call.
 *
 * Only around sections that may reach a cancellation point, never on an
 * allocation's fast path; cancellation is enabled again last, after the
 * locks are released and mt_tls_in_hook restored; a section begins and
 * ends in the same function
 * (a vfork child shares its parent thread's descriptor: it must leave it
 * as it found it before its exec).  Raw system calls (syscall(2)) are no
 * cancellation points: waits on a futex and mt_spin_wait's nap need none
 * of this. */
#ifndef MT_NOCANCEL_H
#define MT_NOCANCEL_H

#include <pthread.h>

/* Disables cancellation on this thread; returns the state to restore. */
static inline int mt_nocancel_begin(void)
{
    int old = PTHREAD_CANCEL_DISABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

/* Puts back what mt_nocancel_begin found (nothing to do if it was
 * disabled already). */
static inline void mt_nocancel_end(int old)
{
    if (old == PTHREAD_CANCEL_ENABLE) {
        int ignored;
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &ignored);
    }
}

#endif
