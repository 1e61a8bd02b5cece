/* pf_sigstorm.c -- a SIGUSR1 storm whose handler allocates, against the
 * publisher's progress (pf_sigstorm.py).
 *
 * Child processes send SIGUSR1 to this one in a tight loop; the handler
 * mallocs and frees a marker block (1031 bytes) and counts its runs.  Every
 * handler run is a libunwind walk (the own walker leaves signal frames to
 * it), which takes the loader's lock for each frame.  The main thread and
 * `threads` idle threads receive the signals; the main thread, between
 * handler runs, looks at its own segment's publish count (pf_segpeek.c)
 * and remembers the longest time it did not move (and, if asked, forks
 * a child that exits at once every 100 ms).  After the storm it
 * prints "stall MS", "handler N" and "ready PID", waits for a line on stdin
 * (the driver exports the live process meanwhile) and exits 0.  Without
 * the preload there is no segment: the stall is 0.
 * argv: storm seconds (default 6), idle threads (1), senders (2), forks (0).
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_segpeek.h"

#include <errno.h>
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

enum { STORM_SIZE = 1031, MAX_SENDERS = 8 };

static atomic_long g_runs;

static void on_usr1(int sig)
{
    (void)sig;
    char *p = malloc(STORM_SIZE);
    if (!p)
        _exit(98);
    p[0] = p[STORM_SIZE - 1] = 1;
    free(pf_escape(p));
    atomic_fetch_add_explicit(&g_runs, 1, memory_order_relaxed);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A sender: kill in a tight loop until it is killed or the target is gone.
 * No allocation. */
static void sender(pid_t target)
{
    while (kill(target, SIGUSR1) == 0)
        ;
    _exit(0);
}

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* A child that exits at once (argv[4] != 0): this thread runs memtop's
 * fork handlers while the storm goes on, and the kernel restarts the fork
 * at every pending signal.  A handler run between them was once counted
 * nowhere, the data still exact (docs/pitfalls.md, "Signal handlers that
 * allocate"); the publisher waits for the fork (its lock). */
static double g_fork_worst; /* the slowest fork_one, seconds */

static void fork_one(void)
{
    double t0 = now_s();
    pid_t c = fork();
    PF_CHECK(c >= 0, "fork");
    if (c == 0)
        _exit(0);
    int st;
    while (waitpid(c, &st, 0) != c)
        PF_CHECK(errno == EINTR, "waitpid");
    if (now_s() - t0 > g_fork_worst)
        g_fork_worst = now_s() - t0;
}

/* The longest time in seconds the segment's publish count stood still
 * during `secs` of storm (0 without a segment). */
static double watch(double secs, bool forks)
{
    double start = now_s(), end = start + secs, moved = start, worst = 0;
    uint64_t last = 0;
    double forked = start;
    for (double t = start; t < end; t = now_s()) {
        uint32_t flags;
        uint64_t n;
        if (pf_segment_state(getpid(), &flags, &n) == 0) {
            if (n != last) {
                last = n;
                moved = t;
            }
            if (t - moved > worst)
                worst = t - moved;
        } else {
            moved = t; /* no segment (yet): nothing to watch */
        }
        if (forks && t - forked >= 0.1) { /* the storm cuts the naps short */
            fork_one();
            forked = now_s();
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL); /* cut short by the storm: fine */
    }
    return worst;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 6.0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    int senders = argc > 3 ? atoi(argv[3]) : 2;
    bool forks = argc > 4 && atoi(argv[4]) != 0;
    PF_CHECK(senders >= 1 && senders <= MAX_SENDERS, "1 to %d senders", MAX_SENDERS);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    free(pf_escape(malloc(STORM_SIZE))); /* the storm's counts start at 1 */
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        PF_CHECK(pthread_create(&t, NULL, idle_thread, NULL) == 0, "pthread_create");
    }
    pid_t me = getpid(), kids[MAX_SENDERS];
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    /* The senders start together (fork_one is where forks meet the storm). */
    PF_CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0, "sigmask");
    for (int i = 0; i < senders; i++) {
        kids[i] = fork();
        PF_CHECK(kids[i] >= 0, "fork");
        if (kids[i] == 0)
            sender(me);
    }
    PF_CHECK(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL) == 0, "sigmask");
    double stall = watch(secs, forks);
    for (int i = 0; i < senders; i++) {
        int st;
        PF_CHECK(kill(kids[i], SIGKILL) == 0, "kill sender");
        while (waitpid(kids[i], &st, 0) != kids[i])
            PF_CHECK(errno == EINTR, "waitpid");
    }
    /* The senders are gone: a signal still pending runs or stays pending
     * for good (blocked from here on), either way counted as it ran. */
    PF_CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0, "sigmask");
    struct timespec settle = {0, 50000000}; /* a handler running on an idle thread ends */
    nanosleep(&settle, NULL);
    long runs = atomic_load_explicit(&g_runs, memory_order_relaxed);
    fprintf(stderr, "slowest fork %.0f ms\n", g_fork_worst * 1000.0);
    printf("stall %.0f\nhandler %ld\nready %d\n", stall * 1000.0, runs, (int)me);
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        line[0] = 0;
    PF_CHECK(runs > 1000, "the storm was too weak: %ld handler runs", runs);
    return 0;
}
