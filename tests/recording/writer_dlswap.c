/* writer_dlswap.c -- target of test_writer_dlclose.py's "swap": a plugin
 * unloaded and another loaded where it was, as a service swapping one
 * plugin for another does.  Both the live view and a recording must then
 * name the second one's functions, not the first one's at the same
 * offsets, and the first one's block, still live (a leak), from the first
 * one's functions, not the second one's at its address.
 *
 * Usage: writer_dlswap PLUGIN.so PLUGIN_B.so HOLD_MS [unlink-self]
 * First naps 300 ms: the segment exists (MEMTOP_START_MS) and the
 * publisher and the recording have listed the modules once.  With
 * unlink-self, then removes its own executable, as an upgrade that
 * replaces a running service's binary does: the main program's path then
 * reads " (deleted)", and it must stay one module.  Then: dlopen PLUGIN,
 * its plug_alloc(777) kept, dlclose; dlopen PLUGIN_B, its plug_alloc(555)
 * kept (plug_b_alloc(556)), from the same call site (so that the
 * constructors' blocks, 4321 and 5432 bytes, have backtraces of the same
 * addresses when the loader puts PLUGIN_B at PLUGIN's place); prints "same place" if the loader put
 * PLUGIN_B where PLUGIN was (else "elsewhere"), then "ready", sleeps
 * HOLD_MS (a viewer looks), dlcloses PLUGIN_B.  Exits 0, or 1 if a plugin
 * fails. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile kept[2];

/* dlopen PATH, call its plug_alloc(n) into *keep; its load bias in *bias. */
__attribute__((noinline)) static void *load_and_alloc(const char *path, size_t n,
                                                      void *volatile *keep, ElfW(Addr) * bias)
{
    void *h = dlopen(path, RTLD_NOW);
    void *(*plug_alloc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "plug_alloc") : NULL;
    struct link_map *lm = NULL;
    if (!plug_alloc || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0)
        return NULL;
    *bias = lm->l_addr;
    *keep = plug_alloc(n);
    return h;
}

static int unlink_self(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    return unlink(self) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "unlink-self") == 0))
        return fprintf(stderr, "usage: writer_dlswap PLUGIN.so PLUGIN_B.so HOLD_MS "
                               "[unlink-self]\n"),
               2;
    struct timespec first = {0, 300000000L};
    nanosleep(&first, NULL);
    if (argc == 5 && !unlink_self())
        return perror("writer_dlswap: unlink-self"), 1;
    /* One call site for both: the constructors' backtraces (through the
     * loader) then have the same addresses when the plugins' constructors
     * are at the same offsets (plug_init, plug_b_init). */
    ElfW(Addr) bias[2] = {0, 0};
    static const size_t sizes[2] = {777, 555};
    void *h = NULL;
    volatile int plugins = 2; /* not unrolled: one call site */
    for (int i = 0; i < plugins; i++) {
        if (h)
            dlclose(h);
        h = load_and_alloc(argv[1 + i], sizes[i], &kept[i], &bias[i]);
        if (!h)
            return fprintf(stderr, "writer_dlswap: %s\n", dlerror()), 1;
    }
    printf("%s\nready\n", bias[0] == bias[1] ? "same place" : "elsewhere");
    fflush(stdout);
    long ms = atol(argv[3]);
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
    dlclose(h);
    return 0;
}
