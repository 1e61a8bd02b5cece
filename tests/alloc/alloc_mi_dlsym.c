/* alloc_mi_dlsym.c -- a program on a shared libmimalloc that calls it
 * through pointers from dlsym(handle, ...), which bypass the PLT, for
 * tests/alloc: memtop sees them only when it redirected libmimalloc's
 * entry points in memory (alloc_patch.c).  Leaks 3000 bytes from
 * leak_ptr() (mi_malloc then mi_realloc), 1000 from leak_calloc()
 * (mi_calloc 10 x 100) and 500 from leak_malloc() (malloc, which is
 * libmimalloc's mi_malloc: counted once); frees everything main
 * allocates.  Prints "ok"; exits 0. */
#include <dlfcn.h>
#include <mimalloc.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink[3];
static void *(*p_malloc)(size_t);
static void *(*p_calloc)(size_t, size_t);
static void *(*p_realloc)(void *, size_t);
static void *(*p_malloc_aligned)(size_t, size_t);
static void (*p_free)(void *);
static void (*p_free_size)(void *, size_t);

__attribute__((noinline)) static void leak_ptr(void)
{
    sink[0] = p_realloc(p_malloc(1000), 3000);
}

__attribute__((noinline)) static void leak_calloc(void)
{
    sink[1] = p_calloc(10, 100);
}

__attribute__((noinline)) static void leak_malloc(void)
{
    sink[2] = malloc(500);
}

int main(void)
{
    mi_version(); /* linked with -lmimalloc: loaded before main */
    void *h = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return 2;
    p_malloc = (void *(*)(size_t))dlsym(h, "mi_malloc");
    p_calloc = (void *(*)(size_t, size_t))dlsym(h, "mi_calloc");
    p_realloc = (void *(*)(void *, size_t))dlsym(h, "mi_realloc");
    p_malloc_aligned = (void *(*)(size_t, size_t))dlsym(h, "mi_malloc_aligned");
    p_free = (void (*)(void *))dlsym(h, "mi_free");
    p_free_size = (void (*)(void *, size_t))dlsym(h, "mi_free_size");
    if (!p_malloc || !p_calloc || !p_realloc || !p_malloc_aligned || !p_free || !p_free_size)
        return 3;
    for (int i = 0; i < 1000; i++) {
        p_free_size(p_malloc_aligned(200, 32), 200);
        p_free(p_malloc(64));
        free(p_malloc(32)); /* memtop's free, libmimalloc's free */
        p_free(malloc(48));
    }
    leak_ptr();
    leak_calloc();
    leak_malloc();
    printf("ok\n");
    return 0;
}
