/* swap_traces.c -- memtop-swap-traces: a plugin's many traces named after
 * it was replaced (docs/performance.md, "pprof export of replaced
 * plugins").
 *
 * Usage: memtop-swap-traces PLUGIN_A.so PLUGIN_B.so DEPTH
 * dlopens PLUGIN_A, calls its plug_traces(DEPTH) (2^DEPTH leaked blocks,
 * each of its own backtrace through the plugin's few call sites), dlcloses
 * it, dlopens PLUGIN_B (the loader puts it at PLUGIN_A's place when nothing
 * took it) and exits, the blocks still live.  A recording of it
 * (MEMTOP_RECORD) then has 2^DEPTH traces whose frames in the plugin are
 * named from a module that is no longer the one at their address, which
 * an export looks up frame by frame. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: memtop-swap-traces PLUGIN_A.so PLUGIN_B.so DEPTH\n"), 2;
    void *a = dlopen(argv[1], RTLD_NOW);
    void (*traces)(int) = a ? (void (*)(int))dlsym(a, "plug_traces") : NULL;
    if (!traces)
        return fprintf(stderr, "memtop-swap-traces: %s\n", dlerror()), 1;
    traces(atoi(argv[3]));
    dlclose(a);
    void *b = dlopen(argv[2], RTLD_NOW);
    if (!b)
        return fprintf(stderr, "memtop-swap-traces: %s\n", dlerror()), 1;
    return 0;
}
