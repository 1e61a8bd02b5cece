/* proc_start.c -- memtop-proc-start: starts N short child processes one
 * after the other from a threaded parent that holds a heap, and prints what
 * each cost.  bench/proc_start.sh runs it plain and under libmemtop.so
 * (parent and children preloaded, as with `LD_PRELOAD=... make`), to
 * measure what the preload adds to the start and exit of a process.
 *
 *   memtop-proc-start [-n N] [-t T] [-l LIVE] fork|spawn|bash PROG [ARG...]
 *
 * fork: fork + execv + waitpid (the child runs the parent's atfork handlers
 * and exec hooks first); spawn: posix_spawn + waitpid (glibc's clone(VFORK));
 * bash: one `bash -c` running PROG N times in a loop (bash forks and execs
 * each; its own start is included, divided by N).
 * T background threads (default 4) allocate and free a little every
 * millisecond, and LIVE blocks (default 20000) stay live, so the parent
 * looks like a real multi-threaded program, not an empty one.
 *
 * Output (one line on stdout):
 *   proc-start mode=M n=N ms_per_proc=X child_cpu_ms_per_proc=Y
 * ms_per_proc is wall time from before the first start to after the last
 * wait, divided by N; child_cpu_ms_per_proc the children's user+system CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static atomic_bool g_stop;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double children_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* A background thread: a few allocations and frees every millisecond. */
static void *background(void *arg)
{
    (void)arg;
    void *keep[8] = {0};
    unsigned i = 0;
    struct timespec ms = {0, 1000000};
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
        for (int k = 0; k < 4; k++, i++) {
            free(keep[i % 8]);
            keep[i % 8] = malloc(32 + (i % 13) * 24);
        }
        nanosleep(&ms, NULL);
    }
    for (int k = 0; k < 8; k++)
        free(keep[k]);
    return NULL;
}

static int run_one(int spawn, char **argv)
{
    pid_t pid;
    if (spawn) {
        int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
        if (rc != 0) {
            fprintf(stderr, "memtop-proc-start: posix_spawn %s: %s\n", argv[0], strerror(rc));
            return -1;
        }
    } else {
        pid = fork();
        if (pid < 0) {
            perror("memtop-proc-start: fork");
            return -1;
        }
        if (pid == 0) {
            execv(argv[0], argv);
            _exit(127);
        }
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* bash mode: one shell that runs PROG (no arguments, no quoting) n times. */
static int run_bash(long n, const char *prog)
{
    char script[4096];
    int len = snprintf(script, sizeof script,
                       "i=0; while [ $i -lt %ld ]; do %s || exit 1; i=$((i+1)); done", n, prog);
    if (len < 0 || (size_t)len >= sizeof script || strpbrk(prog, " '\"$`;&|<>\\"))
        return -1;
    char *argv[] = {"/bin/bash", "-c", script, NULL};
    return run_one(0, argv);
}

static int usage(void)
{
    fprintf(stderr, "usage: memtop-proc-start [-n N] [-t THREADS] [-l LIVE] fork|spawn|bash "
                    "PROG [ARG...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long n = 100, threads = 4, live = 20000;
    int opt;
    while ((opt = getopt(argc, argv, "+n:t:l:h")) != -1) {
        char *end;
        long v = strtol(optarg ? optarg : "", &end, 10);
        if (opt == 'h' || !optarg || *end || v < 0 || v > 10000000)
            return usage();
        *(opt == 'n' ? &n : opt == 't' ? &threads : &live) = v;
    }
    if (argc - optind < 2 || n < 1 || threads > 64)
        return usage();
    int spawn = strcmp(argv[optind], "spawn") == 0, bash = strcmp(argv[optind], "bash") == 0;
    if (!spawn && !bash && strcmp(argv[optind], "fork") != 0)
        return usage();
    void **heap = malloc((size_t)live * sizeof *heap);
    for (long i = 0; heap && i < live; i++)
        heap[i] = malloc(16 + (size_t)(i % 31) * 16);
    pthread_t th[64];
    for (long i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, background, NULL);

    double c0 = children_cpu_s(), t0 = now_s();
    int bad = bash ? run_bash(n, argv[optind + 1]) : 0;
    for (long i = 0; i < n && !bash && !bad; i++)
        bad = run_one(spawn, argv + optind + 1);
    double t1 = now_s(), c1 = children_cpu_s();

    atomic_store_explicit(&g_stop, true, memory_order_relaxed);
    for (long i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    for (long i = 0; heap && i < live; i++)
        free(heap[i]);
    free(heap);
    if (bad) {
        fprintf(stderr, "memtop-proc-start: %s failed\n", argv[optind + 1]);
        return 1;
    }
    printf("proc-start mode=%s n=%ld ms_per_proc=%.3f child_cpu_ms_per_proc=%.3f\n", argv[optind],
           n, (t1 - t0) * 1e3 / (double)n, (c1 - c0) * 1e3 / (double)n);
    return 0;
}
