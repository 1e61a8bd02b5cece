/* test_allocators.c -- the reader's checks of the allocator list a target
 * publishes (header.allocators, src/ipc/shm_allocators.c): every count,
 * kind, flag and string is checked, since any process of the target's user
 * can write the segment; and the text the views show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shm_allocators.h"

static void one_static_jemalloc(mt_shm_allocators *a)
{
    memset(a, 0, sizeof *a);
    a->seq = 2;
    a->count = 1;
    a->inexact = 1;
    a->a[0].kind = MT_ALLOC_KIND_JEMALLOC;
    a->a[0].flags = MT_ALLOC_STATIC | MT_ALLOC_INEXACT;
    strcpy(a->a[0].prefix, "_rjem_");
    strcpy(a->a[0].module, "/usr/bin/server");
    strcpy(a->a[0].note, "statically linked jemalloc (_rjem_) in server not hooked");
}

static void test_valid(void **state)
{
    (void)state;
    mt_shm_allocators a;
    one_static_jemalloc(&a);
    mt_err err;
    assert_int_equal(mt_allocators_check(&a, &err), MT_OK);
    char line[512];
    mt_allocators_inexact_text(&a, line, sizeof line);
    assert_string_equal(line, "statically linked jemalloc (_rjem_) in server not hooked");
    assert_true(mt_allocators_inexact(&a));
}

static void test_exact_says_nothing(void **state)
{
    (void)state;
    mt_shm_allocators a;
    one_static_jemalloc(&a);
    a.a[0].flags = MT_ALLOC_STATIC | MT_ALLOC_HOOKED | MT_ALLOC_STATS;
    a.a[0].note[0] = '\0';
    a.inexact = 0;
    mt_err err;
    assert_int_equal(mt_allocators_check(&a, &err), MT_OK);
    char line[64] = "x";
    mt_allocators_inexact_text(&a, line, sizeof line);
    assert_string_equal(line, "");
    assert_non_null(mt_allocators_main(&a));
    char name[64];
    mt_allocator_name(mt_allocators_main(&a), name, sizeof name);
    assert_string_equal(name, "jemalloc (static)");
}

/* How each is hooked, for the JSON export's "how". */
static void test_how(void **state)
{
    (void)state;
    mt_shm_allocators a;
    mt_err err;
    one_static_jemalloc(&a);
    assert_null(mt_allocator_how(&a.a[0])); /* not hooked */
    a.a[0].flags = MT_ALLOC_STATIC | MT_ALLOC_HOOKED | MT_ALLOC_REDIRECTED;
    a.a[0].note[0] = '\0';
    a.inexact = 0;
    assert_int_equal(mt_allocators_check(&a, &err), MT_OK);
    assert_string_equal(mt_allocator_how(&a.a[0]), "redirect");
    a.a[0].flags = MT_ALLOC_STATIC | MT_ALLOC_HOOKED;
    assert_string_equal(mt_allocator_how(&a.a[0]), "hook-api");
    a.a[0].kind = MT_ALLOC_KIND_MIMALLOC;
    assert_string_equal(mt_allocator_how(&a.a[0]), "interposition");
}

/* A flag a newer target added (without a version bump) is ignored, not
 * taken for corruption: the entry reads as it would without it. */
static void test_unknown_flag(void **state)
{
    (void)state;
    mt_shm_allocators a;
    mt_err err;
    one_static_jemalloc(&a);
    uint32_t known = a.a[0].flags;
    a.a[0].flags |= 1u << 9;
    assert_int_equal(mt_allocators_check(&a, &err), MT_OK);
    mt_allocators_known(&a);
    assert_int_equal(a.a[0].flags, known);
}

static void test_corrupt(void **state)
{
    (void)state;
    mt_shm_allocators a;
    mt_err err;
    one_static_jemalloc(&a);
    a.count = MT_ALLOC_MAX + 1;
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
    one_static_jemalloc(&a);
    a.a[0].kind = MT_ALLOC_KIND_MAX + 1;
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
    one_static_jemalloc(&a);
    memset(a.a[0].note, 'x', sizeof a.a[0].note); /* unterminated */
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
    one_static_jemalloc(&a);
    memset(a.a[0].module, 'x', sizeof a.a[0].module);
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
    one_static_jemalloc(&a);
    a.inexact = 0; /* an inexact entry not counted: hides it from the views */
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
    one_static_jemalloc(&a);
    a.inexact = 5; /* more than there are */
    assert_int_equal(mt_allocators_check(&a, &err), MT_E_CORRUPT);
}

static void test_recording_counts_only(void **state)
{
    (void)state;
    mt_shm_allocators a;
    memset(&a, 0, sizeof a);
    a.seq = 2;
    a.more = a.inexact = 2;
    mt_err err;
    assert_int_equal(mt_allocators_check(&a, &err), MT_OK);
    char line[128];
    mt_allocators_inexact_text(&a, line, sizeof line);
    assert_string_equal(line, "2 allocators memtop cannot see (the live view names them)");
}

static void test_small_buffer(void **state)
{
    (void)state;
    mt_shm_allocators a;
    one_static_jemalloc(&a);
    char line[8];
    mt_allocators_inexact_text(&a, line, sizeof line);
    assert_int_equal(strlen(line), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_exact_says_nothing),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_unknown_flag),
        cmocka_unit_test(test_recording_counts_only),
        cmocka_unit_test(test_small_buffer),
        cmocka_unit_test(test_how),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
