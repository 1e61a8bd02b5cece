/* test_loader_gate_priority.c -- the loader gate (core_loader_gate.c)
 * does not starve the thread it waits for when the waiter has the higher
 * real-time priority on the same CPU: sched_yield yields to the waiter's
 * own priority only.
 *
 * - A section that begins while a fork is under way waits for the fork's
 *   end: with sched_yield it spun for ever above the forking thread, which
 *   never ran again (alarm() ends such a run as a failure).
 * - A fork waits for the sections under way: with sched_yield it spun
 *   above the section's thread until its 1 s bound, and forked with the
 *   section still inside (the thread copied a loader lock held).
 *
 * All threads pinned to CPU 0, the one waited for at FIFO 1 and the
 * waiter at FIFO 2.  Skipped where SCHED_FIFO is refused (not root, no
 * CAP_SYS_NICE, or a container without real-time budget). */
#define _GNU_SOURCE
#include "core_loader_gate.h"
#include "core_state.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

mt_global
    mt_g; /* core_lifecycle.c, which defines it, is not linked: the gate reads its test knob */

static sem_t g_step, g_ready;
static _Atomic int g_fifo_refused;
static _Atomic bool g_fork_done, g_section_done;

static void on_cpu0_fifo(int prio)
{
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    struct sched_param sp = {.sched_priority = prio};
    if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0 ||
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
        g_fifo_refused = 1;
}

static void busy(void)
{
    for (volatile long i = 0; i < 20000000; i++)
        ;
}

/* FIFO 1: closes the gate, lets the waiter in, then "forks" (busy). */
static void *forker_low(void *arg)
{
    (void)arg;
    on_cpu0_fifo(1);
    mt_loader_fork_prepare();
    sem_post(&g_step); /* the section's thread, higher, takes the CPU here */
    busy();
    atomic_store(&g_fork_done, true);
    mt_loader_fork_done(false);
    return NULL;
}

/* FIFO 2: a section that begins during the fork. */
static void *section_high(void *arg)
{
    (void)arg;
    on_cpu0_fifo(2);
    sem_post(&g_ready);
    sem_wait(&g_step);
    mt_loader_enter();
    bool after = atomic_load(&g_fork_done);
    mt_loader_leave();
    return (void *)(uintptr_t)after;
}

/* FIFO 1: inside a section when the fork comes. */
static void *section_low(void *arg)
{
    (void)arg;
    on_cpu0_fifo(1);
    mt_loader_enter();
    sem_post(&g_step); /* the forking thread, higher, takes the CPU here */
    busy();
    atomic_store(&g_section_done, true);
    mt_loader_leave();
    return NULL;
}

/* FIFO 2: a fork while that section runs. */
static void *forker_high(void *arg)
{
    (void)arg;
    on_cpu0_fifo(2);
    sem_post(&g_ready);
    sem_wait(&g_step);
    mt_loader_fork_prepare();
    bool after = atomic_load(&g_section_done);
    mt_loader_fork_done(false);
    return (void *)(uintptr_t)after;
}

/* Runs `high` (started first, at its priority before `low` starts) and
 * `low`; high's result. */
static bool run_pair(void *(*high)(void *), void *(*low)(void *))
{
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
        skip();
    sp.sched_priority = 0;
    sched_setscheduler(0, SCHED_OTHER, &sp);
    alarm(20); /* starved: SIGALRM kills the test */
    sem_init(&g_step, 0, 0);
    sem_init(&g_ready, 0, 0);
    pthread_t h, l;
    void *res = NULL;
    assert_int_equal(pthread_create(&h, NULL, high, NULL), 0);
    sem_wait(&g_ready); /* high runs at its priority on CPU 0: low cannot get ahead of it */
    assert_int_equal(pthread_create(&l, NULL, low, NULL), 0);
    pthread_join(l, NULL);
    pthread_join(h, &res);
    alarm(0);
    if (g_fifo_refused)
        skip();
    return res != NULL;
}

static void test_section_waits_for_fork(void **state)
{
    (void)state;
    assert_true(run_pair(section_high, forker_low)); /* it began after the fork's end */
}

static void test_fork_waits_for_section(void **state)
{
    (void)state;
    assert_true(run_pair(forker_high, section_low)); /* the section ended first */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_section_waits_for_fork),
                                       cmocka_unit_test(test_fork_waits_for_section)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
