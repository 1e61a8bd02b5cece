/* alloc_bench.c -- memtop-alloc-bench: an allocation-heavy program used to
 * measure what a heap tracker costs (bench/run.sh runs it plain, under
 * libmemtop.so and under heaptrack).  This file parses the options, runs one
 * worker per thread (each on its own slots, all doing the same amount of
 * work) and prints one result line.  The workload itself is alloc_work.c.
 *
 * Output (one line on stdout, key=value):
 *   alloc-bench threads=T ops_per_thread=N ... maxrss_kb=R cpu_s=C elapsed_s=S ns_per_op=X
 * maxrss_kb is the process's peak RSS at the end of the timed part (the
 * tracker's memory included); elapsed_s covers the timed steps of all threads (start barrier to
 * last join), cpu_s the user+system CPU time the whole process used meanwhile (a tracker's own
 * threads included; unlike elapsed_s, it hardly changes when other programs load the machine).
 * The warm-up fill of the slots and the final frees are not timed.
 */
#include "alloc_work.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_THREADS 64u

typedef struct bench_opts {
    unsigned threads;
    uint64_t seed;
    int leave_live;
    bench_params params;
} bench_opts;

typedef struct bench_thread {
    bench_worker worker;
    pthread_t tid;
    pthread_barrier_t *start;
    pthread_barrier_t *filled;
} bench_thread;

static void usage(FILE *f)
{
    fprintf(f, "usage: memtop-alloc-bench [options]\n"
               "  -t, --threads N     worker threads, each on its own slots (default 1)\n"
               "  -n, --ops N         timed steps per thread (default 2000000)\n"
               "  -s, --seed N        PRNG seed (default 1)\n"
               "      --slots N       live blocks per thread (default 65536)\n"
               "      --temp-pct N    %% of steps that also make a temporary (default 25)\n"
               "      --touch N|full  bytes written into each new block (default 64)\n"
               "      --sizes log|uniform  size distribution in 16..4096 (default log)\n"
               "      --leave-live    do not free the working set at exit\n"
               "  -h, --help\n");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_touch(const char *s, size_t *out)
{
    uint64_t v;
    if (strcmp(s, "full") == 0) {
        *out = SIZE_MAX;
        return 0;
    }
    if (parse_u64(s, 0, 4096, &v))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_sizes(const char *s, enum bench_sizes *out)
{
    if (strcmp(s, "log") == 0)
        *out = BENCH_SIZES_LOG;
    else if (strcmp(s, "uniform") == 0)
        *out = BENCH_SIZES_UNIFORM;
    else
        return -1;
    return 0;
}

/* Applies one option; returns 0, or -1 with a message printed. */
static int apply_opt(bench_opts *o, int c, const char *arg)
{
    uint64_t v = 0;
    int bad = 0;
    switch (c) {
    case 't':
        bad = parse_u64(arg, 1, MAX_THREADS, &v);
        o->threads = (unsigned)v;
        break;
    case 'n':
        bad = parse_u64(arg, 0, UINT64_MAX, &o->params.ops);
        break;
    case 's':
        bad = parse_u64(arg, 0, UINT64_MAX, &o->seed);
        break;
    case 'S':
        bad = parse_u64(arg, 1, UINT32_MAX, &v);
        o->params.nslots = (size_t)v;
        break;
    case 'p':
        bad = parse_u64(arg, 0, 100, &v);
        o->params.temp_pct = (unsigned)v;
        break;
    case 'w':
        bad = parse_touch(arg, &o->params.touch_bytes);
        break;
    case 'z':
        bad = parse_sizes(arg, &o->params.sizes);
        break;
    case 'L':
        o->leave_live = 1;
        break;
    default:
        bad = 1;
    }
    if (bad && arg)
        fprintf(stderr, "memtop-alloc-bench: bad value '%s'\n", arg);
    return bad ? -1 : 0;
}

/* Returns 0 to run, 1 after --help, -1 on a usage error. */
static int parse_opts(int argc, char **argv, bench_opts *o)
{
    static const struct option longopts[] = {
        {"threads", required_argument, 0, 't'},  {"ops", required_argument, 0, 'n'},
        {"seed", required_argument, 0, 's'},     {"slots", required_argument, 0, 'S'},
        {"temp-pct", required_argument, 0, 'p'}, {"touch", required_argument, 0, 'w'},
        {"sizes", required_argument, 0, 'z'},    {"leave-live", no_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    *o = (bench_opts){.threads = 1,
                      .seed = 1,
                      .params = {.ops = 2000000,
                                 .nslots = 65536,
                                 .temp_pct = 25,
                                 .touch_bytes = 64,
                                 .sizes = BENCH_SIZES_LOG}};
    int c;
    while ((c = getopt_long(argc, argv, "t:n:s:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == '?' || apply_opt(o, c, optarg)) {
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "memtop-alloc-bench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru))
        return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void *thread_main(void *arg)
{
    bench_thread *t = arg;
    bench_worker_fill(&t->worker);
    pthread_barrier_wait(t->filled);
    pthread_barrier_wait(t->start);
    bench_worker_run(&t->worker);
    return NULL;
}

static int start_threads(bench_thread *th, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        int err = pthread_create(&th[i].tid, NULL, thread_main, &th[i]);
        if (err) {
            fprintf(stderr, "memtop-alloc-bench: pthread_create: %s\n", strerror(err));
            return -1;
        }
    }
    return 0;
}

static void print_result(const bench_opts *o, const bench_thread *th, double elapsed, double cpu)
{
    uint64_t allocs = 0, checksum = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        allocs += th[i].worker.allocs;
        checksum += th[i].worker.checksum;
    }
    uint64_t ops = o->params.ops * o->threads;
    struct rusage ru;
    long maxrss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
    char touch[24];
    if (o->params.touch_bytes == SIZE_MAX)
        snprintf(touch, sizeof touch, "full");
    else
        snprintf(touch, sizeof touch, "%zu", o->params.touch_bytes);
    printf("alloc-bench threads=%u ops_per_thread=%" PRIu64 " slots=%zu seed=%" PRIu64
           " sizes=%s touch=%s temp_pct=%u ops=%" PRIu64 " allocs=%" PRIu64 " checksum=%" PRIu64
           " maxrss_kb=%ld cpu_s=%.6f elapsed_s=%.6f ns_per_op=%.1f\n",
           o->threads, o->params.ops, o->params.nslots, o->seed,
           o->params.sizes == BENCH_SIZES_LOG ? "log" : "uniform", touch, o->params.temp_pct, ops,
           allocs, checksum, maxrss_kb, cpu, elapsed, ops ? elapsed * 1e9 / (double)ops : 0.0);
    fflush(stdout);
}

/* Runs the workers; returns the process exit status. */
static int run(const bench_opts *o, bench_thread *th)
{
    pthread_barrier_t start, filled;
    pthread_barrier_init(&start, NULL, o->threads + 1);
    pthread_barrier_init(&filled, NULL, o->threads + 1);
    for (unsigned i = 0; i < o->threads; i++) {
        th[i].start = &start;
        th[i].filled = &filled;
        if (bench_worker_init(&th[i].worker, &o->params, o->seed, i)) {
            fprintf(stderr, "memtop-alloc-bench: out of memory\n");
            return 1;
        }
    }
    if (start_threads(th, o->threads))
        exit(1); /* threads already started wait on a barrier forever */
    pthread_barrier_wait(&filled);
    double c0 = cpu_s();
    double t0 = now_s();
    pthread_barrier_wait(&start);
    int failed = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        pthread_join(th[i].tid, NULL);
        failed |= th[i].worker.failed;
    }
    double elapsed = now_s() - t0;
    double cpu = cpu_s() - c0;
    if (failed) {
        fprintf(stderr, "memtop-alloc-bench: an allocation failed\n");
        return 1;
    }
    print_result(o, th, elapsed, cpu);
    for (unsigned i = 0; i < o->threads; i++)
        bench_worker_finish(&th[i].worker, o->leave_live);
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    /* static: with --leave-live the workers' slot tables must stay reachable */
    static bench_thread th[MAX_THREADS];
    return run(&o, th);
}
