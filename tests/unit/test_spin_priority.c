/* test_spin_priority.c -- memtop's spin lock (core_spinlock.h, also the
 * wait of a trace's lock) does not starve a holder of lower real-time
 * priority: a SCHED_FIFO waiter on the holder's CPU must get off that CPU
 * (sched_yield alone yields to its own priority only, and spun for ever).
 * Both threads pinned to CPU 0, the holder at FIFO 1 preempted inside its
 * section by the waiter at FIFO 2.  alarm() ends a starved run as a
 * failure.  Skipped where SCHED_FIFO is refused (not root, no
 * CAP_SYS_NICE, or a container without real-time budget). */
#define _GNU_SOURCE
#include "core_spinlock.h"

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

static mt_spinlock g_lock;
static sem_t g_held, g_ready;
static _Atomic int g_fifo_refused;

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

static void *holder(void *arg)
{
    (void)arg;
    on_cpu0_fifo(1);
    mt_spin_lock(&g_lock);
    sem_post(&g_held); /* the waiter, higher, takes the CPU here */
    for (volatile long i = 0; i < 20000000; i++)
        ;
    mt_spin_unlock(&g_lock);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    on_cpu0_fifo(2);
    sem_post(&g_ready);
    sem_wait(&g_held);
    mt_spin_lock(&g_lock);
    mt_spin_unlock(&g_lock);
    return NULL;
}

static void test_no_starvation(void **state)
{
    (void)state;
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
        skip();
    sp.sched_priority = 0;
    sched_setscheduler(0, SCHED_OTHER, &sp);
    alarm(20); /* starved: SIGALRM kills the test */
    sem_init(&g_held, 0, 0);
    sem_init(&g_ready, 0, 0);
    pthread_t w, h;
    assert_int_equal(pthread_create(&w, NULL, waiter, NULL), 0);
    sem_wait(&g_ready); /* the waiter runs at its priority: the holder cannot get ahead of it */
    assert_int_equal(pthread_create(&h, NULL, holder, NULL), 0);
    pthread_join(h, NULL);
    pthread_join(w, NULL);
    alarm(0);
    if (g_fifo_refused)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_starvation)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
