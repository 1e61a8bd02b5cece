/* writer_dlplug.c -- target of test_writer_dlclose.py: a plugin loaded,
 * allocated from and unloaded at once, N times, as a service that runs a
 * plugin now and then.  Each life of the library is far shorter than the
 * recording writer's pass, so only a module map written at the dlclose
 * names the library in the recording.
 *
 * Usage: writer_dlplug PLUGIN.so N [WAIT_MS]
 * Waits WAIT_MS first (the writer's first pass, at the start, is then
 * over: with MEMTOP_TEST_WRITER_STALL_MS the next is far off).  Each round: dlopen (its constructor
 * keeps a block of 4321 bytes), plug_alloc(777) kept, dlclose.  Exits 0, or 1 if the plugin fails.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        return fprintf(stderr, "usage: writer_dlplug PLUGIN.so N [WAIT_MS]\n"), 2;
    int n = atoi(argv[2]);
    long wait_ms = argc == 4 ? atol(argv[3]) : 0;
    struct timespec ts = {wait_ms / 1000, wait_ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
    void *volatile *kept = calloc((size_t)n, sizeof *kept);
    for (int i = 0; i < n; i++) {
        void *h = dlopen(argv[1], RTLD_NOW);
        void *(*plug_alloc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "plug_alloc") : NULL;
        if (!plug_alloc)
            return fprintf(stderr, "writer_dlplug: %s\n", dlerror()), 1;
        kept[i] = plug_alloc(777);
        dlclose(h);
    }
    return 0;
}
