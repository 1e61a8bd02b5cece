/* test_mt_assert.c -- MT_ASSERT (src/preload/core/core_assert.h): in a
 * debug build a violated invariant writes one line to stderr and aborts;
 * with NDEBUG it is compiled out, its condition not evaluated
 * (test_mt_assert_ndebug.c).  The trace counters' read (table_trace.h's
 * mt_trace_read) is one of the places that assert: it is checked here
 * too, on counters that break alloc_count >= free_count. */
#undef NDEBUG /* this file is the debug build, whatever the tree's build type */
#include "core_assert.h"
#include "table_trace.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

int mt_assert_ndebug_probe(void); /* test_mt_assert_ndebug.c */

/* Runs fn in a child with its stderr on a pipe; returns the wait status
 * and what it wrote. */
static int run_child(void (*fn)(void), char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = '\0';
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void violate(void)
{
    volatile int two = 2;
    MT_ASSERT(two + two == 5);
}

static void hold(void)
{
    volatile int two = 2;
    MT_ASSERT(two + two == 4);
}

static void read_torn_counters(void)
{
    static mt_trace t; /* more frees than allocations: what the order prevents */
    atomic_store_explicit(&t.alloc_count, 1, memory_order_relaxed);
    atomic_store_explicit(&t.seq, 2 * (1 + 2), memory_order_relaxed); /* free_count 2 */
    mt_trace_counts c;
    mt_trace_read(&t, &c);
}

/* fn, in a child, aborts after writing what contains each needle. */
static void assert_aborts(void (*fn)(void), const char *const *needles)
{
    char out[512];
    int st = run_child(fn, out, sizeof out);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    for (; *needles; needles++)
        assert_non_null(strstr(out, *needles));
}

static void violated_assert_aborts_with_a_message(void **state)
{
    (void)state;
    const char *const needles[] = {
        "memtop: ", "test_mt_assert.c:", ": assertion failed: two + two == 5\n", NULL};
    assert_aborts(violate, needles);
}

static void holding_assert_does_nothing(void **state)
{
    (void)state;
    char out[512];
    int st = run_child(hold, out, sizeof out);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_string_equal(out, "");
}

static void ndebug_compiles_it_out(void **state)
{
    (void)state;
    assert_int_equal(mt_assert_ndebug_probe(), 0); /* condition not evaluated, no abort */
}

static void trace_read_asserts_alloc_count_ge_free_count(void **state)
{
    (void)state;
    const char *const needles[] = {"assertion failed: c->alloc_count >= c->free_count", NULL};
    assert_aborts(read_torn_counters, needles);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(violated_assert_aborts_with_a_message),
        cmocka_unit_test(holding_assert_does_nothing),
        cmocka_unit_test(ndebug_compiles_it_out),
        cmocka_unit_test(trace_read_asserts_alloc_count_ge_free_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
