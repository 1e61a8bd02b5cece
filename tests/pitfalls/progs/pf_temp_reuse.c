/* pf_temp_reuse.c -- "temporary" must not be fooled by a reused address.
 * Thread A allocates p (A's newest block) and hands it to B, which frees it,
 * allocates q of the same size (glibc's thread cache gives back p's address)
 * and then r, and hands q to A.  A frees q with no allocation in between:
 * q has p's address, but it is B's block, not A's newest, so with
 * MEMTOP_TEMP_MS=0 it is not temporary.  Only r is (B frees it right after
 * its own last allocation).  Markers: p and q 72 B, r 88 B (small enough for
 * glibc's thread cache, which is what hands p's address back as q). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile slot;
static pthread_barrier_t bar;

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&bar); /* 1: p is in slot */
    free(slot);
    void *q = malloc(72);
    void *volatile r = malloc(88); /* volatile: else gcc drops the pair */
    slot = q;
    pthread_barrier_wait(&bar); /* 2: q handed to A */
    pthread_barrier_wait(&bar); /* 3: A freed q */
    free(r);
    return NULL;
}

int main(void)
{
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t b;
    pthread_create(&b, NULL, thread_b, NULL);
    slot = malloc(72);
    pthread_barrier_wait(&bar); /* 1 */
    pthread_barrier_wait(&bar); /* 2 */
    free(slot);
    pthread_barrier_wait(&bar); /* 3 */
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}
