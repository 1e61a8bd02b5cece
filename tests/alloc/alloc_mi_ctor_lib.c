/* alloc_mi_ctor_lib.c -- a library linked with libmimalloc whose
 * constructor calls dlsym, for tests/alloc (check_mi_local.py, loaded by
 * alloc_mi_local).  The constructor runs inside dlopen, with the loader's
 * lock held: it waits 200 ms (memtop's publisher lists the library and
 * libmimalloc meanwhile, and the test holds that scan in its wait for the
 * loader's lock: MEMTOP_TEST_SCAN_LOADER_WAIT_MS), then takes libmimalloc's
 * own mi_malloc with dlsym (a pointer: its calls bypass the names memtop
 * defines) and leaks 700 bytes through it from leak_in_ctor; lib_work
 * leaks 1300 more from leak_in_call.  memtop's dlsym must neither wait for
 * that scan (it waits for the lock this thread holds) nor return before
 * libmimalloc is redirected. */
#include <dlfcn.h>
#include <stddef.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static void *volatile keep[2];
static void *(*p_malloc)(size_t);
static int ctor_ok;

NOINLINE void leak_in_ctor(void)
{
    keep[0] = p_malloc(700);
}

__attribute__((constructor)) static void lib_init(void)
{
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    void *h = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;
    p_malloc = (void *(*)(size_t))dlsym(h, "mi_malloc");
    if (!p_malloc)
        return;
    leak_in_ctor();
    ctor_ok = keep[0] != NULL;
}

int lib_ctor_ok(void)
{
    return ctor_ok;
}

NOINLINE void leak_in_call(void)
{
    keep[1] = p_malloc(1300);
}

int lib_work(void)
{
    leak_in_call();
    return keep[1] != NULL;
}
