/* alloc_mi_copy.c -- a program on a mimalloc "linked into a library": a
 * copy of libmimalloc.so.2 whose name does not name mimalloc
 * (libcopyalloc.so2, made by mi_copy.py), for tests/alloc: memtop's scan
 * takes it as a linked-in mimalloc and must redirect its entry points.
 * Every call goes through a pointer from dlsym(handle, ...), which
 * bypasses the PLT as a static link does, including the copy's own
 * malloc, free and operator new (its override: aliases of mi_malloc,
 * mi_free, mi_new).  Leaks 3000 bytes from leak_ptr() (mi_malloc then
 * mi_realloc), 1000 from leak_calloc() (mi_calloc 10 x 100), 500 from
 * leak_malloc() (the copy's malloc), 700 from leak_heap()
 * (mi_heap_malloc on the default heap) and 400 from leak_new() (the
 * copy's operator new); frees everything main allocates.  argv[1]:
 * "start" (linked with the copy: loaded before main), "late PATH" (loads
 * PATH with dlopen after start, while another thread allocates), "fork"
 * (as start, then a fork child prints "child PID" and waits to be killed),
 * "second" (as start, then loads libmimalloc.so.2 RTLD_LOCAL with dlopen:
 * a second mimalloc, which memtop must report and leave alone).
 * Prints "ok"; exits 0. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink[5], *volatile churned;
static atomic_bool stop;
static void *(*p_malloc)(size_t), *(*p_calloc)(size_t, size_t), *(*p_realloc)(void *, size_t);
static void *(*p_malloc_aligned)(size_t, size_t), *(*p_libmalloc)(size_t), *(*p_new)(size_t);
static void (*p_free)(void *), (*p_free_size)(void *, size_t), (*p_libfree)(void *);
static void *(*p_heap_malloc)(void *, size_t), *(*p_heap_default)(void);

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
    sink[2] = p_libmalloc(500);
}

__attribute__((noinline)) static void leak_heap(void)
{
    sink[3] = p_heap_malloc(p_heap_default(), 700);
}

__attribute__((noinline)) static void leak_new(void)
{
    sink[4] = p_new(400);
}

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        free(churned = malloc(64));
    return NULL;
}

#define GET(var, name) *(void **)&var = dlsym(h, name)

static bool lookup(void *h)
{
    GET(p_malloc, "mi_malloc");
    GET(p_calloc, "mi_calloc");
    GET(p_realloc, "mi_realloc");
    GET(p_malloc_aligned, "mi_malloc_aligned");
    GET(p_free, "mi_free");
    GET(p_free_size, "mi_free_size");
    GET(p_libmalloc, "malloc");
    GET(p_libfree, "free");
    GET(p_new, "_Znwm");
    GET(p_heap_malloc, "mi_heap_malloc");
    GET(p_heap_default, "mi_heap_get_default");
    return p_malloc && p_calloc && p_realloc && p_malloc_aligned && p_free && p_free_size &&
           p_libmalloc && p_libfree && p_new && p_heap_malloc && p_heap_default;
}

static void work(void)
{
    void *heap = p_heap_default();
    for (int i = 0; i < 1000; i++) {
        p_free_size(p_malloc_aligned(200, 32), 200);
        p_free(p_malloc(64));
        p_libfree(p_malloc(32));
        p_free(p_libmalloc(48));
        p_libfree(p_heap_malloc(heap, 80));
        p_free(p_new(16));
    }
    leak_ptr();
    leak_calloc();
    leak_malloc();
    leak_heap();
    leak_new();
}

int main(int argc, char **argv)
{
    bool late = argc > 2 && strcmp(argv[1], "late") == 0;
    bool forks = argc > 1 && strcmp(argv[1], "fork") == 0;
    bool second = argc > 1 && strcmp(argv[1], "second") == 0;
    pthread_t th;
    if (late) {
        pthread_create(&th, NULL, churn, NULL);
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL); /* memtop has started, the thread runs */
    }
    void *h = late ? dlopen(argv[2], RTLD_NOW) : dlopen("libcopyalloc.so2", RTLD_NOW | RTLD_NOLOAD);
    if (!h || !lookup(h)) {
        fprintf(stderr, "alloc_mi_copy: %s\n", h ? "a function is missing" : dlerror());
        return 2;
    }
    work();
    if (late) {
        atomic_store_explicit(&stop, true, memory_order_release);
        pthread_join(th, NULL);
    }
    if (second) {
        void *h2 = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h2 || !dlsym(h2, "mi_version")) /* memtop's dlsym scans first */
            return 3;
    }
    if (forks) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            for (;;)
                pause();
        }
        return pid < 0;
    }
    printf("ok\n");
    return 0;
}
