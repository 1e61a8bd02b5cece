/* sample_cases.c -- cases of sampled tracking with known answers.
 *
 * Usage: sample_cases realloc | fork | forksmall | counts | grow
 *
 * Run with MEMTOP_SAMPLE=1M.  A block of 256 MiB is then sampled with
 * probability 1 - exp(-256) (always), and one of 16 bytes with probability
 * about 1.5e-5 (never, in practice: the test accepts that risk, a few in a
 * hundred thousand runs).  The big blocks are never written to (mmap'd by
 * the allocator, no memory is used).
 *
 * realloc: the four combinations of a sampled or unsampled old block and
 * new block, each at its own call sites; prints "ready" and waits for its
 * stdin to close, so that the test reads the segment of a live process.
 *
 * fork: forks; parent and child then run the same allocations (equal
 * sizes, 4000 blocks of 16 B .. 64 KiB and two of 256 MiB at the site
 * after_fork) and each prints "pid N ready"; both wait for stdin to close.
 * With per-process random distances their estimates differ; a child that
 * drew the parent's distances would show exactly the parent's figures.
 *
 * forksmall: the same, but after the fork each makes only 10 blocks of
 * 16 bytes (never sampled in practice): a child whose every call takes
 * the fast path must still restart tracking (its own segment).
 *
 * counts: prints "ready", waits for a line on stdin, then makes a burst of
 * small mallocs, callocs, reallocs (from NULL, moving, to size 0) and
 * frees, then the same in a thread that exits, prints "done ALLOCS BYTES
 * FREES" (what the process totals must have grown by, exactly), and
 * waits for stdin to close.
 *
 * grow (run with MEMTOP_SAMPLE=16: every block of GROW_SIZE bytes is
 * sampled, weight 1): GROW_THREADS threads each allocate GROW_N blocks at
 * the site grow_alloc while freeing every other one they made, so that the
 * live sampled blocks climb through every filter generation
 * (core_sample.c) while the other threads allocate and free; then each
 * frees all but GROW_KEEP of what is left.  Prints "ready" and waits for
 * stdin to close: the site must show GROW_THREADS * GROW_KEEP blocks live
 * (a sampled free the filter let pass would leave its block live).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG ((size_t)256 << 20)

#define SITE(name, call)                                                                           \
    __attribute__((noinline)) static void *name(void *p, size_t n)                                 \
    {                                                                                              \
        (void)p;                                                                                   \
        void *r = call;                                                                            \
        __asm__ volatile("" ::: "memory"); /* not a tail call: keep this frame */                  \
        return r;                                                                                  \
    }

SITE(uu_alloc, malloc(n))
SITE(uu_realloc, realloc(p, n))
SITE(us_alloc, malloc(n))
SITE(us_realloc, realloc(p, n))
SITE(su_alloc, malloc(n))
SITE(su_realloc, realloc(p, n))
SITE(ss_alloc, malloc(n))
SITE(ss_realloc, realloc(p, n))
SITE(after_fork, malloc(n))
SITE(grow_alloc, malloc(n))

static void wait_stdin(void)
{
    char buf[64];
    while (read(0, buf, sizeof buf) > 0)
        ;
}

static void *keep[4100];

static int cases_realloc(void)
{
    keep[0] = uu_realloc(uu_alloc(NULL, 16), 32);       /* unsampled -> unsampled */
    keep[1] = us_realloc(us_alloc(NULL, 16), BIG);      /* unsampled -> sampled */
    keep[2] = su_realloc(su_alloc(NULL, BIG), 16);      /* sampled -> unsampled */
    keep[3] = ss_realloc(ss_alloc(NULL, BIG), 2 * BIG); /* sampled -> sampled */
    for (int i = 0; i < 4; i++)
        if (!keep[i])
            return 1;
    printf("ready\n");
    fflush(stdout);
    wait_stdin();
    return 0;
}

/* A thread that makes a burst of calls (counted in its TLS block, read
 * through its record) and then stays, blocked, across the fork: the child
 * does not have it, and must fold its counts in (core_thread_state.c
 * mt_threads_fork_child), so that the totals of parent and child agree. */
static int g_stay[2];
static pthread_barrier_t g_burst_done;
static int burst(void **b, unsigned long long *c);

static void *burst_then_stay(void *arg)
{
    static void *b[2000];
    unsigned long long c[3] = {0, 0, 0};
    *(int *)arg = burst(b, c);
    for (int i = 0; i < 10; i++) /* then fast paths only, the last calls before the fork */
        keep[4090 + i] = malloc(16 + (size_t)i);
    pthread_barrier_wait(&g_burst_done);
    char ch;
    while (read(g_stay[0], &ch, 1) > 0) /* until the process ends */
        ;
    return NULL;
}

static int cases_fork(int small)
{
    static int burst_failed;
    pthread_t th;
    if (pipe(g_stay) || pthread_barrier_init(&g_burst_done, NULL, 2) ||
        pthread_create(&th, NULL, burst_then_stay, &burst_failed))
        return 1;
    pthread_barrier_wait(&g_burst_done);
    if (burst_failed)
        return 1;
    /* the thread has its sampling state before the fork (the child inherits it) */
    for (int i = 0; i < 100; i++)
        keep[i] = after_fork(NULL, 16);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    uint64_t r = 88172645463325252ull;
    for (int i = 0; i < (small ? 10 : 4000); i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        keep[i] = after_fork(NULL, small ? 16 : 16 + r % 65521);
    }
    if (!small) {
        keep[4000] = after_fork(NULL, BIG);
        keep[4001] = after_fork(NULL, BIG);
    }
    printf("pid %d ready\n", (int)getpid());
    fflush(stdout);
    wait_stdin();
    if (child > 0) {
        int st;
        waitpid(child, &st, 0);
    }
    return 0;
}

/* The burst of `counts`: only calls of the fast paths' sizes (realloc,
 * calloc and free too), counted here as memtop's totals count them:
 * realloc(NULL, n) allocates, realloc(p, n) frees p and allocates,
 * realloc(p, 0) frees p (glibc returns NULL; another allocator may
 * return a new block of 0 bytes).  Adds what it made to c[0..2] (allocs,
 * bytes, frees); non-zero if an allocation failed. */
enum { BURST_N = 2000 };
static int burst(void **b, unsigned long long *c)
{
    unsigned long long allocs = 0, bytes = 0, frees = 0;
    for (int i = 0; i < BURST_N; i++) {
        size_t n = 8 + (size_t)i % 57;
        if (!(b[i] = realloc(NULL, n)))
            return 1;
        allocs++, bytes += n;
        if (!(b[i] = realloc(b[i], 2 * n)))
            return 1;
        allocs++, bytes += 2 * n, frees++;
        free(b[i]);
        frees++;
        if (!(b[i] = calloc(3, n)))
            return 1;
        allocs++, bytes += 3 * n;
        void *z = realloc(b[i], 0); /* freed; glibc returns NULL */
        frees++;
        if (z) { /* another allocator may return a block of 0 bytes */
            allocs++;
            free(z);
            frees++;
        }
        if (!(b[i] = malloc(n)))
            return 1;
        allocs++, bytes += n;
    }
    for (int i = 0; i < BURST_N; i += 2) {
        free(b[i]);
        frees++;
    }
    /* Calls that count nothing, on the fast paths too: free(NULL), and
     * allocations that fail (a size of 2^63 or more passes the countdown's
     * signed test: the fast path counts it before the call and must take
     * it back). */
    static volatile size_t huge = (size_t)-1;
    static void *volatile null; /* volatile: GCC drops a literal free(NULL) */
    for (int i = 0; i < 100; i++) {
        free(null);
        if (malloc(huge) || calloc(1, huge))
            return 1;
    }
    c[0] += allocs, c[1] += bytes, c[2] += frees;
    return 0;
}

/* The same burst in a thread that then exits: the fast paths count into
 * the thread's TLS block, which must reach the totals before it goes. */
static pthread_barrier_t g_go;
static unsigned long long g_thread_counts[3];
static int g_thread_failed;

static void *burst_thread(void *arg)
{
    (void)arg;
    static void *b[BURST_N];
    pthread_barrier_wait(&g_go);
    g_thread_failed = burst(b, g_thread_counts);
    return NULL;
}

static int cases_counts(void)
{
    static void *b[BURST_N];
    unsigned long long c[3] = {0, 0, 0};
    char ch;
    pthread_t th; /* created before "ready": its own allocations are not the burst's */
    if (pthread_barrier_init(&g_go, NULL, 2) || pthread_create(&th, NULL, burst_thread, NULL))
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (read(0, &ch, 1) != 1) /* read(2): stdio's buffer would count */
        return 1;
    int failed = burst(b, c);
    pthread_barrier_wait(&g_go);
    if (pthread_join(th, NULL) || failed || g_thread_failed)
        return 1;
    printf("done %llu %llu %llu\n", c[0] + g_thread_counts[0], c[1] + g_thread_counts[1],
           c[2] + g_thread_counts[2]);
    fflush(stdout);
    wait_stdin();
    return 0;
}

#define GROW_THREADS 4
#define GROW_N 12000
#define GROW_KEEP 100
#define GROW_SIZE 1024

static void *grow_thread(void *arg)
{
    void **b = arg;
    for (int i = 0; i < GROW_N; i++) {
        b[i] = grow_alloc(NULL, GROW_SIZE);
        if (i % 2 && i > 64) /* half of them, a while after */
            free(b[i - 63]), b[i - 63] = NULL;
    }
    int kept = 0;
    for (int i = 0; i < GROW_N; i++)
        if (b[i] && kept++ >= GROW_KEEP)
            free(b[i]), b[i] = NULL;
    return NULL;
}

static int cases_grow(void)
{
    static void *b[GROW_THREADS][GROW_N];
    pthread_t th[GROW_THREADS];
    for (int i = 0; i < GROW_THREADS; i++)
        if (pthread_create(&th[i], NULL, grow_thread, b[i]))
            return 1;
    for (int i = 0; i < GROW_THREADS; i++)
        if (pthread_join(th[i], NULL))
            return 1;
    printf("ready\n");
    fflush(stdout);
    wait_stdin();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "grow") == 0)
        return cases_grow();
    if (argc == 2 && strcmp(argv[1], "counts") == 0)
        return cases_counts();
    if (argc == 2 && strcmp(argv[1], "realloc") == 0)
        return cases_realloc();
    if (argc == 2 && strcmp(argv[1], "fork") == 0)
        return cases_fork(0);
    if (argc == 2 && strcmp(argv[1], "forksmall") == 0)
        return cases_fork(1);
    return 2;
}
