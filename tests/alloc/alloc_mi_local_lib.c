/* alloc_mi_local_lib.c -- a library linked with libmimalloc that calls
 * mi_malloc and mi_free in its constructor and in a function, for
 * tests/alloc (check_mi_local.py).  alloc_mi_local loads it with dlopen
 * RTLD_LOCAL, so libmimalloc is not in the global scope while this
 * library's mi_* references bind to libmemtop.so's definitions: memtop
 * must still reach libmimalloc's (the constructor runs inside dlopen,
 * before memtop redirects anything).  Leaks 700 bytes from leak_in_ctor
 * and 1300 from leak_in_call; frees the other two blocks with mi_free. */
#include <mimalloc.h>

#define NOINLINE __attribute__((noinline))

static void *volatile keep[2];
static int ctor_ok;

NOINLINE void leak_in_ctor(void)
{
    keep[0] = mi_malloc(700);
}

__attribute__((constructor)) static void lib_init(void)
{
    void *p = mi_malloc(100);
    mi_free(p);
    leak_in_ctor();
    ctor_ok = p && keep[0];
}

int lib_ctor_ok(void)
{
    return ctor_ok;
}

NOINLINE void leak_in_call(void)
{
    keep[1] = mi_malloc(1300);
}

int lib_work(void)
{
    void *p = mi_malloc(200);
    int ok = p != NULL;
    mi_free(p);
    leak_in_call();
    return ok && keep[1];
}
