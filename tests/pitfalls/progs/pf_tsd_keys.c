/* pf_tsd_keys.c -- 40 pthread keys created before the first allocation,
 * then N threads that each set key 39 (>= 32: glibc allocates a second-level
 * block for it inside pthread_setspecific) before their first malloc.  That
 * calloc is the thread's first tracked allocation; if memtop or libunwind
 * set a key >= 32 of their own from inside it, glibc would lose their value
 * and their per-thread state would leak with every thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_key_t keys[40];

static void *worker(void *arg)
{
    (void)arg;
    pthread_setspecific(keys[39], (void *)1);
    void *volatile p = malloc(4057); /* marker size */
    free(p);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 400;
    for (int i = 0; i < 40; i++)
        pthread_key_create(&keys[i], NULL);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    printf("%d threads\n", n);
    return 0;
}
