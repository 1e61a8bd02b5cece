/* alloc_mi_heap.c -- a program on a shared libmimalloc (-lmimalloc) that
 * allocates from first-class heaps (mi_heap_new, mi_heap_*), for
 * tests/alloc: memtop must count every block to the byte at the function
 * that asked for it, including blocks of a heap that mi_heap_destroy frees
 * all at once and blocks of a heap that mi_heap_delete hands to the
 * backing heap (still live).  Leaks, from:
 *   leak_heap_malloc  1000 (mi_heap_malloc)
 *   leak_heap_calloc   500 (mi_heap_calloc 10 x 50)
 *   leak_heap_realloc  700 (mi_heap_malloc 100, then mi_heap_realloc)
 *   leak_heap_strdup   100 (mi_heap_strdup of 99 characters)
 *   leak_heap_aligned  300 (mi_heap_malloc_aligned, 64)
 *   leak_heap_ptr     1234 (mi_heap_malloc through a pointer from dlsym,
 *                           which bypasses the PLT)
 *   leak_deleted       400 (mi_heap_malloc, then mi_heap_delete)
 *   leak_strdup         50 (mi_strdup of 49 characters)
 *   leak_reallocarray  600 (mi_malloc 100, then mi_reallocarray 6 x 100,
 *                           whose first instruction, a call to mi_reallocn,
 *                           runs in its trampoline: mimalloc's own call)
 * and nothing from main (mi_heap_malloc / mi_heap_zalloc_aligned freed by
 * mi_free, 200 blocks of a heap given to mi_heap_destroy) nor from
 * mimalloc itself (each heap's own record, which mi_heap_new allocates,
 * is freed by mi_heap_delete or mi_heap_destroy).  Prints "ok";
 * exits 0. */
#include <dlfcn.h>
#include <mimalloc.h>
#include <stdio.h>
#include <string.h>

static void *volatile sink[9];
static void *volatile gone;
static void *(*p_heap_malloc)(mi_heap_t *, size_t);

__attribute__((noinline)) static void leak_heap_malloc(mi_heap_t *h)
{
    sink[0] = mi_heap_malloc(h, 1000);
}

__attribute__((noinline)) static void leak_heap_calloc(mi_heap_t *h)
{
    sink[1] = mi_heap_calloc(h, 10, 50);
}

__attribute__((noinline)) static void leak_heap_realloc(mi_heap_t *h)
{
    sink[2] = mi_heap_realloc(h, mi_heap_malloc(h, 100), 700);
}

__attribute__((noinline)) static void leak_heap_strdup(mi_heap_t *h)
{
    char s[100];
    memset(s, 'x', 99);
    s[99] = '\0';
    sink[3] = mi_heap_strdup(h, s);
}

__attribute__((noinline)) static void leak_heap_aligned(mi_heap_t *h)
{
    sink[4] = mi_heap_malloc_aligned(h, 300, 64);
}

__attribute__((noinline)) static void leak_heap_ptr(mi_heap_t *h)
{
    sink[5] = p_heap_malloc(h, 1234);
}

__attribute__((noinline)) static void leak_deleted(void)
{
    mi_heap_t *h = mi_heap_new();
    sink[6] = mi_heap_malloc(h, 400);
    mi_heap_delete(h); /* its blocks move to the backing heap: still live */
}

__attribute__((noinline)) static void leak_strdup(void)
{
    char s[50];
    memset(s, 'y', 49);
    s[49] = '\0';
    sink[7] = mi_strdup(s);
}

__attribute__((noinline)) static void leak_reallocarray(void)
{
    sink[8] = mi_reallocarray(mi_malloc(100), 6, 100);
}

__attribute__((noinline)) static void destroyed(void)
{
    mi_heap_t *h = mi_heap_new();
    for (int i = 0; i < 200; i++)
        gone = mi_heap_malloc(h, 64 + (size_t)i);
    mi_heap_destroy(h); /* frees all 200 blocks */
}

int main(void)
{
    void *lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
    p_heap_malloc = lib ? (void *(*)(mi_heap_t *, size_t))dlsym(lib, "mi_heap_malloc") : NULL;
    if (!p_heap_malloc)
        return 2;
    mi_heap_t *h = mi_heap_new();
    for (int i = 0; i < 1000; i++) {
        mi_free(mi_heap_malloc(h, 200));
        mi_free(mi_heap_zalloc_aligned(h, 100, 32));
    }
    leak_heap_malloc(h);
    leak_heap_calloc(h);
    leak_heap_realloc(h);
    leak_heap_strdup(h);
    leak_heap_aligned(h);
    leak_heap_ptr(h);
    leak_deleted();
    leak_strdup();
    leak_reallocarray();
    destroyed();
    mi_heap_delete(h); /* its blocks stay live, in the backing heap */
    printf("ok\n");
    return 0;
}
