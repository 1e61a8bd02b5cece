/* writer_cull.c -- a deterministic target for the culled recording tests
 * (test_writer_cull.py).  Every run makes the same allocations from the
 * same call sites; only their times vary.
 *
 *   writer_cull mix          ~3 s: three call sites, random sizes (fixed
 *                            seed), most freed at once, some kept ~0.5 s,
 *                            some ~1.5 s, some never freed
 *   writer_cull edge         one block of site_under lives 0.6 s, one of
 *                            site_over 1.6 s (threshold 1 s in the test)
 *   writer_cull many N       N blocks young at the same time (the young
 *                            buffer overflows when its bound is below N),
 *                            freed after 0.2 s, then half are kept
 *   writer_cull forever      mix in a loop until killed
 *   writer_cull busy         allocations as fast as it can, until killed
 *                            (a full recording grows by megabytes a second)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t g_seed = 42;

static unsigned rnd(unsigned n)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(g_seed >> 33) % n;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void *site_a(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void *site_b(size_t n)
{
    void *p = malloc(n);
    memset(p, 2, n);
    return p;
}

/* Each site touches its block after the call: no tail call, so the
 * call site is in the site's own function. */
__attribute__((noinline)) static void *site_c(size_t n)
{
    void *p = calloc(1, n);
    *(volatile char *)p = 3;
    return p;
}

__attribute__((noinline)) static void *site_under(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 4;
    return p;
}

__attribute__((noinline)) static void *site_over(size_t n)
{
    void *p = malloc(n);
    *(volatile char *)p = 5;
    return p;
}

#define KEEP 64

/* 30 steps of 100 ms: short-lived blocks every step, some kept 5 steps
 * (0.5 s), some 15 steps (1.5 s), some for ever. */
static void mix(void)
{
    void *mid[KEEP] = {0}, *lng[KEEP] = {0};
    long mid_at[KEEP] = {0}, lng_at[KEEP] = {0};
    for (long step = 0; step < 30; step++) {
        for (int i = 0; i < 300; i++) {
            size_t n = 16 + rnd(4081);
            void *(*site)(size_t) = i % 3 == 0 ? site_a : i % 3 == 1 ? site_b : site_c;
            void *p = site(n);
            unsigned k = rnd(100);
            if (k < 2 && !mid[i % KEEP]) {
                mid[i % KEEP] = p, mid_at[i % KEEP] = step;
            } else if (k < 4 && !lng[i % KEEP]) {
                lng[i % KEEP] = p, lng_at[i % KEEP] = step;
            } else if (k == 99) {
                /* never freed: live at the end */
            } else {
                free(p);
            }
        }
        for (int i = 0; i < KEEP; i++) {
            if (mid[i] && step - mid_at[i] >= 5)
                free(mid[i]), mid[i] = NULL;
            if (lng[i] && step - lng_at[i] >= 15)
                free(lng[i]), lng[i] = NULL;
        }
        nap_ms(100);
    }
}

static void edge(void)
{
    void *u = site_under(111);
    void *o = site_over(222);
    nap_ms(600);
    free(u);
    nap_ms(1000);
    free(o);
    nap_ms(300);
}

static void many(int n)
{
    void **v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = site_a(16 + (size_t)rnd(200));
    nap_ms(200);
    for (int i = 0; i < n; i += 2)
        free(v[i]);
    free(v);
    nap_ms(300);
}

static void busy(void)
{
    void *keep[256] = {0};
    for (unsigned long i = 0;; i++) {
        void *p = (i & 1 ? site_a : site_b)(16 + rnd(4081));
        unsigned k = rnd(256);
        free(keep[k]);
        keep[k] = p;
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "mix";
    if (strcmp(what, "mix") == 0)
        mix();
    else if (strcmp(what, "edge") == 0)
        edge();
    else if (strcmp(what, "many") == 0)
        many(argc > 2 ? atoi(argv[2]) : 1000);
    else if (strcmp(what, "busy") == 0)
        busy();
    else if (strcmp(what, "forever") == 0)
        for (;;)
            mix();
    else
        return fprintf(stderr, "usage: writer_cull mix|edge|many N|forever|busy\n"), 2;
    return 0;
}
