/* alloc_mimalloc.c -- a program linked with -lmimalloc (Debian ships only
 * libmimalloc.so) calling mi_malloc_aligned, mi_realloc and mi_free_size
 * through the PLT, for tests/alloc: memtop hooks those and says exact.
 * Leaks 3000 bytes
 * from leak_mi(); prints "ok"; exits 0. */
#include <mimalloc.h>
#include <stdio.h>

static void *volatile sink;

__attribute__((noinline)) static void leak_mi(void)
{
    void *p = mi_malloc_aligned(1000, 64);
    sink = mi_realloc(p, 3000);
}

int main(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = mi_malloc_aligned(200, 32);
        mi_free_size(p, 200);
    }
    leak_mi();
    printf("ok\n");
    return 0;
}
