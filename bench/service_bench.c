/* service_bench.c -- memtop-service-bench: a service-like allocation
 * pattern for measuring culled recordings (bench/record_cull.sh,
 * docs/performance.md): RATE allocations a second (default 20000) from
 * four call sites, sizes uniform in 16..4096 bytes, 99 % freed within
 * 50 ms (uniform), 1 % kept 15..60 s (longer than the default 10 s cull
 * threshold) or to the end.  Runs SECONDS (default 30), then frees
 * everything still live and prints one line.
 *
 * The schedule is a wheel of 1 ms buckets of block records taken from a
 * static pool: the bench itself allocates nothing but the workload.
 *
 * Usage: memtop-service-bench [SECONDS [RATE [SEED]]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WHEEL_MS 65536u /* deaths up to ~65 s ahead */
#define POOL (1u << 21) /* blocks live at once at most */
#define NONE UINT32_MAX

typedef struct node {
    void *p;
    uint32_t next;
} node;

static node g_pool[POOL];
static uint32_t g_free = NONE, g_used;
static uint32_t g_wheel[WHEEL_MS];
static uint64_t g_seed = 1;

static uint64_t rnd(uint64_t n)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return (g_seed >> 33) % n;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t take_node(void)
{
    if (g_free != NONE) {
        uint32_t i = g_free;
        g_free = g_pool[i].next;
        return i;
    }
    return g_used < POOL ? g_used++ : NONE;
}

/* Four call sites, kept apart. */
__attribute__((noinline)) static void *site_request(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 1;
    return p;
}
__attribute__((noinline)) static void *site_parse(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 2;
    return p;
}
__attribute__((noinline)) static void *site_buffer(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 3;
    return p;
}
__attribute__((noinline)) static void *site_cache(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 4;
    return p;
}

static void *(*const g_sites[4])(size_t) = {site_request, site_parse, site_buffer, site_cache};

static void schedule(uint64_t ms)
{
    uint32_t i = take_node();
    if (i == NONE)
        return;
    g_pool[i].p = g_sites[rnd(4)](16 + rnd(4081));
    uint64_t life = rnd(100) ? rnd(51) : 15000 + rnd(45001);
    uint32_t b = (uint32_t)((ms + 1 + life) % WHEEL_MS);
    g_pool[i].next = g_wheel[b];
    g_wheel[b] = i;
}

static void free_bucket(uint32_t b)
{
    for (uint32_t i = g_wheel[b], next; i != NONE; i = next) {
        next = g_pool[i].next;
        free(g_pool[i].p);
        g_pool[i].next = g_free;
        g_free = i;
    }
    g_wheel[b] = NONE;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 30;
    uint64_t rate = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000;
    g_seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    memset(g_wheel, 0xff, sizeof g_wheel);
    uint64_t t0 = now_ms(), end = t0 + (uint64_t)(secs * 1000), done = 0, ms = t0;
    for (; ms < end; ms++) {
        while (now_ms() < ms) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        free_bucket((uint32_t)(ms % WHEEL_MS));
        uint64_t due = (ms - t0 + 1) * rate / 1000u;
        for (; done < due; done++)
            schedule(ms);
    }
    for (uint32_t b = 0; b < WHEEL_MS; b++)
        free_bucket(b);
    printf("service-bench seconds=%.1f rate=%llu allocations=%llu\n", secs,
           (unsigned long long)rate, (unsigned long long)done);
    return 0;
}
