/* bench_table.c -- how much CPU time mt_table_observe and mt_table_build take at N
 * traces (default 100,000), as the viewer uses them: a namer that returns kept
 * strings (like the screen's names cache), and after each build the leak scores
 * of one screen of rows (50) read.  Sorted by live, allocs/s, growth and leak,
 * per trace and per function, and with a filter.  Thread CPU time, so that a busy
 * machine does not inflate it; the median and the best of ROUNDS builds.
 * Also a checksum of every row (labels, figures, leak scores of all rows) to
 * compare two versions of the model, and the model's heap bytes per trace.
 * A benchmark, not a test.  Usage: model_table_bench [N] [ROUNDS] [CASE]
 * (CASE: run only the cases whose name starts with it)
 * (built with -DBENCH_OLD_API: for a model without mt_table_leak). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_fixture.h"

#define SCREEN_ROWS 50

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *const funcs[] = {"parse", "render", "load", "store", "idle", "run", "io"};
static const char *const files[] = {"a.c", "b.c", "c.c"};
static const char *const mods[] = {"app", "libx.so"};

/* Kept strings, as the screen's names cache returns them. */
typedef struct names {
    char **trace;
    size_t n;
} names;

static const char *name_fn(void *ctx, uint32_t id, mt_group_key g)
{
    const names *nm = ctx;
    switch (g) {
    case MT_GROUP_FUNCTION:
        return funcs[id % 7];
    case MT_GROUP_FILE:
        return files[id % 3];
    case MT_GROUP_MODULE:
        return mods[id % 2];
    default:
        return id < nm->n ? nm->trace[id] : "?";
    }
}

static void names_make(names *nm, size_t n)
{
    nm->n = n;
    nm->trace = malloc(n * sizeof *nm->trace);
    char buf[96];
    for (size_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%s_%zx (src/%s:%zu)", funcs[i % 7], i * 2654435761u % 65521,
                 files[i % 3], i % 3000);
        nm->trace[i] = strdup(buf);
    }
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Round r of trace i: growers, flat, oscillating and shrinking sites, many ties. */
static void fill(mt_snapshot *s, size_t i, int r)
{
    uint64_t h = mix(i + 1);
    uint64_t base = 64 * (h % 977 + 1) * 4;
    uint64_t live;
    switch (i % 4) {
    case 0:
        live = base + 64 * (uint64_t)r * (h % 3);
        break;
    case 1:
        live = base;
        break;
    case 2:
        live = base + 64 * (uint64_t)(r % 2) * (h % 5);
        break;
    default:
        live = base - 16 * (uint64_t)r;
        break;
    }
    uint64_t frees = h % 7 + (uint64_t)r * (i % 3);
    uint64_t allocs = frees + 1 + h % 50;
    fx_trace(s, i, allocs, live + 32 * frees, frees, 32 * frees);
    mt_shm_trace *t = &s->traces[i];
    t->temporary_count = frees / 2;
    for (unsigned k = 0; k < MT_CKPTS; k++)
        t->ckpt_live_bytes[k] = base + 64 * ((h >> (8 * k)) % 4);
    for (unsigned b = 0; b < MT_AGE_BUCKETS; b++)
        t->age_bytes[b] = (h >> (4 * b)) % 3 ? live / (b + 2) : 0;
}

static mt_snapshot *round_snap(size_t n, int r)
{
    mt_snapshot *s = fx_snap(n, 1 + r);
    for (size_t i = 0; i < n; i++)
        fill(s, i, r);
    s->slot.ckpt_ns[0] = (uint64_t)r * 1000000000ull;
    s->slot.ckpt_ns[1] = 1500000000ull;
    s->slot.ckpt_ns[2] = 500000000ull;
    s->slot.age_scan_ns = s->slot.t_ns;
    return s;
}

static const mt_leak_parts *leak_of(mt_table *t, size_t row)
{
#ifdef BENCH_OLD_API
    size_t n;
    return &mt_table_rows(t, &n)[row].leak;
#else
    return mt_table_leak(t, row);
#endif
}

/* What the screen reads after a build: one screen of rows and their scores. */
static double read_screen(mt_table *t)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(t, &n);
    double sum = 0;
    for (size_t i = 0; i < n && i < SCREEN_ROWS; i++)
        sum += rows[i].live_bytes + leak_of(t, i)->score + (double)rows[i].label[0];
    return sum;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* Every row, every figure, every leak score and label. */
static uint64_t checksum(mt_table *t)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(t, &n);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        const mt_table_row *r = &rows[i];
        const mt_leak_parts *l = leak_of(t, i);
        double f[] = {r->live_bytes, r->live_count,      r->alloc_count, r->alloc_bytes,
                      r->free_count, r->temporary_count, r->growth_bps,  r->allocs_ps,
                      r->temp_share, l->growth,          l->retention,   l->aging,
                      l->score};
        h = hash_bytes(h, &r->trace_id, sizeof r->trace_id);
        h = hash_bytes(h, &r->ntraces, sizeof r->ntraces);
        h = hash_bytes(h, f, sizeof f);
        h = hash_bytes(h, r->label, strlen(r->label));
    }
    return h;
}

/* Bytes allocated with malloc, mmapped blocks included. */
static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    if (rounds < 1 || rounds > 1000)
        rounds = 20;
    names nm;
    names_make(&nm, n);
    mt_namer namer = {name_fn, &nm};
    /* Snapshots first: not counted as the model's memory. */
    mt_snapshot *prev = round_snap(n, 31), *snap = round_snap(n, 32);
    size_t heap0 = heap_bytes();
    mt_table *t = mt_table_new();
    double times[1000];
    /* Fill the history ring (32 points) with fresh snapshots, then time observe()
     * on the last two again under new times. */
    for (int r = 0; r < 33; r++) {
        mt_snapshot *s = round_snap(n, r);
        mt_table_observe(t, s, NULL);
        fx_snap_free(s);
    }
    for (int r = 0; r < rounds; r++) {
        prev->slot.t_ns = (uint64_t)(34 + 2 * r) * 1000000000ull;
        snap->slot.t_ns = prev->slot.t_ns + 1000000000ull;
        snap->slot.age_scan_ns = snap->slot.t_ns;
        mt_table_observe(t, prev, NULL);
        double t0 = now_ms();
        mt_table_observe(t, snap, prev);
        times[r] = now_ms() - t0;
    }
    printf("traces %zu, observe median %.2f ms\n", n, median(times, rounds));
    static const struct {
        mt_group_key g;
        mt_sort_key k;
        const char *filter, *name;
    } cases[] = {
        {MT_GROUP_TRACE, MT_SORT_LIVE, NULL, "trace/live"},
        {MT_GROUP_TRACE, MT_SORT_ALLOCS, NULL, "trace/allocs"},
        {MT_GROUP_TRACE, MT_SORT_GROWTH, NULL, "trace/growth"},
        {MT_GROUP_TRACE, MT_SORT_LEAK, NULL, "trace/leak"},
        {MT_GROUP_TRACE, MT_SORT_LIVE, "render", "trace/live/filter"},
        {MT_GROUP_FUNCTION, MT_SORT_LIVE, NULL, "function/live"},
        {MT_GROUP_FUNCTION, MT_SORT_LEAK, NULL, "function/leak"},
    };
    double sink = 0;
    const char *only = argc > 3 ? argv[3] : "";
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (strncmp(cases[c].name, only, strlen(only)) != 0)
            continue;
        long rows = 0;
        for (int r = 0; r < rounds; r++) {
            double t0 = now_ms();
            rows = mt_table_build(t, snap, cases[c].g, cases[c].k, cases[c].filter, &namer);
            sink += read_screen(t);
            times[r] = now_ms() - t0;
            if (rows < 0)
                return 1;
        }
        double best = times[0];
        for (int r = 1; r < rounds; r++)
            best = times[r] < best ? times[r] : best;
        printf("build %-18s median %6.2f ms, best %6.2f ms (%d rounds, %ld rows) sum %016llx\n",
               cases[c].name, median(times, rounds), best, rounds, rows,
               (unsigned long long)checksum(t));
    }
    size_t heap = heap_bytes() - heap0;
    printf("model heap %.1f MB, %.0f B per trace (%s)\n", heap / 1e6, (double)heap / (double)n,
           sink > 0 ? "ok" : "?");
    fx_snap_free(prev);
    fx_snap_free(snap);
    mt_table_free(t);
    for (size_t i = 0; i < n; i++)
        free(nm.trace[i]);
    free(nm.trace);
    return 0;
}
