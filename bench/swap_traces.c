/* swap_traces.c -- memtop-swap-traces: a plugin's many traces named after
 * it was replaced (docs/performance.md, "pprof export of replaced
 * plugins").
 *
 * Usage: memtop-swap-traces PLUGIN_A.so PLUGIN_B.so DEPTH [LIVES]
 * dlopens PLUGIN_A, calls its plug_traces(DEPTH) (2^DEPTH leaked blocks,
 * each of its own backtrace through the plugin's few call sites), dlcloses
 * it, dlopens PLUGIN_B (the loader puts it at PLUGIN_A's place when nothing
 * took it) and exits, the blocks still live.  With LIVES (default 1),
 * PLUGIN_A is first loaded and unloaded LIVES - 1 times: as many more
 * modules that held the addresses of the traces' frames
 * (docs/performance.md, "dlclose and module look-ups at scale").  A recording of it
 * (MEMTOP_RECORD) then has 2^DEPTH traces whose frames in the plugin are
 * named from a module that is no longer the one at their address, which
 * an export looks up frame by frame. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return fprintf(stderr, "usage: memtop-swap-traces PLUGIN_A.so PLUGIN_B.so DEPTH [LIVES]\n"),
               2;
    for (int i = 1; i < (argc == 5 ? atoi(argv[4]) : 1); i++) {
        void *life = dlopen(argv[1], RTLD_NOW);
        if (!life)
            return fprintf(stderr, "memtop-swap-traces: %s\n", dlerror()), 1;
        dlclose(life);
    }
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
