/* test_byte_count.c -- byte_count.h, the one grammar of --sample,
 * --threshold and MEMTOP_SAMPLE (memtop's option parser and libmemtop.so's
 * environment both use it): every suffix up to T, the bound inclusive (the
 * "up to 1T" the messages promise), and what is not a byte count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "byte_count.h"

static uint64_t ok(const char *s, uint64_t max)
{
    uint64_t v = 12345;
    assert_true(mt_parse_byte_count(s, max, &v));
    return v;
}

static void bad(const char *s, uint64_t max)
{
    uint64_t v = 12345;
    assert_false(mt_parse_byte_count(s, max, &v));
    assert_int_equal(v, 12345);
}

static void test_suffixes(void **state)
{
    (void)state;
    assert_int_equal(ok("0", MT_SAMPLE_MAX_BYTES), 0);
    assert_int_equal(ok("4096", MT_SAMPLE_MAX_BYTES), 4096);
    assert_int_equal(ok("512k", MT_SAMPLE_MAX_BYTES), 512u << 10);
    assert_int_equal(ok("1M", MT_SAMPLE_MAX_BYTES), 1u << 20);
    assert_int_equal(ok("3g", MT_SAMPLE_MAX_BYTES), 3ull << 30);
    assert_int_equal(ok("1T", MT_SAMPLE_MAX_BYTES), 1ull << 40);
    assert_int_equal(ok("1t", MT_SAMPLE_MAX_BYTES), 1ull << 40);
    assert_int_equal(ok("1024G", MT_SAMPLE_MAX_BYTES), 1ull << 40);
}

static void test_bounds(void **state)
{
    (void)state;
    bad("2T", MT_SAMPLE_MAX_BYTES);
    bad("1025G", MT_SAMPLE_MAX_BYTES);
    bad("1099511627777", MT_SAMPLE_MAX_BYTES);
    assert_int_equal(ok("1099511627776", MT_SAMPLE_MAX_BYTES), 1ull << 40);
    assert_int_equal(ok("8388607T", INT64_MAX), 8388607ull << 40); /* --threshold: up to LONG_MAX */
    bad("8388608T", INT64_MAX);
    bad("99999999999999999999", UINT64_MAX);
}

static void test_not_counts(void **state)
{
    (void)state;
    const char *const words[] = {"",    "k",  "-1",  "+1",   " 1",  "1 ",
                                 "1kb", "1P", "12q", "0x10", "1.5M"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        bad(words[i], MT_SAMPLE_MAX_BYTES);
    bad(NULL, MT_SAMPLE_MAX_BYTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suffixes),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_not_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
