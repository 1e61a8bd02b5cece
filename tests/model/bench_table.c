/* bench_table.c -- how much CPU time mt_table_observe and mt_table_build take at N
 * traces (default 100,000), TRACE and FUNCTION grouping, sorted by live
 * bytes and by leak score (thread CPU time, so that a busy machine does not
 * inflate it).  A benchmark, not a test: it prints times.
 * Usage: model_table_bench [N] [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model_fixture.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *const funcs[] = {"parse", "render", "load", "store", "idle", "run", "io"};
static const char *const files[] = {"a.c", "b.c", "c.c"};
static const char *const mods[] = {"app", "libx.so"};

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    mt_table *t = mt_table_new();
    mt_snapshot *prev = NULL, *snap = NULL;
    double observe_ms = 0;
    for (int r = 0; r < 33; r++) { /* fill the history ring */
        snap = fx_snap(n, 1 + r);
        for (size_t i = 0; i < n; i++)
            fx_trace(snap, i, 1 + i % 1000 + (uint64_t)r * (i % 3), 64 * (i % 977 + r), i % 5,
                     64 * (i % 5));
        snap->slot.ckpt_ns[0] = (uint64_t)r * 1000000000ull;
        double t0 = now_ms();
        mt_table_observe(t, snap, prev);
        observe_ms = now_ms() - t0;
        fx_snap_free(prev);
        prev = snap;
    }
    fx_names nm = {funcs, files, mods, 7, 3, 2, {0}, 0};
    mt_namer namer = fx_namer(&nm);
    static const struct {
        mt_group_key g;
        mt_sort_key k;
        const char *name;
    } cases[] = {{MT_GROUP_TRACE, MT_SORT_LIVE, "trace/live"},
                 {MT_GROUP_TRACE, MT_SORT_LEAK, "trace/leak"},
                 {MT_GROUP_FUNCTION, MT_SORT_LEAK, "function/leak"}};
    printf("traces %zu, observe %.2f ms\n", n, observe_ms);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double best = 1e30, sum = 0;
        for (int r = 0; r < rounds; r++) {
            double t0 = now_ms();
            long rows = mt_table_build(t, snap, cases[c].g, cases[c].k, NULL, &namer);
            double dt = now_ms() - t0;
            if (rows < 0)
                return 1;
            sum += dt;
            best = dt < best ? dt : best;
        }
        printf("build %-14s best %.2f ms, mean %.2f ms (%d rounds)\n", cases[c].name, best,
               sum / rounds, rounds);
    }
    fx_snap_free(snap);
    mt_table_free(t);
    return 0;
}
