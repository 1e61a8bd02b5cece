/* writer_random.c -- target of test_writer_random.py: a random workload
 * drawn from a seed, so that any recording the writer makes of it can be
 * checked to open (a property test over workloads, not a fixed one).
 *
 * Usage: writer_random SEED [STEPS]
 *        writer_random bulk N [HOLD]   N allocations in a row, then every
 *                               other one freed (one thread, one site);
 *                               prints the peak RSS (VmHWM) after them,
 *                               then waits HOLD seconds (default 0).
 *                               The heap is touched first (prefault), so
 *                               that the allocations cost memtop's and
 *                               malloc's time, not the kernel's page
 *                               faults: test_writer_backlog.py needs them
 *                               faster than its slow disk even when the
 *                               machine is loaded.
 * From SEED: 1-4 threads, 1-16 call sites at depths 1-16, a working set of
 * 16 to 200,000 blocks, sizes (fixed, small, log-uniform to 64 KiB, or now
 * and then a large one), the share of mallocs, callocs, reallocs and
 * frees, bursts of allocations without frees, and pauses.  STEPS (default
 * 300,000) per thread.  Prints the parameters on one line. */
#define _GNU_SOURCE
#include "test_xorshift.h"

#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct params {
    unsigned threads, sites, depth, slots, size_kind, free_pct, realloc_pct, calloc_pct;
    unsigned burst_pct, pause_every;
    uint64_t steps;
} params;

static params g_p;

static size_t pick_size(uint64_t *s)
{
    switch (g_p.size_kind) {
    case 0:
        return 48;
    case 1:
        return 8 + test_xorshift(s) % 120;
    default:
        if (test_xorshift(s) % 1000 == 0)
            return 256 * 1024 + test_xorshift(s) % (1u << 20); /* a large one (mmap) */
        return 1 + test_xorshift(s) % ((size_t)1 << (1 + test_xorshift(s) % 16));
    }
}

/* Each call site allocates from its own stack of `depth` frames. */
typedef void *(*alloc_fn)(uint64_t *s, void *old, unsigned depth);

static __attribute__((noinline)) void *leaf(uint64_t *s, void *old, unsigned kind)
{
    size_t n = pick_size(s);
    void *p;
    if (old)
        p = realloc(old, n);
    else if (kind)
        p = calloc(1, n);
    else
        p = malloc(n);
    if (p)
        memset(p, 1, n < 64 ? n : 64);
    return p;
}

#define SITE(i)                                                                                    \
    static __attribute__((noinline)) void *site##i(uint64_t *s, void *old, unsigned depth)         \
    {                                                                                              \
        void *volatile r;                                                                          \
        if (depth > 1)                                                                             \
            r = site##i(s, old, depth - 1);                                                        \
        else                                                                                       \
            r = leaf(s, old, test_xorshift(s) % 100 < g_p.calloc_pct);                             \
        return r;                                                                                  \
    }
/* clang-format off */
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)

static const alloc_fn g_sites[16] = {site0, site1, site2, site3, site4, site5, site6, site7,
                                     site8, site9, site10, site11, site12, site13, site14, site15};
/* clang-format on */

static void *worker(void *arg)
{
    uint64_t s = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    void **slot = calloc(g_p.slots, sizeof *slot);
    unsigned burst = 0;
    for (uint64_t i = 0; i < g_p.steps; i++) {
        unsigned k = (unsigned)(test_xorshift(&s) % g_p.slots);
        alloc_fn f = g_sites[test_xorshift(&s) % g_p.sites];
        unsigned depth = 1 + (unsigned)(test_xorshift(&s) % g_p.depth);
        if (!burst && test_xorshift(&s) % 1000 < g_p.burst_pct)
            burst = 1 + (unsigned)(test_xorshift(&s) % 5000);
        if (slot[k] && !burst && test_xorshift(&s) % 100 < g_p.free_pct) {
            if (test_xorshift(&s) % 100 < g_p.realloc_pct) {
                void *p = f(&s, slot[k], depth);
                if (p)
                    slot[k] = p;
            } else {
                free(slot[k]);
                slot[k] = NULL;
            }
        } else {
            if (burst)
                burst--;
            free(slot[k]); /* the old block, if any: its free is an event too */
            slot[k] = f(&s, NULL, depth);
        }
        if (g_p.pause_every && i % g_p.pause_every == g_p.pause_every - 1)
            usleep(1000);
    }
    for (unsigned k = 0; k < g_p.slots; k++)
        if (test_xorshift(&s) % 2)
            free(slot[k]); /* the rest stays live at exit */
    return NULL;
}

/* Touches `bytes` of heap and gives them back to malloc, kept: pieces of
 * 16 MiB (below the largest mmap threshold, so from the heap), never
 * trimmed. */
static void prefault(size_t bytes)
{
    enum { PIECE = 16 << 20 };
    size_t n = bytes / PIECE + 1;
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    void **piece = malloc(n * sizeof *piece);
    for (size_t i = 0; piece && i < n; i++)
        if ((piece[i] = malloc(PIECE)))
            memset(piece[i], 1, PIECE);
    for (size_t i = 0; piece && i < n; i++)
        free(piece[i]);
    free(piece);
}

/* bulk: n allocations, every other one freed; then, for hold_s seconds,
 * nothing (the process stays, for a look at its segment). */
static int bulk(size_t n, unsigned hold_s)
{
    prefault(n * (16 + 2048 + 16)); /* the blocks below: sizes 16..4111, and headers */
    void **p = malloc(n * sizeof *p);
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++)
        p[i] = malloc(16 + test_xorshift(&s) % 4096); /* sizes that compress little */
    for (size_t i = 0; i < n; i += 2)
        free(p[i]);
    long hwm = -1; /* peak RSS, for test_writer_backlog.py */
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            hwm = atol(line + 6);
    if (f)
        fclose(f);
    printf("bulk %zu hwm_kb=%ld\n", n, hwm);
    fflush(stdout);
    if (hold_s)
        sleep(hold_s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "bulk") == 0)
        return bulk(argc > 2 ? strtoull(argv[2], NULL, 0) : 600000,
                    argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 0);
    uint64_t s = strtoull(argv[1], NULL, 0) | 1;
    test_xorshift(&s);
    g_p.threads = 1 + (unsigned)(test_xorshift(&s) % 4);
    g_p.sites = 1 + (unsigned)(test_xorshift(&s) % 16);
    g_p.depth = 1 + (unsigned)(test_xorshift(&s) % 16);
    static const unsigned slots[] = {16, 1000, 65536, 200000};
    g_p.slots = slots[test_xorshift(&s) % 4];
    g_p.size_kind = (unsigned)(test_xorshift(&s) % 3);
    g_p.free_pct = (unsigned)(test_xorshift(&s) % 90);
    g_p.realloc_pct = (unsigned)(test_xorshift(&s) % 3 ? 0 : test_xorshift(&s) % 50);
    g_p.calloc_pct = (unsigned)(test_xorshift(&s) % 3 ? 0 : test_xorshift(&s) % 50);
    g_p.burst_pct = (unsigned)(test_xorshift(&s) % 2 ? 0 : test_xorshift(&s) % 20);
    g_p.pause_every = (unsigned)(test_xorshift(&s) % 4 ? 0 : 1000 + test_xorshift(&s) % 100000);
    g_p.steps = argc > 2 ? strtoull(argv[2], NULL, 0) : 300000;
    printf("threads=%u sites=%u depth=%u slots=%u size_kind=%u free_pct=%u realloc_pct=%u "
           "calloc_pct=%u burst_pct=%u pause_every=%u steps=%llu\n",
           g_p.threads, g_p.sites, g_p.depth, g_p.slots, g_p.size_kind, g_p.free_pct,
           g_p.realloc_pct, g_p.calloc_pct, g_p.burst_pct, g_p.pause_every,
           (unsigned long long)g_p.steps);
    fflush(stdout);
    pthread_t t[4];
    for (unsigned i = 0; i < g_p.threads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(test_xorshift(&s) | 1)) != 0)
            return 1;
    for (unsigned i = 0; i < g_p.threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}
