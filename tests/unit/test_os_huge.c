/* test_os_huge.c -- core_os_memory.c mt_os_alloc_huge: tables from 2 MiB on
 * mapped on a 2 MiB boundary in whole huge pages (where transparent huge
 * pages can back them), smaller ones as ordinary mappings; zeroed, writable
 * to their last byte, and counted in mt_os_bytes until given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core_os_memory.h"

#define MIB ((size_t)1 << 20)

static void check_zeroed_and_write(unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 4093)
        assert_int_equal(p[i], 0);
    assert_int_equal(p[bytes - 1], 0);
    memset(p, 0xa5, bytes);
}

/* Maps bytes, checks what is counted (want) and gives it back. */
static void check_size(size_t bytes, size_t want, bool aligned)
{
    uint64_t before = mt_os_bytes();
    unsigned char *p = mt_os_alloc_huge(bytes);
    assert_non_null(p);
    if (aligned)
        assert_int_equal((uintptr_t)p % (2 * MIB), 0);
    assert_int_equal(mt_os_bytes() - before, want);
    check_zeroed_and_write(p, bytes);
    mt_os_free_huge(p, bytes);
    assert_int_equal(mt_os_bytes(), before);
}

static void test_huge(void **state)
{
    (void)state;
    check_size(2 * MIB, 2 * MIB, true);
    check_size(3 * MIB + 32, 4 * MIB, true);
    check_size(8 * MIB, 8 * MIB, true);
}

static void test_small(void **state)
{
    (void)state;
    check_size(512 << 10, 512 << 10, false);
    check_size(1000, mt_os_whole_pages(1000), false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
