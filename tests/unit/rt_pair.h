/* rt_pair.h -- two threads on CPU 0 at SCHED_FIFO priorities 1 and 2, for
 * the tests that a memtop wait does not starve the thread it waits for
 * (test_spin_priority.c, test_loader_gate_priority.c).
 *
 * rt_run_pair starts `high` first and waits until it runs at FIFO 2 on
 * CPU 0 (rt_high_begin), then starts `low` at FIFO 1: low cannot get
 * ahead of high.  High then waits until low lets it run (rt_let_high_run,
 * from inside low's section), takes the CPU at once and waits for low.
 * alarm() ends a starved run (a waiter spinning above low for ever) as a
 * failure.  The test is skipped where SCHED_FIFO or CPU 0 is refused (not
 * root, no CAP_SYS_NICE, a container without real-time budget). */
#ifndef MEMTOP_TEST_RT_PAIR_H
#define MEMTOP_TEST_RT_PAIR_H

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

static struct {
    sem_t ready, step;
    _Atomic int refused;
} g_rt;

static inline void rt_on_cpu0_fifo(int prio)
{
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    struct sched_param sp = {.sched_priority = prio};
    if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0 ||
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
        g_rt.refused = 1;
}

/* The high thread's start: at FIFO 2, then waits for low's signal. */
static inline void rt_high_begin(void)
{
    rt_on_cpu0_fifo(2);
    sem_post(&g_rt.ready);
    sem_wait(&g_rt.step);
}

/* Low, inside what high will wait for: high preempts it here. */
static inline void rt_let_high_run(void)
{
    sem_post(&g_rt.step);
}

/* Tens of milliseconds of work on the CPU. */
static inline void rt_busy(void)
{
    for (volatile long i = 0; i < 20000000; i++)
        ;
}

/* Runs high and low (which calls rt_on_cpu0_fifo(1) first); high's result.
 * Calls cmocka's skip() where real-time scheduling is refused. */
static inline void *rt_run_pair(void *(*high)(void *), void *(*low)(void *))
{
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
        skip();
    sp.sched_priority = 0;
    sched_setscheduler(0, SCHED_OTHER, &sp);
    alarm(20); /* starved: SIGALRM kills the test */
    sem_init(&g_rt.ready, 0, 0);
    sem_init(&g_rt.step, 0, 0);
    pthread_t h, l;
    void *res = NULL;
    assert_int_equal(pthread_create(&h, NULL, high, NULL), 0);
    sem_wait(&g_rt.ready);
    assert_int_equal(pthread_create(&l, NULL, low, NULL), 0);
    pthread_join(l, NULL);
    pthread_join(h, &res);
    alarm(0);
    if (g_rt.refused)
        skip();
    return res;
}

#endif
