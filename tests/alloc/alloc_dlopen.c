/* alloc_dlopen.c -- loads the library named by argv[1] with dlopen after
 * start, calls its own_leak() (which allocates from the library's own
 * allocator), waits 300 ms (several polls of memtop's publisher) and
 * prints "loaded"; exits 0 (tests/alloc). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    char *(*leak)(void) = (char *(*)(void))dlsym(h, "own_leak");
    if (!leak || !leak())
        return 1;
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    printf("loaded\n");
    return 0;
}
