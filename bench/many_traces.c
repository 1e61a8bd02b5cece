/* many_traces.c -- memtop-many-traces: a process with N distinct live
 * backtraces (default 100,000), for measuring the viewer (bench/viewer_cpu.sh,
 * docs/performance.md "Viewer CPU (issue 4)").
 *
 * Block i is allocated through a call path that spells i: its low 4 bits pick
 * one of 16 leaf functions (the malloc call sites), and each further bit picks
 * which of two noinline functions (lv_a, lv_b) is the frame at that level of a
 * recursion.  Frame k's return address lies in lv_a or lv_b, so k levels give
 * 16 * 2^k distinct backtraces; k is the fewest levels that cover N (13 for
 * 100,000: ~20 frames with main and libc, under MEMTOP_DEPTH=32).
 *
 * After the setup it prints "many-traces ready ..." and stays alive, with
 * light churn: --rate R times per second it frees the block of a random index
 * and allocates it again by the same path (same trace: alloc/free rates move,
 * live figures do not), and --leak-rate L times per second it allocates an
 * extra block, never freed, on one of the indices that are multiples of
 * --leak-every (slow steady leakers).  --rate 0 churns as fast as it can (to
 * measure how much a viewer slows the target).  Once a second it prints
 * "many-traces t=SECS churn=TOTAL leaked=TOTAL" (flushed).  SIGTERM/SIGINT:
 * clean exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define LEAF_BITS 4u
#define MAX_LEVELS 24u

typedef struct mt_opts {
    unsigned long n;
    double rate;      /* churn operations per second; 0 = as fast as possible */
    double leak_rate; /* leaked blocks per second */
    unsigned long leak_every;
    double seconds; /* run time after setup; 0 = until a signal */
} mt_opts;

/* One allocation request going down the recursion. */
typedef struct path_req {
    unsigned long index;
    unsigned levels; /* levels left */
    size_t size;
} path_req;

static volatile sig_atomic_t g_stop; /* set by SIGTERM/SIGINT */
static volatile unsigned g_sink;     /* keeps lv_a and lv_b different code */

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

#define LEAF(k)                                                                                    \
    static NOINLINE void *leaf_##k(const path_req *q)                                              \
    {                                                                                              \
        void *p = malloc(q->size + (k));                                                           \
        if (p)                                                                                     \
            memset(p, (k), 16);                                                                    \
        ESCAPE(p);                                                                                 \
        return p;                                                                                  \
    }
LEAF(0)
LEAF(1)
LEAF(2)
LEAF(3)
LEAF(4)
LEAF(5)
LEAF(6)
LEAF(7)
LEAF(8)
LEAF(9)
LEAF(10)
LEAF(11)
LEAF(12)
LEAF(13)
LEAF(14)
LEAF(15)

static void *(*const leaves[16])(const path_req *) = {
    leaf_0, leaf_1, leaf_2,  leaf_3,  leaf_4,  leaf_5,  leaf_6,  leaf_7,
    leaf_8, leaf_9, leaf_10, leaf_11, leaf_12, leaf_13, leaf_14, leaf_15,
};

static void *lv_a(path_req *q);
static void *lv_b(path_req *q);

/* The next frame: a leaf when no level is left, else lv_a or lv_b by the
 * next bit of the index.  Inlined into both, so each has its own call sites. */
static inline __attribute__((always_inline)) void *descend(path_req *q)
{
    if (q->levels == 0)
        return leaves[q->index & 15u](q);
    q->levels--;
    unsigned bit = (unsigned)(q->index >> (LEAF_BITS + q->levels)) & 1u;
    return bit ? lv_a(q) : lv_b(q);
}

/* Work after the call: no tail call, every level stays a frame. */
static NOINLINE void *lv_a(path_req *q)
{
    void *p = descend(q);
    g_sink += 1u;
    ESCAPE(p);
    return p;
}

static NOINLINE void *lv_b(path_req *q)
{
    void *p = descend(q);
    g_sink += 7u;
    ESCAPE(p);
    return p;
}

static NOINLINE void *alloc_path(unsigned long index, unsigned levels)
{
    path_req q = {.index = index, .levels = levels, .size = 32u + (index % 8u) * 16u};
    void *p = descend(&q);
    ESCAPE(p);
    return p;
}

static unsigned levels_for(unsigned long n)
{
    unsigned k = 0;
    while (k < MAX_LEVELS && (16ul << k) < n)
        k++;
    return k;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "memtop-many-traces: %s\n", msg);
    fprintf(stderr, "usage: memtop-many-traces [-n N] [--rate OPS_PER_S] [--leak-rate PER_S]\n"
                    "                          [--leak-every K] [--seconds S]\n");
    return 2;
}

/* 0: run; 1: help printed; 2: bad usage (message printed). */
static int parse_opts(int argc, char **argv, mt_opts *o)
{
    *o = (mt_opts){.n = 100000, .rate = 300, .leak_rate = 10, .leak_every = 1000};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return usage(NULL) - 1; /* 1: help asked, exit 0 */
        if (i + 1 >= argc)
            return usage("missing value");
        const char *v = argv[++i];
        char *end = NULL;
        errno = 0;
        double d = strtod(v, &end);
        if (errno || end == v || *end || d < 0)
            return usage("bad number");
        if (!strcmp(a, "-n"))
            o->n = (unsigned long)d;
        else if (!strcmp(a, "--rate"))
            o->rate = d;
        else if (!strcmp(a, "--leak-rate"))
            o->leak_rate = d;
        else if (!strcmp(a, "--leak-every"))
            o->leak_every = (unsigned long)d;
        else if (!strcmp(a, "--seconds"))
            o->seconds = d;
        else
            return usage("unknown option");
    }
    if (o->n == 0 || o->n > (16ul << MAX_LEVELS) || o->leak_every == 0)
        return usage("-n must be 1..2^28, --leak-every >= 1");
    return 0;
}

typedef struct churn_state {
    const mt_opts *o;
    void **blocks;
    unsigned levels;
    uint64_t rng;
    unsigned long setup_done; /* blocks allocated by the setup, 0..n */
    unsigned long churn, leaked;
    double leak_due, churn_due; /* operations owed so far (fractional) */
} churn_state;

/* The only allocating call site above alloc_path: the setup, the churn and
 * the leak all come through here, so that block i always has the same
 * backtrace.  leak: allocate one more block of index i and keep it forever. */
static NOINLINE int replace(churn_state *s, unsigned long i, int leak)
{
    if (leak) {
        void *p = alloc_path(i, s->levels);
        ESCAPE(p);
        return p ? 0 : -1;
    }
    free(s->blocks[i]);
    s->blocks[i] = alloc_path(i, s->levels);
    return s->blocks[i] ? 0 : -1;
}

/* The next operation: setup first (block by block), then owed leaks, then
 * owed churn (rate 0: always owed).  Returns 0 and no operation when none is
 * owed yet. */
static int next_op(churn_state *s, unsigned long *i, int *leak)
{
    const mt_opts *o = s->o;
    if (s->setup_done < o->n) {
        *i = s->setup_done++;
        *leak = 0;
        return 1;
    }
    if (s->leak_due >= 1.0) {
        unsigned long sites = (o->n + o->leak_every - 1) / o->leak_every;
        *i = (unsigned long)(rng_next(&s->rng) % sites) * o->leak_every;
        *leak = 1;
        s->leak_due -= 1.0;
        s->leaked++;
        return 1;
    }
    if (o->rate == 0 || s->churn_due >= 1.0) {
        *i = (unsigned long)(rng_next(&s->rng) % o->n);
        *leak = 0;
        s->churn_due -= o->rate == 0 ? 0.0 : 1.0;
        s->churn++;
        return 1;
    }
    return 0;
}

/* Once the setup is done: prints the ready line or a progress line, adds the
 * operations owed since *tick and sleeps 10 ms when nothing is owed.
 * Returns 1 when it is time to stop. */
static int pace(churn_state *s, double *tick, double *t0, double *next_print)
{
    const mt_opts *o = s->o;
    double t = now_s();
    if (*t0 == 0) {
        printf("many-traces ready pid=%ld n=%lu levels=%u paths=%lu\n", (long)getpid(), o->n,
               s->levels, 16ul << s->levels);
        fflush(stdout);
        *t0 = *tick = t;
        *next_print = t + 1.0;
    }
    if (t >= *next_print) {
        printf("many-traces t=%.0f churn=%lu leaked=%lu\n", t - *t0, s->churn, s->leaked);
        fflush(stdout);
        *next_print += 1.0;
    }
    s->leak_due += o->leak_rate * (t - *tick);
    s->churn_due += o->rate * (t - *tick);
    *tick = t;
    if (g_stop || (o->seconds > 0 && t - *t0 >= o->seconds))
        return 1;
    if (o->rate > 0 && s->churn_due < 1.0 && s->leak_due < 1.0) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Setup, then churn until stopped: one loop, one call site of replace(). */
static int drive(churn_state *s)
{
    double tick = 0, t0 = 0, next_print = 0;
    unsigned long ops = 0, i;
    int leak;
    for (;;) {
        if (s->setup_done >= s->o->n && (ops++ & 255u) == 0 && pace(s, &tick, &t0, &next_print))
            return 0;
        if (next_op(s, &i, &leak) && replace(s, i, leak))
            return -1;
        if (s->o->rate > 0 && s->setup_done >= s->o->n)
            ops = 0; /* paced: check the clock before every operation */
    }
}

int main(int argc, char **argv)
{
    mt_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    churn_state s = {.o = &o, .levels = levels_for(o.n), .rng = 0x9e3779b97f4a7c15ull};
    s.blocks = calloc(o.n, sizeof *s.blocks);
    if (!s.blocks)
        return usage("out of memory");
    rc = drive(&s);
    if (rc)
        fprintf(stderr, "memtop-many-traces: out of memory\n");
    printf("many-traces done churn=%lu leaked=%lu\n", s.churn, s.leaked);
    for (unsigned long i = 0; i < o.n; i++)
        free(s.blocks[i]);
    free(s.blocks);
    return rc ? 1 : 0;
}
