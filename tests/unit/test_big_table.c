/* test_big_table.c -- src/ipc/big_table.c: small tables from calloc, large
 * ones mapped on a 2 MiB boundary (where huge pages can back them), zeroed
 * and writable to their last byte either way; overflow refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "big_table.h"

#define MIB ((size_t)1 << 20)

/* Every byte zero, then every byte writable. */
static void check_zeroed_and_write(unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 4093)
        assert_int_equal(p[i], 0);
    assert_int_equal(p[bytes - 1], 0);
    memset(p, 0xa5, bytes);
}

static void test_small(void **state)
{
    (void)state;
    unsigned char *p = mt_big_calloc(1000, 32);
    assert_non_null(p);
    check_zeroed_and_write(p, 32000);
    mt_big_free(p, 1000, 32);
    mt_big_free(NULL, 1000, 32);
}

static void test_large_aligned(void **state)
{
    (void)state;
    size_t sizes[] = {2 * MIB, 3 * MIB + 32, 8 * MIB};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k] / 32;
        unsigned char *p = mt_big_calloc(n, 32);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % (2 * MIB), 0);
        check_zeroed_and_write(p, n * 32);
        mt_big_free(p, n, 32);
    }
}

static void test_overflow(void **state)
{
    (void)state;
    assert_null(mt_big_calloc(SIZE_MAX / 8, 16));
    assert_null(mt_big_calloc((size_t)1 << 62, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_large_aligned),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
