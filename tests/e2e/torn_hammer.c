/* torn_hammer.c -- target of check_torn.py: THREADS threads allocate and
 * free blocks of exactly HAMMER_SIZE bytes from one call site
 * (hammer_site), without pause, until killed: half of them freed at once
 * (temporary), the others after a few more.  Every trace of hammer_site
 * then holds whole blocks only: any snapshot must show bytes = count *
 * HAMMER_SIZE for each of its counters.
 * Usage: torn_hammer THREADS */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#define HAMMER_SIZE 48
#define KEEP 8

static __attribute__((noinline)) void *hammer_site(void)
{
    void *p = malloc(HAMMER_SIZE);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

static void *worker(void *arg)
{
    (void)arg;
    void *keep[KEEP] = {0};
    for (unsigned long i = 0;; i++) {
        void *p = hammer_site();
        if (i & 1) {
            free(p);
            continue;
        }
        unsigned k = (unsigned)(i / 2) % KEEP;
        free(keep[k]);
        keep[k] = p;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (n < 1 || n > 64)
        n = 4;
    pthread_t th[64];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    pthread_join(th[0], NULL); /* never: killed by the test */
    return 0;
}
