/* sample_sites.c -- a workload with a known answer for sampled tracking.
 *
 * Usage: sample_sites ROUNDS RATE_BYTES SEED
 *
 * Each round allocates 100 MB live from three call sites in 60/30/10
 * proportions, with random sizes (16 B .. 64 KiB, uniform), and frees it
 * all, except the last round, which stays live until exit.  Prints, per
 * site, the true bytes of the last round and of all rounds together, and
 * the standard deviations of their estimates at RATE_BYTES,
 * sqrt(sum s^2 (1-p)/p) with p = 1 - exp(-s/RATE) (docs/sampling.md), so
 * that the test can set its bounds in standard deviations.  The blocks are
 * not written to: their pages stay untouched where the allocator allows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SITES 3
#define ROUND_BYTES 100000000ull

static const unsigned share[SITES] = {60, 30, 10};

__attribute__((noinline)) static void *site_sixty(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *site_thirty(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *site_ten(size_t n) { return malloc(n); }

static void *(*const site_fn[SITES])(size_t) = {site_sixty, site_thirty, site_ten};
static const char *const site_name[SITES] = {"site_sixty", "site_thirty", "site_ten"};

static uint64_t rng;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct {
    double bytes, var;
} sums;

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int rounds = atoi(argv[1]);
    double rate = atof(argv[2]);
    rng = strtoull(argv[3], NULL, 10) | 1;
    size_t cap = 1 << 16, n = 0;
    void **blocks = malloc(cap * sizeof *blocks);
    sums last[SITES] = {{0, 0}}, all[SITES] = {{0, 0}};
    unsigned long long mallocs = 1; /* blocks itself */
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++)
            free(blocks[i]);
        n = 0;
        for (int s = 0; s < SITES; s++) {
            last[s] = (sums){0, 0};
            for (double got = 0; got < ROUND_BYTES * share[s] / 100;) {
                size_t size = 16 + next_rand() % 65521;
                if (n == cap && !(blocks = realloc(blocks, (cap *= 2) * sizeof *blocks)))
                    return 1;
                if (!(blocks[n++] = site_fn[s](size)))
                    return 1;
                mallocs++;
                double p = -expm1(-(double)size / rate);
                got += (double)size;
                last[s].bytes += (double)size;
                last[s].var += (double)size * (double)size * (1 - p) / p;
            }
            all[s].bytes += last[s].bytes;
            all[s].var += last[s].var;
        }
    }
    for (int s = 0; s < SITES; s++)
        printf("%s live %.0f live_sd %.0f all %.0f all_sd %.0f\n", site_name[s], last[s].bytes,
               sqrt(last[s].var), all[s].bytes, sqrt(all[s].var));
    printf("mallocs %llu frees %llu\n", mallocs, mallocs - 1 - (unsigned long long)n);
    fflush(stdout);
    return 0; /* the last round stays live */
}
