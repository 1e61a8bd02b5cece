/* writer_causes.c -- a target that makes a recording drop events for a
 * given cause, for test_writer_causes.py (dat_format.h MT_DAT_LOST_*):
 *
 *   dliter N   inside a dl_iterate_phdr callback (the loader's lock held:
 *              the hooks may not wait there), N allocations then their N
 *              frees; run with a writer that sleeps between passes
 *              (MEMTOP_TEST_WRITER_STALL_MS), the thread's buffer reaches
 *              its bound and the rest is dropped: "hook could not wait".
 *              Nothing is allocated outside the callback meanwhile.
 *   nobuf N    a thread's first allocations while its buffer's memory
 *              cannot be had (RLIMIT_AS just above what the process maps,
 *              malloc's heap grown beforehand, one arena): N allocations
 *              and their N frees, every one dropped for "no buffer
 *              memory"; the limit is lifted again right after.
 *   live N S   N live blocks, then two threads that allocate and free for
 *              S seconds (a `memtop --record` started meanwhile captures
 *              the live blocks in a pause long enough for calls to stop
 *              waiting at the gate: "initial-state capture").
 *   park       one thread allocates 777777 bytes (test_writer_causes.py
 *              holds it in a debugger between the accounting of that
 *              allocation and its event: a thread preempted there) while
 *              main waits to be killed; a recording stopped then counts
 *              the allocation in its final state but has no event for
 *              it: "missed at the end".
 *
 * Prints "ready PID" when set (live, park), "callback done" (dliter) and
 * "done" at the end. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void **g_blocks;
static long g_n;

static int in_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size;
    int *once = data;
    if ((*once)++)
        return 1;
    for (long i = 0; i < g_n; i++)
        g_blocks[i] = malloc(32 + (size_t)(i & 31));
    for (long i = 0; i < g_n; i++)
        free(g_blocks[i]);
    return 1;
}

static int dliter(void)
{
    g_blocks = calloc((size_t)g_n, sizeof *g_blocks);
    printf("start\n");
    fflush(stdout);
    int once = 0;
    dl_iterate_phdr(in_callback, &once);
    printf("callback done\n"); /* stdout's buffer exists: nothing allocated */
    fflush(stdout);
    sleep(3); /* the writer's next passes drain the buffer: the exit waits for nothing */
    printf("done\n");
    return 0;
}

/* VmSize of this process in bytes, read without stdio (no allocation). */
static long vm_size(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strstr(buf, "VmSize:");
    return p ? strtol(p + 7, NULL, 10) * 1024 : -1;
}

/* Until this process's segment exists (MEMTOP_SHM_DIR): the publisher's
 * start (its segment, a probe thread's stack mapped and unmapped) is
 * over, and its creation may stop the world for a moment, which waits for
 * a thread held by a debugger until it gives up. */
static void wait_segment(void)
{
    char seg[4096];
    snprintf(seg, sizeof seg, "%s/memtop-%d", getenv("MEMTOP_SHM_DIR"), (int)getpid());
    for (int i = 0; i < 1000 && access(seg, F_OK) != 0; i++)
        usleep(10000);
}

static pthread_barrier_t g_go, g_done;

static void *nobuf_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&g_go);
    for (long i = 0; i < g_n; i++)
        g_blocks[i] = malloc(24);
    for (long i = 0; i < g_n; i++)
        free(g_blocks[i]);
    pthread_barrier_wait(&g_done);
    return NULL;
}

static int nobuf(void)
{
    mallopt(M_ARENA_MAX, 1); /* the thread allocates from the main heap: no arena to map */
    g_blocks = calloc((size_t)g_n, sizeof *g_blocks);
    void *grow = malloc(100000); /* the heap's top has room for the thread's blocks */
    free(grow);
    pthread_barrier_init(&g_go, NULL, 2);
    pthread_barrier_init(&g_done, NULL, 2);
    pthread_t t;
    if (pthread_create(&t, NULL, nobuf_thread, NULL) != 0)
        return 1;
    printf("start\n");
    fflush(stdout);
    wait_segment();
    usleep(50000);
    struct rlimit old, low;
    getrlimit(RLIMIT_AS, &old);
    low = old;
    bool bites = false;
    for (int i = 0; i < 20 && !bites; i++) {           /* memtop's threads may unmap meanwhile */
        low.rlim_cur = (rlim_t)vm_size() + (64 << 10); /* a buffer's chunk (256 KiB) won't fit */
        if (setrlimit(RLIMIT_AS, &low) != 0)
            return 1;
        void *p = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        bites = p == MAP_FAILED;
        if (!bites) {
            munmap(p, 256 << 10);
            usleep(10000);
        }
    }
    if (!bites)
        return fprintf(stderr, "writer_causes: RLIMIT_AS leaves room for a chunk\n"), 1;
    pthread_barrier_wait(&g_go);
    pthread_barrier_wait(&g_done);
    setrlimit(RLIMIT_AS, &old);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}

static volatile int g_stop;

static void *churn(void *arg)
{
    (void)arg;
    void *keep[64] = {0};
    for (unsigned i = 0; !g_stop; i++) {
        free(keep[i & 63]);
        keep[i & 63] = malloc(16 + (i & 127));
    }
    for (unsigned i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

static int live(long secs)
{
    g_blocks = malloc((size_t)g_n * sizeof *g_blocks);
    for (long i = 0; i < g_n; i++)
        g_blocks[i] = malloc(16);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    sleep((unsigned)secs);
    g_stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}

static void *park_thread(void *arg)
{
    (void)arg;
    void *volatile p = malloc(777777); /* held here by the test's debugger */
    free(p);
    return NULL;
}

static int park(void)
{
    wait_segment();
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, park_thread, NULL);
    for (;;) /* killed by the test (a debugger's stops may cut a sleep short) */
        sleep(600);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: writer_causes dliter N | nobuf N | live N S | park\n"), 2;
    g_n = argc > 2 ? atol(argv[2]) : 0;
    if (!strcmp(argv[1], "dliter"))
        return dliter();
    if (!strcmp(argv[1], "nobuf"))
        return nobuf();
    if (!strcmp(argv[1], "live"))
        return live(argc > 3 ? atol(argv[3]) : 5);
    if (!strcmp(argv[1], "park"))
        return park();
    return 2;
}
