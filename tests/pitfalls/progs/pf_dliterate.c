/* pf_dliterate.c -- allocations inside dl_iterate_phdr callbacks while
 * other threads unwind cold stacks.
 *
 * A dl_iterate_phdr callback runs with the loader's lock held; libunwind,
 * on a cache miss, calls dl_iterate_phdr while it holds its own lock.  A
 * hook that unwinds inside a callback takes the two locks in the opposite
 * order.  Each round starts fresh threads (cold per-thread unwind caches):
 * DL_THREADS iterate and allocate in every callback, ALLOC_THREADS allocate
 * at every level of a deep chain through NCHAIN distinct functions (more
 * call sites than libunwind's register-state cache holds, so its slow path
 * keeps calling dl_iterate_phdr).  A watchdog ends a stuck run with status
 * 98 and a "DEADLOCK" line, through the raw exit_group system call (exit
 * and _exit would wait for the stuck locks too).
 *
 * Callback blocks use marker sizes: malloc(CB_A), realloc to CB_B (both
 * inside the callback), calloc(1, CB_C) freed inside it; the CB_B block is
 * freed after dl_iterate_phdr returns.  Prints "callbacks N": N callbacks
 * made 3N allocations of N*(CB_A+CB_B+CB_C) bytes and 3N frees.
 * Usage: pf_dliterate [rounds]
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#define DL_THREADS 2
#define ALLOC_THREADS 2
#define CHAIN_DEPTH 48
#define CB_A 1531
#define CB_B 2557
#define CB_C 3067
#define KEEP_MAX 256
#define ITER_MAX 40 /* per iterator and round */

static atomic_ulong g_callbacks;
static atomic_uint g_round;
static atomic_bool g_stop;

/* ---- the deep, wide allocator stacks ------------------------------------ */

#define NCHAIN 256u
typedef void (*chain_fn)(unsigned idx, unsigned left);
static chain_fn g_chain[NCHAIN];

/* Each function allocates, calls the next one from its own call site and
 * frees after the call (so it is not a tail call: its frame stays). */
#define DEF(x)                                                                                     \
    static void __attribute__((noinline)) f_##x(unsigned idx, unsigned left)                       \
    {                                                                                              \
        void *p = pf_escape(malloc(16 + (idx % 7) * 8));                                           \
        if (left)                                                                                  \
            g_chain[(idx + 1) % NCHAIN](idx + 1, left - 1);                                        \
        free(p);                                                                                   \
    }
#define NAME(x) f_##x,
/* 256 names from hex digit pairs (clang-format never settles on a layout for these). */
/* clang-format off */
#define R16(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7) \
                  M(p##8) M(p##9) M(p##a) M(p##b) M(p##c) M(p##d) M(p##e) M(p##f)
#define R256(M) R16(M, 0) R16(M, 1) R16(M, 2) R16(M, 3) R16(M, 4) R16(M, 5) R16(M, 6) R16(M, 7) \
                R16(M, 8) R16(M, 9) R16(M, a) R16(M, b) R16(M, c) R16(M, d) R16(M, e) R16(M, f)
/* clang-format on */

R256(DEF)
static chain_fn g_chain[NCHAIN] = {R256(NAME)};

static void *allocator(void *arg)
{
    unsigned start = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < NCHAIN; i += CHAIN_DEPTH)
        g_chain[(start + i) % NCHAIN]((start + i) % NCHAIN, CHAIN_DEPTH);
    return NULL;
}

/* ---- allocations inside dl_iterate_phdr --------------------------------- */

struct iter_ctx {
    void *keep[KEEP_MAX];
    unsigned n;
    unsigned long callbacks;
};

static int callback(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    struct iter_ctx *c = arg;
    char *p = malloc(CB_A);
    PF_CHECK(p != NULL, "malloc in a callback");
    memset(p, 1, CB_A);
    char *q = realloc(p, CB_B);
    PF_CHECK(q != NULL, "realloc in a callback");
    void *z = pf_escape(calloc(1, CB_C));
    PF_CHECK(z != NULL, "calloc in a callback");
    free(z);
    if (c->n < KEEP_MAX)
        c->keep[c->n++] = q;
    else
        free(q);
    c->callbacks++;
    return 0;
}

static void *iterator(void *arg)
{
    (void)arg;
    struct iter_ctx c = {.n = 0, .callbacks = 0};
    unsigned iters = 0;
    do {
        c.n = 0;
        dl_iterate_phdr(callback, &c);
        for (unsigned i = 0; i < c.n; i++)
            free(c.keep[i]); /* outside the callback */
    } while (!atomic_load(&g_stop) && ++iters < ITER_MAX);
    atomic_fetch_add(&g_callbacks, c.callbacks);
    return NULL;
}

/* ---- watchdog: no allocation, no libc exit path ------------------------- */

static void *watchdog(void *arg)
{
    (void)arg;
    unsigned last = atomic_load(&g_round);
    int still = 0;
    for (;;) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        unsigned r = atomic_load(&g_round);
        still = r == last ? still + 1 : 0;
        last = r;
        if (still == 50) { /* 5 s without a round: rounds take milliseconds */
            char msg[96];
            int n = snprintf(msg, sizeof msg, "DEADLOCK: round %u stuck for 5 s\n", r);
            if (write(2, msg, (size_t)n) < 0)
                n = 0;
            syscall(SYS_exit_group, 98);
        }
    }
    return NULL;
}

static void one_round(unsigned round)
{
    pthread_t dl[DL_THREADS], al[ALLOC_THREADS];
    atomic_store(&g_stop, false);
    for (int i = 0; i < DL_THREADS; i++)
        PF_CHECK(pthread_create(&dl[i], NULL, iterator, NULL) == 0, "pthread_create");
    for (int i = 0; i < ALLOC_THREADS; i++) {
        uintptr_t start = (round * 37u + (unsigned)i * 101u) % NCHAIN;
        PF_CHECK(pthread_create(&al[i], NULL, allocator, (void *)start) == 0, "pthread_create");
    }
    for (int i = 0; i < ALLOC_THREADS; i++)
        pthread_join(al[i], NULL);
    atomic_store(&g_stop, true);
    for (int i = 0; i < DL_THREADS; i++)
        pthread_join(dl[i], NULL);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 150;
    pthread_t wd;
    PF_CHECK(pthread_create(&wd, NULL, watchdog, NULL) == 0, "pthread_create");
    for (unsigned r = 0; r < rounds; r++) {
        one_round(r);
        atomic_fetch_add(&g_round, 1);
    }
    unsigned long n = atomic_load(&g_callbacks);
    PF_CHECK(n >= rounds, "%lu callbacks in %u rounds", n, rounds);
    printf("callbacks %lu\n", n);
    return 0;
}
