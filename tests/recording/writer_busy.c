/* writer_busy.c -- target of test_writer_stop.py: THREADS threads
 * allocate and free without pause (a few blocks kept live per thread)
 * for SECONDS, so that a recording is stopped while threads are inside
 * allocation calls.  Prints its pid first.
 * Usage: writer_busy THREADS SECONDS */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_bool g_stop;

static void *worker(void *arg)
{
    size_t seed = (size_t)arg;
    void *keep[64] = {0};
    for (unsigned long i = 0; !atomic_load_explicit(&g_stop, memory_order_relaxed); i++) {
        size_t k = (i * 7 + seed) & 63;
        free(keep[k]);
        keep[k] = malloc(16 + (i + seed) % 512);
        void *volatile t = malloc(32);
        free(t);
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    int seconds = argc > 2 ? atoi(argv[2]) : 5;
    pthread_t th[64];
    if (n > 64)
        n = 64;
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, worker, (void *)(size_t)(i * 1000));
    sleep((unsigned)seconds);
    atomic_store(&g_stop, true);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return 0;
}
