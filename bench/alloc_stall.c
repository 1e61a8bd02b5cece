/* alloc_stall.c -- memtop-alloc-stall: how long memtop's background work
 * holds a program's allocations up (bench/alloc_stall.sh).
 *
 * Why: the hooks' own cost is per call (bench/run.sh); a background thread
 * that takes an allocator lock instead stalls the program's allocations
 * for as long as it holds it -- glibc's mallinfo2 walks an arena's free
 * chunks under its lock (docs/performance.md, "mallinfo2 holds the
 * target").  A per-call average hides that; the longest calls show it.
 *
 * One thread keeps N live blocks (log-uniform sizes, 16..4096 bytes, as
 * memtop-alloc-bench) and for S seconds replaces a random one per step,
 * timing each free + malloc pair.  It is alone with memtop's threads on a
 * machine of two cores or more, so a long pair is a wait, not a time
 * slice.  Prints one line: steps, the longest pair, and how many took over
 * 1 ms and over 5 ms.
 *
 * Usage: memtop-alloc-stall [-n BLOCKS] [-s SECONDS]   (default 1000000, 10)
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* xorshift64 (Marsaglia 13/7/17): period 2^64-1, state never 0. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t draw_size(uint64_t r)
{
    size_t lo = (size_t)16u << (r & 7u); /* band [lo, 2 lo], lo = 16..2048 */
    return lo + (size_t)((r >> 3) % (lo + 1u));
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    unsigned secs = 10;
    for (int c; (c = getopt(argc, argv, "n:s:")) != -1;) {
        if (c == 'n')
            n = strtoul(optarg, NULL, 10);
        else if (c == 's')
            secs = (unsigned)strtoul(optarg, NULL, 10);
        else {
            fprintf(stderr, "usage: memtop-alloc-stall [-n BLOCKS] [-s SECONDS]\n");
            return 2;
        }
    }
    void **slot = n ? calloc(n, sizeof *slot) : NULL;
    if (!slot) {
        fprintf(stderr, "memtop-alloc-stall: -n must be a positive number of blocks\n");
        return 2;
    }
    uint64_t rnd = 88172645463325252ull, steps = 0, longest = 0, over1 = 0, over5 = 0;
    for (size_t i = 0; i < n; i++)
        slot[i] = malloc(draw_size(next_rand(&rnd)));
    uint64_t end = now_ns() + (uint64_t)secs * 1000000000u;
    for (uint64_t t0 = now_ns(); t0 < end; steps++) {
        uint64_t r = next_rand(&rnd);
        size_t k = (size_t)((r >> 32) * n >> 32);
        free(slot[k]);
        slot[k] = malloc(draw_size(r));
        uint64_t t1 = now_ns(), d = t1 - t0;
        longest = d > longest ? d : longest;
        over1 += d > 1000000u;
        over5 += d > 5000000u;
        t0 = t1;
    }
    printf("steps=%" PRIu64 " longest_us=%" PRIu64 " over_1ms=%" PRIu64 " over_5ms=%" PRIu64 "\n",
           steps, longest / 1000u, over1, over5);
    for (size_t i = 0; i < n; i++)
        free(slot[i]);
    free(slot);
    return 0;
}
