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
 * The one waited for at FIFO 1 and the waiter at FIFO 2, both on CPU 0
 * (rt_pair.h). */
#define _GNU_SOURCE
#include "core_loader_gate.h"
#include "core_state.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rt_pair.h"

mt_global
    mt_g; /* core_lifecycle.c, which defines it, is not linked: the gate reads its test knob */

static _Atomic bool g_fork_done, g_section_done;

/* FIFO 1: closes the gate, lets the waiter in, then "forks" (busy). */
static void *forker_low(void *arg)
{
    (void)arg;
    rt_on_cpu0_fifo(1);
    mt_loader_fork_prepare();
    rt_let_high_run(); /* the section's thread, higher, takes the CPU here */
    rt_busy();
    atomic_store(&g_fork_done, true);
    mt_loader_fork_done(false);
    return NULL;
}

/* FIFO 2: a section that begins during the fork. */
static void *section_high(void *arg)
{
    (void)arg;
    rt_high_begin();
    mt_loader_enter();
    bool after = atomic_load(&g_fork_done);
    mt_loader_leave();
    return (void *)(uintptr_t)after;
}

/* FIFO 1: inside a section when the fork comes. */
static void *section_low(void *arg)
{
    (void)arg;
    rt_on_cpu0_fifo(1);
    mt_loader_enter();
    rt_let_high_run(); /* the forking thread, higher, takes the CPU here */
    rt_busy();
    atomic_store(&g_section_done, true);
    mt_loader_leave();
    return NULL;
}

/* FIFO 2: a fork while that section runs. */
static void *forker_high(void *arg)
{
    (void)arg;
    rt_high_begin();
    mt_loader_fork_prepare();
    bool after = atomic_load(&g_section_done);
    mt_loader_fork_done(false);
    return (void *)(uintptr_t)after;
}

static void test_section_waits_for_fork(void **state)
{
    (void)state;
    assert_non_null(rt_run_pair(section_high, forker_low)); /* it began after the fork's end */
}

static void test_fork_waits_for_section(void **state)
{
    (void)state;
    assert_non_null(rt_run_pair(forker_high, section_low)); /* the section ended first */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_section_waits_for_fork),
                                       cmocka_unit_test(test_fork_waits_for_section)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
