/* test_caller_labels.c -- unit tests of the callers that tell apart rows of
 * one location (src/tui/names/caller_labels.h), on made-up traces of
 * addresses in no module (each frame's text is its address, "0x20"): which
 * rows get callers, how many, and their text; a prefix path, identical
 * paths, a row alone, a row without frames; a large group stays fast. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "caller_labels.h"

static const mt_locator no_modules = {NULL, NULL, NULL, NULL, NULL, 0};

static mt_caller_row row(const uint64_t *frames, unsigned n, const char *label)
{
    return (mt_caller_row){frames, n, label, 0, 99};
}

static const char *joined(const mt_caller_row *r, bool utf8)
{
    static char buf[1024];
    return mt_caller_label_join(&no_modules, r, utf8, buf, sizeof buf);
}

static void test_depths(void **state)
{
    (void)state;
    static const uint64_t a[] = {0x10, 0x20, 0x30}, b[] = {0x10, 0x21, 0x30},
                          c[] = {0x10, 0x20, 0x31, 0x40}, d[] = {0x10, 0x20, 0x31, 0x40},
                          e[] = {0x50}, f[] = {0x10, 0x20}, g[] = {0x10, 0x20, 0x31, 0x41},
                          h[] = {0x10, 0x22, 0x32, 0x33, 0x34};
    mt_caller_row r[] = {
        row(a, 3, "0x10"),    row(b, 3, "0x10"), row(c, 4, "0x10"),
        row(d, 4, "0x10"),    row(e, 1, "0x50"), row(f, 2, "0x10"),
        row(NULL, 0, "0x10"), row(g, 4, "0x10"), row(h, 5, "0x10"),
    };
    assert_int_equal(mt_caller_labels(&no_modules, r, sizeof r / sizeof r[0]), 0);
    assert_int_equal(r[0].depth, 2); /* 0x20 as c, d, f, g; 0x30 its own */
    assert_int_equal(r[1].depth, 1); /* 0x21: no other */
    assert_int_equal(r[2].depth, 0); /* c and d: the same path, nothing tells them apart */
    assert_int_equal(r[3].depth, 0);
    assert_int_equal(r[4].depth, 0); /* alone at its location */
    assert_int_equal(r[5].depth, 0); /* a's path's beginning: it ends where a goes on */
    assert_int_equal(r[6].depth, 0); /* no frames */
    assert_int_equal(r[7].depth, 3); /* c's path up to 0x41 */
    assert_int_equal(r[8].depth, 1);
    assert_string_equal(joined(&r[0], false), "0x10 <- 0x20 <- 0x30");
    assert_string_equal(joined(&r[1], false), "0x10 <- 0x21");
    assert_string_equal(joined(&r[2], false), "0x10");
    assert_string_equal(joined(&r[7], false), "0x10 <- 0x20 <- ... <- 0x41");
    assert_string_equal(joined(&r[7], true), "0x10 \u2190 0x20 \u2190 \u2026 \u2190 0x41");
    char callers[MT_CALLER_DEPTH][MT_CALLER_MAX];
    assert_int_equal(mt_trace_callers(&no_modules, g, 4, callers, MT_CALLER_DEPTH), 3);
    assert_string_equal(callers[2], "0x41");
}

/* Paths that differ only past MT_CALLER_DEPTH callers are not told apart. */
static void test_too_deep(void **state)
{
    (void)state;
    uint64_t x[MT_CALLER_DEPTH + 2], y[MT_CALLER_DEPTH + 2];
    for (unsigned i = 0; i < MT_CALLER_DEPTH + 2; i++)
        x[i] = y[i] = 0x100 + i;
    y[MT_CALLER_DEPTH + 1] = 0x999;
    mt_caller_row r[] = {row(x, MT_CALLER_DEPTH + 2, "0x100"),
                         row(y, MT_CALLER_DEPTH + 2, "0x100")};
    assert_int_equal(mt_caller_labels(&no_modules, r, 2), 0);
    assert_int_equal(r[0].depth, 0);
    assert_int_equal(r[1].depth, 0);
    y[MT_CALLER_DEPTH] = 0x998; /* the last caller compared */
    assert_int_equal(mt_caller_labels(&no_modules, r, 2), 0);
    assert_int_equal(r[1].depth, MT_CALLER_DEPTH);
}

/* 20000 rows of one location, each with its own caller: every one told
 * apart by its direct caller, in well under the test's timeout (comparing
 * every pair would be 4e8 comparisons), and in memory of the callers' size
 * (MT_CALLER_DEPTH * MT_CALLER_MAX bytes per row was 80 MB here). */
static void test_large_group(void **state)
{
    (void)state;
    enum { N = 20000 };
    uint64_t(*fr)[2] = malloc(N * sizeof *fr);
    mt_caller_row *r = malloc(N * sizeof *r);
    assert_non_null(fr);
    assert_non_null(r);
    for (unsigned i = 0; i < N; i++) {
        fr[i][0] = 0x10;
        fr[i][1] = 0x1000 + i;
        r[i] = row(fr[i], 2, "0x10");
    }
    assert_int_equal(mt_caller_labels(&no_modules, r, N), 0);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(r[i].depth, 1);
#ifndef __SANITIZE_ADDRESS__ /* ASan's quarantine keeps freed memory */
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    assert_true(ru.ru_maxrss < 40 * 1024); /* KiB: the process's peak, far below 80 MB */
#endif
    free(r);
    free(fr);
}

/* A label for a narrow column loses its frames' places, keeps its names. */
static void test_compact(void **state)
{
    (void)state;
    char a[] = "make_label (same_site.c:21) \u2190 parse_config (same_site.c:29)";
    assert_string_equal(mt_caller_label_compact(a), "make_label \u2190 parse_config");
    char b[] = "dictAddRaw (redis-check-rdb+0x4f2a1) <- setKey (db.c:300) <- ... <- main (x.c:1)";
    assert_string_equal(mt_caller_label_compact(b), "dictAddRaw <- setKey <- ... <- main");
    char c[] = "(anonymous namespace)::f(int) (a.cc:3) <- operator()() const (b.cc:9)";
    assert_string_equal(mt_caller_label_compact(c),
                        "(anonymous namespace)::f(int) <- operator()() const");
    char d[] = "f (x) y (unclosed <- g ()";
    assert_string_equal(mt_caller_label_compact(d), "f y (unclosed <- g");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depths),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_large_group),
        cmocka_unit_test(test_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
