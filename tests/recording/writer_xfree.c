/* writer_xfree.c -- target of test_writer_xfree.py: blocks freed by
 * another thread than the one that allocated them, their addresses reused
 * at once by yet another thread.
 *
 * Four threads share a mailbox of slots.  A step takes the block in a
 * random slot (put there by any thread) and frees it, or reallocates it;
 * then allocates a block and puts it in a random slot (freeing the one it
 * displaces).  Run with glibc's tcache off and one arena (the test sets
 * GLIBC_TUNABLES and MALLOC_ARENA_MAX): a freed chunk goes to the shared
 * fastbins and the next allocation of its size, on any thread, gets it
 * back, so a free on one thread and the reuse of its address on another
 * are microseconds apart, in different rings of the recorder.  Sizes: a
 * shared set at one call site (so the old and the new block at an address
 * often have the same trace, size and birth millisecond), a per-thread
 * size at another.  Steps come in bursts with short pauses, so that the
 * recorder keeps up without dropping events (100 steps per 2 ms).
 *
 * Usage: writer_xfree STEPS [GOFILE]: STEPS per thread; with GOFILE, half
 * the steps, then "ready" on stdout, then waits until GOFILE exists, then
 * the other half.  The blocks left in the mailbox stay live at exit. */
#define _GNU_SOURCE
#include "test_xorshift.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define SLOTS 64
#define BURST 100

static _Atomic(void *) g_box[SLOTS];
static long g_steps;
static pthread_barrier_t g_half;

typedef struct worker {
    int id;
    uint64_t rng;
} worker;

static uint64_t rnd(worker *w)
{
    return test_xorshift(&w->rng);
}

static __attribute__((noinline)) void *shared_site(worker *w)
{
    return malloc(24 + 16 * (rnd(w) % 4));
}

static __attribute__((noinline)) void *own_site(worker *w)
{
    return malloc(32 + 8 * (size_t)w->id);
}

static __attribute__((noinline)) void *grow(worker *w, void *p)
{
    return realloc(p, 40 + 16 * (rnd(w) % 3));
}

static void put(worker *w, void *p)
{
    if (!p)
        return;
    memset(p, w->id, 8);
    free(atomic_exchange(&g_box[rnd(w) % SLOTS], p));
}

static void step(worker *w)
{
    void *p = atomic_exchange(&g_box[rnd(w) % SLOTS], NULL);
    if (p && rnd(w) % 8 == 0) {
        put(w, grow(w, p)); /* the free half on this thread, of another's block */
        return;
    }
    free(p);
    put(w, rnd(w) % 2 ? shared_site(w) : own_site(w));
}

static void run(worker *w, long steps)
{
    for (long i = 0; i < steps; i++) {
        step(w);
        if (i % BURST == BURST - 1)
            usleep(2000);
    }
}

static void *thread_main(void *arg)
{
    worker w = {(int)(intptr_t)arg, 0x9e3779b97f4a7c15ull * (uint64_t)((intptr_t)arg + 1)};
    run(&w, g_steps / 2);
    pthread_barrier_wait(&g_half);
    pthread_barrier_wait(&g_half);
    run(&w, g_steps - g_steps / 2);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: writer_xfree STEPS [GOFILE]\n"), 2;
    g_steps = atol(argv[1]);
    pthread_barrier_init(&g_half, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i) != 0)
            return 1;
    pthread_barrier_wait(&g_half);
    if (argc > 2) {
        printf("ready\n");
        fflush(stdout);
        while (access(argv[2], F_OK) != 0)
            usleep(10000);
    }
    pthread_barrier_wait(&g_half);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
