/* alloc_mi_late.c -- loads libmimalloc with dlopen after start, leaks
 * 1000 bytes from its mi_malloc (a pointer from dlsym), waits 300 ms
 * (several polls of memtop's publisher) and prints "loaded"; exits 0
 * (tests/alloc: memtop must not patch a library a thread may already be
 * running, and must say so). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static void *volatile sink;

int main(void)
{
    void *h = dlopen("libmimalloc.so.2", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void *(*mi_malloc)(size_t) = (void *(*)(size_t))dlsym(h, "mi_malloc");
    if (!mi_malloc)
        return 1;
    sink = mi_malloc(1000);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    printf("loaded\n");
    return 0;
}
