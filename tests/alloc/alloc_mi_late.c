/* alloc_mi_late.c -- loads libmimalloc with dlopen after start while
 * other threads run (two allocate and free through malloc in a loop, one
 * sleeps in nanosleep), for tests/alloc: memtop must redirect the late
 * library's entry points with those threads stopped for a moment
 * (docs/allocators.md, "When"), before the program gets a pointer to them
 * with dlsym, and count its blocks exactly.  Leaks 1000 bytes from
 * leak_late() (mi_malloc, through a pointer from dlsym, which bypasses
 * the PLT); frees the 2000 blocks main allocates with mi_malloc and
 * mi_zalloc through mi_free.  Waits 300 ms (several polls of memtop's
 * publisher), stops the threads, prints "loaded"; exits 0.  With argv[1]
 * "renamed", one more sleeper names itself memtop-publish (memtop's own
 * threads are not stopped: by their thread ids, not their names), and
 * the program prints instead how many of each sleeper's naps the stop
 * interrupted: "eintr plain N renamed M". */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static void *volatile sink;
static atomic_bool stop;
static void *(*p_malloc)(size_t);
static void *(*p_zalloc)(size_t);
static void (*p_free)(void *);

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        free(sink = malloc(64));
    return NULL;
}

static atomic_int eintr[2]; /* naps interrupted: plain sleeper, renamed one */

static void *sleeper(void *arg)
{
    const char *name = arg;
    if (name)
        prctl(PR_SET_NAME, name);
    struct timespec ts = {0, 20000000};
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR) /* never restarted */
            atomic_fetch_add_explicit(&eintr[name != NULL], 1, memory_order_relaxed);
    return NULL;
}

__attribute__((noinline)) static void leak_late(void)
{
    sink = p_malloc(1000);
}

int main(int argc, char **argv)
{
    int renamed = argc > 1 && strcmp(argv[1], "renamed") == 0;
    pthread_t th[4];
    pthread_create(&th[0], NULL, churn, NULL);
    pthread_create(&th[1], NULL, churn, NULL);
    pthread_create(&th[2], NULL, sleeper, NULL);
    if (renamed)
        pthread_create(&th[3], NULL, sleeper, "memtop-publish");
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* memtop has started, the threads run */
    void *h = dlopen("libmimalloc.so.2", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    p_malloc = (void *(*)(size_t))dlsym(h, "mi_malloc");
    p_zalloc = (void *(*)(size_t))dlsym(h, "mi_zalloc");
    p_free = (void (*)(void *))dlsym(h, "mi_free");
    if (!p_malloc || !p_zalloc || !p_free)
        return 1;
    for (int i = 0; i < 1000; i++) {
        p_free(p_malloc(100));
        p_free(p_zalloc(300));
    }
    leak_late();
    ts.tv_nsec = 300000000;
    nanosleep(&ts, NULL);
    atomic_store_explicit(&stop, true, memory_order_release);
    for (int i = 0; i < 3 + renamed; i++)
        pthread_join(th[i], NULL);
    if (renamed)
        printf("eintr plain %d renamed %d\n", atomic_load(&eintr[0]), atomic_load(&eintr[1]));
    else
        printf("loaded\n");
    return 0;
}
