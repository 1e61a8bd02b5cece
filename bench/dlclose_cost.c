/* dlclose_cost.c -- memtop-dlclose-cost: what a dlclose that unloads a
 * plugin costs in a process with many traces (docs/performance.md,
 * "Traces retired at dlclose").
 *
 * Usage: memtop-dlclose-cost PLUGIN.so DEPTH [LIVES]
 * Makes 2^DEPTH traces of its own (a leaked block at each leaf of a binary
 * recursion), then LIVES times (default 50) dlopens PLUGIN, calls its
 * plug_alloc(100) (tests/recording/writer_plug.c) and dlcloses it, timing
 * each dlclose; prints their mean and the worst. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "trace_tree.h"

static void *volatile g_sink;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "usage: memtop-dlclose-cost PLUGIN.so DEPTH [LIVES]\n"), 2;
    int depth = atoi(argv[2]), lives = argc > 3 ? atoi(argv[3]) : 50;
    trace_tree(depth, 16);
    double total = 0, worst = 0;
    for (int i = 0; i < lives; i++) {
        void *h = dlopen(argv[1], RTLD_NOW);
        void *(*plug_alloc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "plug_alloc") : NULL;
        if (!plug_alloc)
            return fprintf(stderr, "memtop-dlclose-cost: %s\n", dlerror()), 1;
        g_sink = plug_alloc(100);
        double t0 = now_s();
        dlclose(h);
        double d = now_s() - t0;
        total += d;
        worst = d > worst ? d : worst;
    }
    printf("traces 2^%d: dlclose mean %.0f us, worst %.0f us\n", depth, total / lives * 1e6,
           worst * 1e6);
    return 0;
}
