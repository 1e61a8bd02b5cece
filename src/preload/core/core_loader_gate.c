/* core_loader_gate.c -- memtop's own holds of the loader's lock, and fork.
 *
 * dl_iterate_phdr holds the loader's dl_load_write_lock while it runs its
 * callback, and glibc (2.36) does not reset that lock in a fork child: a
 * child forked while another thread was inside dl_iterate_phdr finds it
 * held by a thread it does not have, and hangs at its own first
 * dl_iterate_phdr (its first libunwind walk, its recording's module map,
 * its publisher's module scan).  A program that forks while one of its
 * own threads iterates has that bug without memtop too; memtop must not
 * add such holds of its own.  It has many: libunwind's walks (every step
 * looks its unwind table up with dl_iterate_phdr), the publisher's poll
 * for new modules (every 20 ms: alloc_scan.c, hook_loaded_sym.c), the
 * recording writer's module check (every pass, ~5 ms when idle:
 * record_records.c), the allocator scan's listing, dlsym's check for new
 * modules, mimalloc's lookups.  A child forked in one of those windows
 * hung for ever (test unwind_fork_walk, once, at load 2-4).
 *
 * So each such call is a section of this gate: fork_prepare closes it and
 * waits, before it takes any memtop lock, until no thread is inside one,
 * and sections that would begin meanwhile wait for the fork to end.  The
 * calls under the publish lock (publish_modules.c, from the snapshot)
 * need none: fork_prepare takes that lock (1) after this gate (0).  A
 * section holds no memtop lock that fork_prepare takes, so the fork's
 * wait cannot deadlock on memtop; it is bounded anyway (FORK_WAIT_NS), in
 * case a section waits for a lock the forking thread holds (a libunwind
 * walk waiting for the loader's lock held by a dlopen on the forking
 * thread, which then forks from a constructor).
 *
 * Both sides wait as memtop's spin lock does (mt_spin_wait: pause, yield,
 * then nap): a waiter of higher real-time priority on the CPU of the
 * thread it waits for would yield to nobody with sched_yield alone, and
 * spin for ever (a section waiting for a fork) or for the fork's whole
 * bound (a fork waiting for a section).
 *
 * MEMTOP_TEST_LOADER_HOLD_US, for tests: every mt_loader_iterate naps
 * this long in its first callback, holding the loader's lock, so that a
 * fork meets a hold far more often than by chance.
 */
#define _GNU_SOURCE
#include "core_loader_gate.h"

#include "core_clock.h"
#include "core_common.h"
#include "core_spinlock.h"
#include "core_state.h"

#include <link.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FORK_WAIT_NS 1000000000ull
static _Atomic unsigned g_inside; /* threads inside a section */
static _Atomic unsigned g_forks;  /* forks waiting or under way (two threads may fork at once) */
static MT_TLS unsigned tls_depth; /* this thread's nested sections */
static MT_TLS bool tls_counted;   /* this thread's outermost section is in g_inside */
static MT_TLS bool tls_forking;   /* this thread closed the gate: it never waits for itself */

/* Sequentially consistent on both sides (a Dekker pair): either the
 * entering thread sees the gate closed, or fork_prepare sees it counted. */
void mt_loader_enter(void)
{
    if (tls_depth++ != 0 || tls_forking)
        return;
    for (unsigned spins = 0;;) {
        while (atomic_load_explicit(&g_forks, memory_order_seq_cst))
            mt_spin_wait(spins++);
        atomic_fetch_add_explicit(&g_inside, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(&g_forks, memory_order_seq_cst))
            break;
        atomic_fetch_sub_explicit(&g_inside, 1, memory_order_seq_cst);
    }
    tls_counted = true;
}

void mt_loader_leave(void)
{
    if (--tls_depth != 0 || !tls_counted)
        return;
    tls_counted = false;
    atomic_fetch_sub_explicit(&g_inside, 1, memory_order_seq_cst);
}

typedef struct held_call {
    mt_dl_iter_cb cb;
    void *data;
    bool napped;
} held_call;

/* MEMTOP_TEST_LOADER_HOLD_US: the nap, then the caller's callback.  A raw
 * system call: no cancellation point. */
static int held_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    held_call *h = arg;
    if (!h->napped) {
        h->napped = true;
        uint32_t us = mt_g.cfg.test_loader_hold_us;
        struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
        syscall(SYS_nanosleep, &ts, NULL);
    }
    return h->cb(info, size, h->data);
}

int mt_loader_iterate(mt_dl_iter_cb cb, void *data)
{
    mt_loader_enter();
    int rc;
    if (MT_UNLIKELY(mt_g.cfg.test_loader_hold_us)) {
        held_call h = {cb, data, false};
        rc = dl_iterate_phdr(held_cb, &h);
    } else {
        rc = dl_iterate_phdr(cb, data);
    }
    mt_loader_leave();
    return rc;
}

void mt_loader_fork_prepare(void)
{
    tls_forking = true;
    atomic_fetch_add_explicit(&g_forks, 1, memory_order_seq_cst);
    uint64_t until = mt_mono_raw_ns(CLOCK_MONOTONIC) + FORK_WAIT_NS;
    for (unsigned spins = 0; atomic_load_explicit(&g_inside, memory_order_seq_cst) != 0 &&
                             mt_mono_raw_ns(CLOCK_MONOTONIC) < until;)
        mt_spin_wait(spins++);
}

void mt_loader_fork_done(bool child)
{
    if (child) { /* the sections and the other forks are the parent's threads' */
        atomic_store_explicit(&g_inside, 0, memory_order_seq_cst);
        atomic_store_explicit(&g_forks, 0, memory_order_seq_cst);
    } else {
        /* a count, not a flag: the first of two forks to finish must not
         * open the gate while the second is still waiting or forking */
        atomic_fetch_sub_explicit(&g_forks, 1, memory_order_seq_cst);
    }
    tls_forking = false;
}
