/* dlclose_cost.c -- memtop-dlclose-cost: what a dlclose costs in a process
 * with many traces and many modules (docs/performance.md, "Traces retired
 * at dlclose" and "dlclose and module look-ups at scale").
 *
 * Usage: memtop-dlclose-cost PLUGIN.so DEPTH [LIVES [MODULES]]
 * Makes 2^DEPTH traces of its own (a leaked block at each leaf of a binary
 * recursion), loads MODULES copies of PLUGIN (default 0; each a file of its
 * own in a temporary directory, so each a module of its own, kept loaded),
 * then LIVES times (default 50) dlopens PLUGIN, calls its plug_alloc(100)
 * (tests/recording/writer_plug.c) and dlcloses it (a dlclose that unloads
 * it), then dlopens the first copy again and dlcloses it (one that unloads
 * nothing: the copy stays loaded), timing each dlclose; prints their means
 * and the worst. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_tree.h"

static void *volatile g_sink;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Copies file from into to; 0 on success. */
static int copy_file(const char *from, const char *to)
{
    static char buf[1 << 16];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

/* Loads n copies of plugin, each from a file of its own in dir (removed
 * once loaded); the first one's path is left in first.  0 on success. */
static int load_copies(const char *plugin, int n, char *dir, char *first, size_t size)
{
    if (n > 0 && !mkdtemp(dir))
        return -1;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/m%d.so", dir, i);
        if (copy_file(plugin, path) != 0 || !dlopen(path, RTLD_NOW))
            return -1;
        if (i == 0)
            snprintf(first, size, "%s", path);
        else
            unlink(path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "usage: memtop-dlclose-cost PLUGIN.so DEPTH [LIVES [MODULES]]\n"), 2;
    int depth = atoi(argv[2]), lives = argc > 3 ? atoi(argv[3]) : 50;
    int modules = argc > 4 ? atoi(argv[4]) : 0;
    char dir[] = "/tmp/memtop-dlcost-XXXXXX", first[4096] = "";
    if (load_copies(argv[1], modules, dir, first, sizeof first) != 0)
        return fprintf(stderr, "memtop-dlclose-cost: loading copies: %s\n", dlerror()), 1;
    trace_tree(depth, 16);
    double total = 0, worst = 0, kept_total = 0, kept_worst = 0;
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
        if (!*first)
            continue;
        void *again = dlopen(first, RTLD_NOW | RTLD_NOLOAD);
        t0 = now_s();
        dlclose(again);
        d = now_s() - t0;
        kept_total += d;
        kept_worst = d > kept_worst ? d : kept_worst;
    }
    if (*first) {
        unlink(first);
        rmdir(dir);
    }
    printf("traces 2^%d, %d more modules: dlclose mean %.0f us, worst %.0f us", depth, modules,
           total / lives * 1e6, worst * 1e6);
    if (*first)
        printf("; unloading nothing: mean %.1f us, worst %.0f us", kept_total / lives * 1e6,
               kept_worst * 1e6);
    printf("\n");
    return 0;
}
