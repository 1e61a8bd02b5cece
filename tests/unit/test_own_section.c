/* test_own_section.c -- unit tests of memtop's own sections on a
 * program's thread (core_thread_state.h mt_own_enter, mt_own_leave).
 *
 * Inside such a section in_hook is MT_IN_OWN, and an allocation there is
 * memtop's: a signal handler of the program's that ran inside would have
 * its allocations counted nowhere.  So a section holds the program's
 * asynchronous signals back until it ends, and they then run with in_hook
 * as it was before the section; faults stay deliverable; a section inside
 * memtop's own work (in_hook already MT_IN_OWN) changes no mask.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "core_thread_state.h"

const uint64_t mt_sfilter_closed[1] = {1};
MT_TLS mt_tls_hot mt_tls_h = MT_TLS_HOT_INIT;

static volatile sig_atomic_t g_runs, g_in_hook_seen;

static void on_usr1(int sig)
{
    (void)sig;
    g_runs++;
    g_in_hook_seen = mt_tls_in_hook;
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
    g_runs = 0;
    g_in_hook_seen = -1;
}

static bool blocked_now(int sig)
{
    sigset_t cur;
    assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
    return sigismember(&cur, sig) == 1;
}

/* A signal raised inside runs once the section ends, outside it: with
 * in_hook as the caller had it (0 here, MT_IN_HOOK below). */
static void held_until_leave(int outer)
{
    install();
    mt_tls_in_hook = outer;
    mt_own own;
    mt_own_enter(&own);
    assert_int_equal(mt_tls_in_hook, MT_IN_OWN);
    raise(SIGUSR1);
    assert_int_equal(g_runs, 0);
    mt_own_leave(&own);
    assert_int_equal(g_runs, 1);
    assert_int_equal(g_in_hook_seen, outer);
    assert_int_equal(mt_tls_in_hook, outer);
    mt_tls_in_hook = 0;
}

static void signal_held_from_program_code(void **state)
{
    (void)state;
    held_until_leave(0);
}

static void signal_held_from_a_hook(void **state)
{
    (void)state;
    held_until_leave(MT_IN_HOOK);
}

/* Faults stay deliverable inside; the caller's own mask comes back
 * exactly (a signal it blocked stays blocked). */
static void faults_open_and_mask_restored(void **state)
{
    (void)state;
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
    mt_own own;
    mt_own_enter(&own);
    assert_true(blocked_now(SIGUSR1));
    assert_true(blocked_now(SIGALRM));
    assert_true(blocked_now(SIGPROF));
    assert_false(blocked_now(SIGSEGV));
    assert_false(blocked_now(SIGBUS));
    assert_false(blocked_now(SIGFPE));
    mt_own_leave(&own);
    assert_false(blocked_now(SIGUSR1));
    assert_true(blocked_now(SIGUSR2));
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL), 0);
}

/* Inside memtop's own work already (its threads block every signal for
 * good): no system call, no mask change, in_hook stays MT_IN_OWN. */
static void nested_changes_nothing(void **state)
{
    (void)state;
    install();
    mt_tls_in_hook = MT_IN_OWN;
    mt_own own;
    mt_own_enter(&own);
    assert_false(own.masked);
    assert_false(blocked_now(SIGUSR1)); /* this test's thread: nothing blocked it */
    mt_own_leave(&own);
    assert_int_equal(mt_tls_in_hook, MT_IN_OWN);
    mt_tls_in_hook = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signal_held_from_program_code),
        cmocka_unit_test(signal_held_from_a_hook),
        cmocka_unit_test(faults_open_and_mask_restored),
        cmocka_unit_test(nested_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
