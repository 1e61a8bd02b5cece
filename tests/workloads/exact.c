/* exact.c -- memtop-exact: the exact-counters workload.
 *
 * Why it exists: memtop promises exact per-backtrace counters.  This program
 * exercises every hooked allocation function from distinct, known "site"
 * functions and writes down what memtop must report for each of them (its
 * ground truth, as JSON).  tests/e2e/check_exact.py runs it under
 * `memtop --export` and compares the two to the byte.
 *
 * Rules the design relies on (README "Accounting rules"):
 *  - each site_* function calls exactly one allocation function, and is
 *    never inlined nor a tail call (CMake compiles this file with -O0
 *    -fno-inline -fno-optimize-sibling-calls -fno-builtin), so frames[0] of
 *    every trace it makes lies inside that site function;
 *  - run with MEMTOP_TEMP_MS=0, "temporary" means only "free of the block
 *    the freeing thread allocated last, with no allocation in between".
 *    Every free here says whether it is meant to be temporary, and a
 *    per-thread model of that rule checks the intent (a mismatch is a bug in
 *    this program: it exits 70).  Nothing else allocates between a temporary
 *    allocation and its free;
 *  - run with a MEMTOP_TEMP_MS longer than the whole run, every free() is
 *    temporary and the free half of a realloc never is: the ground truth
 *    gives those figures as temporary_{count,bytes}_long_threshold.
 *    realloc(p, 0), which frees p, counts as a free() (temporary by the
 *    same rules);
 *  - failed calls (calloc/reallocarray overflow, bad posix_memalign
 *    alignment, huge malloc) count nothing, and an allocation always follows
 *    them before the next free.
 *
 * Usage: memtop-exact [GROUND.json|-] [EXIT_CODE]
 *   writes the ground truth to GROUND.json (or stdout) and exits EXIT_CODE
 *   (default 0).  Blocks left live at exit are deliberate leaks.
 *   MEMTOP_EXACT_DELAY_MS=N (optional, 0..600000): sleep N milliseconds
 *   before the work, without allocating, so that a viewer can attach and
 *   start recording first (tests/tui/check_record_key.py).  Unset or 0: no
 *   delay; a bad value is a usage error (exit 2).
 *   MEMTOP_EXACT_HOLD_MS=N (likewise): sleep N milliseconds after writing
 *   the ground truth, before exiting, so that a viewer can attach by pid
 *   and read the finished state of a running process
 *   (tests/e2e/check_namespaces.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every site function; the names are what the ground truth reports. */
#define SITES(X)                                                                                   \
    X(site_malloc)                                                                                 \
    X(site_malloc_fail)                                                                            \
    X(site_calloc)                                                                                 \
    X(site_calloc_overflow)                                                                        \
    X(site_realloc_null)                                                                           \
    X(site_realloc_grow)                                                                           \
    X(site_realloc_zero)                                                                           \
    X(site_reallocarray)                                                                           \
    X(site_reallocarray_overflow)                                                                  \
    X(site_posix_memalign)                                                                         \
    X(site_posix_memalign_bad)                                                                     \
    X(site_memalign)                                                                               \
    X(site_aligned_alloc)                                                                          \
    X(site_valloc)                                                                                 \
    X(site_pvalloc)                                                                                \
    X(site_temporary)                                                                              \
    X(site_stack_outer)                                                                            \
    X(site_stack_inner)                                                                            \
    X(site_spacer)                                                                                 \
    X(site_main_handoff)                                                                           \
    X(site_worker_malloc)                                                                          \
    X(site_worker_temp)                                                                            \
    X(site_worker_handoff)                                                                         \
    X(site_leak)

enum site {
#define SITE_ENUM(name) S_##name,
    SITES(SITE_ENUM)
#undef SITE_ENUM
        S_COUNT
};

static const char *const site_names[S_COUNT] = {
#define SITE_NAME(name) #name,
    SITES(SITE_NAME)
#undef SITE_NAME
};

#define NTHREADS 4
#define ROUNDS 40
#define EXIT_DESIGN_BUG 70

enum { NOT_TEMP = 0, TEMP = 1 };

/* Expected counters of one site (updated atomically: workers share it). */
struct site_expect {
    uint64_t alloc_count, alloc_bytes;
    uint64_t free_count, free_bytes;
    uint64_t temporary_count, temporary_bytes;
    uint64_t plain_free_count, plain_free_bytes; /* by free(), not realloc */
};

struct truth {
    struct site_expect sites[S_COUNT];
};

/* Per-thread state: the truth, and the model of the "temporary" rule. */
struct thr {
    struct truth *truth;
    void *last; /* block this thread allocated last, NULL once freed */
};

struct block {
    void *p;
    size_t bytes;
    enum site site;
};

struct worker {
    struct truth *truth;
    int index;
    pthread_t tid;
    struct block from_main[ROUNDS]; /* allocated by main, freed here */
    struct block handoff[ROUNDS];   /* allocated here, freed by main */
};

static void die(const char *what)
{
    fprintf(stderr, "memtop-exact: %s\n", what);
    exit(EXIT_DESIGN_BUG);
}

/* Makes the result "used" after the call, so no site call is a tail call. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static void add(uint64_t *field, uint64_t v)
{
    __atomic_fetch_add(field, v, __ATOMIC_RELAXED);
}

/* ---- The sites: one allocation function each. ---- */
#define SITE __attribute__((noinline))

SITE static void *site_malloc(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_malloc_fail(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_calloc(size_t n, size_t m)
{
    void *p = calloc(n, m);
    keep(p);
    return p;
}

SITE static void *site_calloc_overflow(size_t n, size_t m)
{
    void *p = calloc(n, m);
    keep(p);
    return p;
}

SITE static void *site_realloc_null(size_t n)
{
    void *p = realloc(NULL, n);
    keep(p);
    return p;
}

SITE static void *site_realloc_grow(void *old, size_t n)
{
    void *p = realloc(old, n);
    keep(p);
    return p;
}

SITE static void *site_realloc_zero(void *old)
{
    void *p = realloc(old, 0);
    keep(p);
    return p;
}

SITE static void *site_reallocarray(void *old, size_t n, size_t m)
{
    void *p = reallocarray(old, n, m);
    keep(p);
    return p;
}

SITE static void *site_reallocarray_overflow(void *old, size_t n, size_t m)
{
    void *p = reallocarray(old, n, m);
    keep(p);
    return p;
}

SITE static void *site_posix_memalign(size_t align, size_t n)
{
    void *p = NULL;
    int rc = posix_memalign(&p, align, n);
    keep(p);
    return rc == 0 ? p : NULL;
}

SITE static int site_posix_memalign_bad(size_t align, size_t n)
{
    void *p = NULL;
    int rc = posix_memalign(&p, align, n);
    keep(p);
    return rc;
}

SITE static void *site_memalign(size_t align, size_t n)
{
    void *p = memalign(align, n);
    keep(p);
    return p;
}

SITE static void *site_aligned_alloc(size_t align, size_t n)
{
    void *p = aligned_alloc(align, n);
    keep(p);
    return p;
}

SITE static void *site_valloc(size_t n)
{
    void *p = valloc(n);
    keep(p);
    return p;
}

SITE static void *site_pvalloc(size_t n)
{
    void *p = pvalloc(n);
    keep(p);
    return p;
}

SITE static void *site_temporary(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_stack_outer(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_stack_inner(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_spacer(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_main_handoff(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_worker_malloc(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_worker_temp(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_worker_handoff(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

SITE static void *site_leak(size_t n)
{
    void *p = malloc(n);
    keep(p);
    return p;
}

/* ---- Bookkeeping of the ground truth. ---- */

/* Records a successful allocation of `bytes` at `site`. */
static struct block got(struct thr *t, enum site site, void *p, size_t bytes)
{
    if (p == NULL) {
        die("an allocation that must succeed failed");
    }
    struct site_expect *e = &t->truth->sites[site];
    add(&e->alloc_count, 1);
    add(&e->alloc_bytes, bytes);
    t->last = p;
    struct block b = {p, bytes, site};
    return b;
}

/* Records the free of b against its site; `temporary` is the intent,
 * `plain` says it is a free() rather than a realloc's free half. */
static void count_free(struct thr *t, const struct block *b, int temporary, int plain)
{
    struct site_expect *e = &t->truth->sites[b->site];
    add(&e->free_count, 1);
    add(&e->free_bytes, b->bytes);
    if (plain) {
        add(&e->plain_free_count, 1);
        add(&e->plain_free_bytes, b->bytes);
    }
    if (temporary) {
        add(&e->temporary_count, 1);
        add(&e->temporary_bytes, b->bytes);
    }
    if (b->p == t->last) {
        t->last = NULL;
    }
}

/* free(b) with its intended temporary status, checked against the rule. */
static void release(struct thr *t, struct block *b, int temporary)
{
    int model = b->p == t->last;
    if (model != temporary) {
        die(temporary ? "a free meant temporary is not (design bug)"
                      : "a free meant non-temporary is temporary (design bug)");
    }
    count_free(t, b, temporary, 1);
    free(b->p);
    b->p = NULL;
}

/* realloc(p, 0) freed b: a free like free()'s, checked against the rule
 * the same way (a spacer was allocated after it: not temporary at
 * MEMTOP_TEMP_MS=0; temporary under a long threshold). */
static void freed_by_realloc_zero(struct thr *t, struct block *b)
{
    count_free(t, b, b->p == t->last, 1);
    b->p = NULL;
}

/* The free half of a realloc: never temporary. */
static void realloc_freed(struct thr *t, const struct block *old)
{
    count_free(t, old, NOT_TEMP, 0);
}

/* ---- Phases, each exercising a group of sites. ---- */
static const size_t malloc_sizes[] = {1, 16, 100, 1000, 4096, 65536, 200000};
#define N_MALLOC_SIZES (sizeof(malloc_sizes) / sizeof(malloc_sizes[0]))

/* Two callers of site_malloc: one site, two backtraces. */
static __attribute__((noinline)) struct block path_a(struct thr *t, size_t n)
{
    struct block b = got(t, S_site_malloc, site_malloc(n), n);
    keep(b.p);
    return b;
}

static __attribute__((noinline)) struct block path_b(struct thr *t, size_t n)
{
    struct block b = got(t, S_site_malloc, site_malloc(n), n);
    keep(b.p);
    return b;
}

static void phase_malloc(struct thr *t)
{
    struct block a[N_MALLOC_SIZES], b[N_MALLOC_SIZES];
    for (size_t i = 0; i < N_MALLOC_SIZES; i++) {
        a[i] = path_a(t, malloc_sizes[i]);
        b[i] = path_b(t, malloc_sizes[i] + 1);
    }
    for (size_t i = 0; i < N_MALLOC_SIZES; i++) {
        release(t, &a[i], NOT_TEMP);
    }
    /* b[last] is the thread's last block: freeing it now would be temporary.
     * Free the others and leave it live (a leak). */
    for (size_t i = 0; i + 1 < N_MALLOC_SIZES; i++) {
        release(t, &b[i], NOT_TEMP);
    }
    struct block tmp = got(t, S_site_malloc, site_malloc(77), 77);
    release(t, &tmp, TEMP);
}

static void phase_calloc(struct thr *t)
{
    struct block c0 = got(t, S_site_calloc, site_calloc(10, 12), 120);
    struct block c1 = got(t, S_site_calloc, site_calloc(3, 1000), 3000);
    struct block c2 = got(t, S_site_calloc, site_calloc(1, 7), 7);
    release(t, &c2, TEMP);
    release(t, &c0, NOT_TEMP);
    (void)c1; /* leaked */
}

/* Calls that fail count nothing.  The next phase starts with an allocation,
 * so whether a failed call counts as "an allocation in between" never
 * matters. */
static void phase_failures(void)
{
    volatile size_t huge = SIZE_MAX / 2;
    if (site_calloc_overflow(huge, 4) != NULL || site_malloc_fail(huge + 7) != NULL ||
        site_posix_memalign_bad(24, 64) != EINVAL) {
        die("a call that must fail succeeded");
    }
}

static void phase_realloc(struct thr *t)
{
    static const size_t grow[] = {200, 5000, 300000, 64};
    struct block r = got(t, S_site_realloc_null, site_realloc_null(100), 100);
    for (size_t i = 0; i < sizeof(grow) / sizeof(grow[0]); i++) {
        void *q = site_realloc_grow(r.p, grow[i]);
        if (q == NULL) {
            die("realloc failed");
        }
        realloc_freed(t, &r);
        r = got(t, S_site_realloc_grow, q, grow[i]);
    }
    struct block spacer = got(t, S_site_spacer, site_spacer(32), 32);
    if (site_realloc_zero(r.p) != NULL) {
        die("realloc(p, 0) did not free");
    }
    freed_by_realloc_zero(t, &r);
    struct block r2 = got(t, S_site_realloc_null, site_realloc_null(50), 50);
    release(t, &spacer, NOT_TEMP);
    (void)r2; /* leaked */
}

static void phase_reallocarray(struct thr *t)
{
    struct block a = got(t, S_site_reallocarray, site_reallocarray(NULL, 10, 8), 80);
    void *q = site_reallocarray(a.p, 20, 8);
    if (q == NULL) {
        die("reallocarray failed");
    }
    realloc_freed(t, &a);
    a = got(t, S_site_reallocarray, q, 160);
    volatile size_t huge = SIZE_MAX / 2;
    if (site_reallocarray_overflow(a.p, huge, 4) != NULL || errno != ENOMEM) {
        die("reallocarray overflow did not fail with ENOMEM");
    }
    struct block b = got(t, S_site_reallocarray, site_reallocarray(NULL, 3, 3), 9);
    release(t, &a, NOT_TEMP);
    (void)b; /* leaked */
}

static void phase_aligned(struct thr *t)
{
    struct block keep_pm = got(t, S_site_posix_memalign, site_posix_memalign(64, 100), 100);
    struct block x = got(t, S_site_posix_memalign, site_posix_memalign(32, 33), 33);
    release(t, &x, TEMP);
    struct block keep_ma = got(t, S_site_memalign, site_memalign(128, 1000), 1000);
    x = got(t, S_site_memalign, site_memalign(16, 10), 10);
    release(t, &x, TEMP);
    struct block keep_aa = got(t, S_site_aligned_alloc, site_aligned_alloc(256, 512), 512);
    x = got(t, S_site_aligned_alloc, site_aligned_alloc(64, 192), 192);
    release(t, &x, TEMP);
    struct block keep_va = got(t, S_site_valloc, site_valloc(3000), 3000);
    x = got(t, S_site_valloc, site_valloc(5), 5);
    release(t, &x, TEMP);
    struct block keep_pv = got(t, S_site_pvalloc, site_pvalloc(5000), 5000);
    x = got(t, S_site_pvalloc, site_pvalloc(1), 1);
    release(t, &x, TEMP);
    release(t, &keep_pm, NOT_TEMP);
    release(t, &keep_ma, NOT_TEMP);
    release(t, &keep_aa, NOT_TEMP);
    (void)keep_va; /* leaked */
    (void)keep_pv; /* leaked */
}

/* Temporaries: malloc immediately freed; and nested ones, where only the
 * inner block is temporary (the outer one saw an allocation in between). */
static void phase_temporaries(struct thr *t)
{
    for (size_t i = 0; i < 100; i++) {
        struct block b = got(t, S_site_temporary, site_temporary(8 + i * 3), 8 + i * 3);
        release(t, &b, TEMP);
    }
    for (size_t i = 0; i < 3; i++) {
        struct block o = got(t, S_site_stack_outer, site_stack_outer(40 + i), 40 + i);
        struct block in = got(t, S_site_stack_inner, site_stack_inner(48 + i), 48 + i);
        release(t, &in, TEMP);
        release(t, &o, NOT_TEMP);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct thr t = {w->truth, NULL};
    size_t base = 24 + (size_t)w->index;
    struct block first = got(&t, S_site_worker_malloc, site_worker_malloc(base), base);
    for (int i = 0; i < ROUNDS; i++) {
        release(&t, &w->from_main[i], NOT_TEMP); /* allocated by main */
    }
    struct block held[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = base + 8 * (size_t)i;
        struct block a = got(&t, S_site_worker_malloc, site_worker_malloc(n), n);
        struct block tmp = got(&t, S_site_worker_temp, site_worker_temp(2 * n + 1), 2 * n + 1);
        release(&t, &tmp, TEMP);
        held[i] = got(&t, S_site_worker_malloc, site_worker_malloc(n + 1), n + 1);
        release(&t, &a, NOT_TEMP);
        w->handoff[i] = got(&t, S_site_worker_handoff, site_worker_handoff(n + 3), n + 3);
    }
    struct block sentinel = got(&t, S_site_worker_malloc, site_worker_malloc(8), 8);
    for (int i = 0; i < ROUNDS; i += 2) {
        release(&t, &held[i], NOT_TEMP); /* odd ones are leaked */
    }
    release(&t, &first, NOT_TEMP);
    (void)sentinel; /* leaked */
    return NULL;
}

static void phase_threads(struct thr *t)
{
    struct worker w[NTHREADS];
    memset(w, 0, sizeof(w));
    for (int k = 0; k < NTHREADS; k++) {
        w[k].truth = t->truth;
        w[k].index = k;
        for (int i = 0; i < ROUNDS; i++) {
            size_t n = 16 + (size_t)i + 100 * (size_t)k;
            w[k].from_main[i] = got(t, S_site_main_handoff, site_main_handoff(n), n);
        }
    }
    for (int k = 0; k < NTHREADS; k++) {
        if (pthread_create(&w[k].tid, NULL, worker_main, &w[k]) != 0) {
            die("pthread_create failed");
        }
    }
    for (int k = 0; k < NTHREADS; k++) {
        pthread_join(w[k].tid, NULL);
    }
    /* A fresh live block, so no handoff block can be "the last one". */
    struct block spacer = got(t, S_site_spacer, site_spacer(24), 24);
    for (int k = 0; k < NTHREADS; k++) {
        for (int i = 0; i < ROUNDS; i++) {
            release(t, &w[k].handoff[i], NOT_TEMP);
        }
    }
    (void)spacer; /* leaked */
}

static void phase_misc(struct thr *t)
{
    struct block l1 = got(t, S_site_leak, site_leak(12345), 12345);
    struct block l2 = got(t, S_site_leak, site_leak(1), 1);
    free(NULL); /* counts nothing */
    free(NULL);
    if (malloc_usable_size(l1.p) < l1.bytes) { /* hooked, counts nothing */
        die("malloc_usable_size too small");
    }
    (void)l2; /* both leaked */
}

/* ---- Output. ---- */
static void write_site(FILE *f, const char *name, const struct site_expect *e, int last)
{
    fprintf(f,
            "    \"%s\": {\"alloc_count\": %llu, \"alloc_bytes\": %llu, \"free_count\": %llu, "
            "\"free_bytes\": %llu, \"live_count\": %llu, \"live_bytes\": %llu, "
            "\"temporary_count\": %llu, \"temporary_bytes\": %llu, "
            "\"temporary_count_long_threshold\": %llu, "
            "\"temporary_bytes_long_threshold\": %llu}%s\n",
            name, (unsigned long long)e->alloc_count, (unsigned long long)e->alloc_bytes,
            (unsigned long long)e->free_count, (unsigned long long)e->free_bytes,
            (unsigned long long)(e->alloc_count - e->free_count),
            (unsigned long long)(e->alloc_bytes - e->free_bytes),
            (unsigned long long)e->temporary_count, (unsigned long long)e->temporary_bytes,
            (unsigned long long)e->plain_free_count, (unsigned long long)e->plain_free_bytes,
            last ? "" : ",");
}

static int write_truth(const char *path, const struct truth *truth, int exit_code)
{
    FILE *f = (path == NULL || strcmp(path, "-") == 0) ? stdout : fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "memtop-exact: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"memtop_exact_ground_truth\": 1,\n  \"exit_code\": %d,\n", exit_code);
    fprintf(f, "  \"threads\": %d,\n  \"sites\": {\n", NTHREADS);
    for (int s = 0; s < S_COUNT; s++) {
        write_site(f, site_names[s], &truth->sites[s], s + 1 == S_COUNT);
    }
    fprintf(f, "  }\n}\n");
    int bad = ferror(f);
    if (f != stdout) {
        bad |= fclose(f);
    } else {
        bad |= fflush(f);
    }
    return bad ? -1 : 0;
}

static int parse_exit_code(const char *arg)
{
    char *end = NULL;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || v < 0 || v > 255) {
        return -1;
    }
    return (int)v;
}

/* The milliseconds in environment variable name: 0 when unset, -1 when
 * invalid. */
static long env_ms(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return 0;
    }
    char *end = NULL;
    long ms = strtol(v, &end, 10);
    return (*end != '\0' || ms < 0 || ms > 600000) ? -1 : ms;
}

/* Sleeps ms milliseconds (nanosleep allocates nothing), resuming after signals. */
static void sleep_ms(long ms)
{
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

int main(int argc, char **argv)
{
    int exit_code = argc > 2 ? parse_exit_code(argv[2]) : 0;
    long delay = env_ms("MEMTOP_EXACT_DELAY_MS"), hold = env_ms("MEMTOP_EXACT_HOLD_MS");
    if (argc > 3 || exit_code < 0 || delay < 0 || hold < 0) {
        fprintf(stderr, "usage: [MEMTOP_EXACT_DELAY_MS=N] [MEMTOP_EXACT_HOLD_MS=N] memtop-exact "
                        "[GROUND.json|-] [EXIT_CODE]\n");
        return 2;
    }
    sleep_ms(delay);
    static struct truth truth;
    struct thr t = {&truth, NULL};
    phase_malloc(&t);
    phase_calloc(&t);
    phase_failures();
    phase_realloc(&t);
    phase_reallocarray(&t);
    phase_aligned(&t);
    phase_temporaries(&t);
    phase_threads(&t);
    phase_misc(&t);
    if (write_truth(argc > 1 ? argv[1] : NULL, &truth, exit_code) != 0) {
        return EXIT_DESIGN_BUG;
    }
    sleep_ms(hold);
    return exit_code;
}
