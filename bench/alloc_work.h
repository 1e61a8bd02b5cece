/* alloc_work.h -- the allocation workload of memtop-alloc-bench.
 *
 * One "worker" owns a table of slots (its working set of live blocks) and a
 * seeded xorshift PRNG.  Each step picks a slot, a call site and a call path
 * at random, walks a chain of 16 noinline functions and, at the site, frees
 * the slot's old block and allocates a new one of a random size, writes into
 * it, and sometimes also makes a short-lived temporary.  Everything is
 * deterministic for a given seed.  bench/README.md documents the model.
 */
#ifndef MEMTOP_BENCH_ALLOC_WORK_H
#define MEMTOP_BENCH_ALLOC_WORK_H

#include <stddef.h>
#include <stdint.h>

enum bench_sizes {
    BENCH_SIZES_LOG,     /* log-uniform 16..4096: each power-of-two band equally likely */
    BENCH_SIZES_UNIFORM, /* uniform 16..4096 */
};

/* How a worker behaves; the same for every thread. */
typedef struct bench_params {
    uint64_t ops;       /* timed steps per worker */
    size_t nslots;      /* live blocks per worker */
    unsigned temp_pct;  /* percentage of steps that also make a temporary */
    size_t touch_bytes; /* bytes written into each new block (SIZE_MAX = whole block) */
    enum bench_sizes sizes;
} bench_params;

typedef struct bench_worker {
    const bench_params *params;
    uint64_t rng;      /* xorshift64 state, never 0 */
    void **slots;      /* nslots entries, NULL = empty */
    uint64_t checksum; /* bytes read back from freed blocks, defeats dead-store elimination */
    uint64_t allocs;   /* allocations made (fill + steps + temporaries) */
    int failed;        /* an allocation returned NULL */
} bench_worker;

/* Number of distinct allocation sites and call paths (for the README). */
#define BENCH_SITES 64u
#define BENCH_PATHS 16u
#define BENCH_CHAIN_DEPTH 16u

/* Prepares a worker; seed and index give its PRNG stream.  Returns 0 or -1
 * (out of memory). */
int bench_worker_init(bench_worker *w, const bench_params *p, uint64_t seed, unsigned index);

/* Fills every slot once (untimed warm-up). */
void bench_worker_fill(bench_worker *w);

/* Runs params->ops steps. */
void bench_worker_run(bench_worker *w);

/* Frees the working set and the slot table (unless leave_live, in which case
 * the blocks stay live so a snapshot at exit shows them). */
void bench_worker_finish(bench_worker *w, int leave_live);

#endif
