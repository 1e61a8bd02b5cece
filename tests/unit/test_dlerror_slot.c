/* test_dlerror_slot.c -- finding glibc's per-thread dlerror pointer at
 * start (src/preload/core/core_dlerror.c mt_dl_error_init).
 *
 * memtop finds __libc_dlerror_result in libc's dynamic symbol table (a TLS
 * object the size of a pointer, version GLIBC_PRIVATE) instead of asking
 * dlvsym, whose failure would allocate (a statically linked mimalloc then
 * crashed: alloc_patch, alloc_mi_static).  Checked here: the offset found
 * is the one dlvsym gives, this thread's slot holds a failed dlsym's error
 * and is emptied by dlerror, and the init allocated nothing.  With another
 * C library or a glibc before 2.34 the offset must stay 0. */
#define _GNU_SOURCE
#include "core_dlerror.h"
#include "core_dynsym.h"

#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* An oracle of its own (core_dlerror.c parses the version by hand). */
static bool glibc_2_34(void)
{
    return strverscmp(gnu_get_libc_version(), "2.34") >= 0;
}

static void offset_is_dlvsyms(void **state)
{
    (void)state;
    struct mallinfo2 before = mallinfo2();
    mt_dl_error_init();
    struct mallinfo2 after = mallinfo2();
    assert_int_equal(after.uordblks, before.uordblks); /* nothing allocated */
    assert_int_equal(after.hblkhd, before.hblkhd);
    long off = atomic_load_explicit(&mt_dlerr_offset, memory_order_relaxed);
    if (!glibc_2_34()) {
        assert_int_equal(off, 0);
        return;
    }
    void *p = dlvsym(RTLD_DEFAULT, "__libc_dlerror_result", "GLIBC_PRIVATE");
    assert_non_null(p);
    assert_int_equal(off, (long)((char *)p - (char *)__builtin_thread_pointer()));
}

/* The slot behaves as dlerror.c's pointer: a failed dlsym fills it, two
 * dlerror calls empty it. */
static void slot_holds_the_error(void **state)
{
    (void)state;
    void **slot = mt_dl_error_slot();
    if (!glibc_2_34()) {
        assert_null(slot);
        return;
    }
    assert_non_null(slot);
    assert_null(dlsym(RTLD_DEFAULT, "memtop_test_no_such_symbol"));
    assert_non_null(*slot);
    mt_dl_forget_error();
    assert_null(*slot);
}

static void *other_thread_slot(void *arg)
{
    (void)arg;
    assert_null(dlsym(RTLD_DEFAULT, "memtop_test_no_such_symbol"));
    void *filled = *mt_dl_error_slot();
    mt_dl_forget_error();
    return filled;
}

/* The offset is the same in every thread. */
static void slot_in_another_thread(void **state)
{
    (void)state;
    if (!mt_dl_error_slot())
        skip();
    pthread_t t;
    void *filled = NULL;
    assert_int_equal(pthread_create(&t, NULL, other_thread_slot, NULL), 0);
    assert_int_equal(pthread_join(t, &filled), 0);
    assert_non_null(filled);
    assert_null(*mt_dl_error_slot()); /* this thread's slot untouched */
}

/* The symbol table walk itself: a function is not a TLS object. */
static int find_in_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mt_dynsym t;
    if (!mt_dynsym_read(info, &t))
        return 0;
    mt_dynsym_query fn = mt_dynsym_name("dlerror", STT_FUNC);
    mt_dynsym_query tls = mt_dynsym_name("dlerror", STT_TLS);
    uint32_t i = mt_dynsym_find(&t, &fn);
    if (!i)
        return 0;
    int *found = arg;
    *found = 1 + (mt_dynsym_find(&t, &tls) != 0);
    return 1;
}

static void type_is_checked(void **state)
{
    (void)state;
    int found = 0;
    dl_iterate_phdr(find_in_libc, &found);
    assert_int_equal(found, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(offset_is_dlvsyms),
        cmocka_unit_test(slot_holds_the_error),
        cmocka_unit_test(slot_in_another_thread),
        cmocka_unit_test(type_is_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
