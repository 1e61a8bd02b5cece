/* test_next_miss.c -- the negative cache of a next definition looked up in
 * the loaded modules (src/preload/hook/hook_next.h mt_next_fn_loaded).
 *
 * Why: memtop defines mimalloc's mi_* names; a program that calls them
 * with no mimalloc loaded (through dlsym(RTLD_DEFAULT), or a weak
 * reference bound to memtop's definition) used to pay a dlsym and a walk
 * of every module's symbol tables on every call.  A miss is now kept until
 * a module is loaded.  The load count (mt_loaded_adds) and the walk
 * (mt_loaded_sym) are stubs here: the test sets the one and counts the
 * other. */
#include "hook_next.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

MT_TLS mt_tls_hot mt_tls_h;

static unsigned long long g_adds = 7; /* loads so far */
static void *g_defined;               /* what the walk finds (NULL: nothing) */
static int g_walks;                   /* walks made */

unsigned long long mt_loaded_adds(void)
{
    return g_adds;
}

void *mt_loaded_sym(const char *name)
{
    (void)name;
    g_walks++;
    return g_defined;
}

static void real_fn(void) {}

#define NAME "memtop_test_defined_nowhere"

static void miss_is_kept_until_a_load(void **state)
{
    (void)state;
    static _Atomic(void *) slot;
    static _Atomic unsigned long long miss;
    g_walks = 0;
    for (int i = 0; i < 100; i++)
        assert_null(mt_next_fn_loaded(&slot, &miss, NAME));
    assert_int_equal(g_walks, 1); /* one walk, then the kept miss */
    assert_int_equal(mt_tls_in_hook, 0);
    g_adds++; /* a module was loaded: look again */
    assert_null(mt_next_fn_loaded(&slot, &miss, NAME));
    assert_null(mt_next_fn_loaded(&slot, &miss, NAME));
    assert_int_equal(g_walks, 2);
}

static void found_after_a_load(void **state)
{
    (void)state;
    static _Atomic(void *) slot;
    static _Atomic unsigned long long miss;
    g_walks = 0;
    g_defined = NULL;
    assert_null(mt_next_fn_loaded(&slot, &miss, NAME));
    g_defined = (void *)(uintptr_t)real_fn; /* the load brought a definition */
    g_adds++;
    assert_ptr_equal(mt_next_fn_loaded(&slot, &miss, NAME), (void *)(uintptr_t)real_fn);
    assert_ptr_equal(mt_next_fn_loaded(&slot, &miss, NAME), (void *)(uintptr_t)real_fn);
    assert_int_equal(g_walks, 2); /* kept in the slot from then on */
    g_defined = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(miss_is_kept_until_a_load),
        cmocka_unit_test(found_after_a_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
