/* test_spin_priority.c -- memtop's spin lock (core_spinlock.h, also the
 * wait of a trace's lock) does not starve a holder of lower real-time
 * priority: a SCHED_FIFO waiter on the holder's CPU must get off that CPU
 * (sched_yield alone yields to its own priority only, and spun for ever).
 * The holder at FIFO 1 is preempted inside its section by the waiter at
 * FIFO 2, both on CPU 0 (rt_pair.h). */
#define _GNU_SOURCE
#include "core_spinlock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rt_pair.h"

static mt_spinlock g_lock;

static void *holder(void *arg)
{
    (void)arg;
    rt_on_cpu0_fifo(1);
    mt_spin_lock(&g_lock);
    rt_let_high_run(); /* the waiter, higher, takes the CPU here */
    rt_busy();
    mt_spin_unlock(&g_lock);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    rt_high_begin();
    mt_spin_lock(&g_lock);
    mt_spin_unlock(&g_lock);
    return NULL;
}

static void test_no_starvation(void **state)
{
    (void)state;
    rt_run_pair(waiter, holder); /* returns: the waiter got the lock */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_starvation)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
