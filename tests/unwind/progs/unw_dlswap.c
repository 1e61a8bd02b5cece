/* unw_dlswap.c -- dlopen A / use / dlclose / dlopen B at the same address.
 *
 * argv[1], argv[2]: libunw_swap_a.so and libunw_swap_b.so (same code
 * layout, different frames: unw_swap_lib.c).  Each of CYCLES rounds loads
 * A, allocates through it on a fresh thread and on the main thread,
 * unloads it, then does the same with B.  The main thread walks through
 * both libraries, round after round: libunwind's per-thread frame cache
 * (unw_backtrace's) is not invalidated by dlclose, so memtop must stop
 * using it on a thread once a dlclose may have made it stale (the main
 * thread's walks would otherwise use A's frames for B).  Prints how many
 * rounds put B where A was (the test needs at least one) and exits 0.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <pthread.h>

enum { CYCLES = 20, ALLOCS = 50, SIZE_A = 2001, SIZE_B = 2003 };

typedef void *(*alloc_fn)(size_t);

static void *use(void *arg)
{
    alloc_fn fn = ((alloc_fn *)arg)[0];
    size_t size = (size_t)((alloc_fn *)arg)[1];
    for (int i = 0; i < ALLOCS; i++) {
        void *p = fn(size);
        PF_CHECK(p != NULL, "allocation failed");
        free(p);
    }
    return NULL;
}

/* Loads path, allocates through it on a new thread and on this one,
 * unloads it; returns the address its function had. */
static void *round_trip(const char *path, size_t size)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    PF_CHECK(h != NULL, "dlopen %s: %s", path, dlerror());
    alloc_fn fn = (alloc_fn)dlsym(h, "swap_alloc");
    PF_CHECK(fn != NULL, "dlsym swap_alloc");
    void *arg[2] = {(void *)fn, (void *)size};
    pthread_t t;
    PF_CHECK(pthread_create(&t, NULL, use, arg) == 0, "pthread_create");
    PF_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    use(arg);
    PF_CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    PF_CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL, "%s did not unload", path);
    return (void *)fn;
}

int main(int argc, char **argv)
{
    PF_CHECK(argc == 3, "usage: unw_dlswap LIB_A LIB_B");
    int same = 0;
    for (int i = 0; i < CYCLES; i++) {
        void *a = round_trip(argv[1], SIZE_A);
        void *b = round_trip(argv[2], SIZE_B);
        same += a == b;
    }
    printf("rounds %d same_address %d\n", CYCLES, same);
    return 0;
}
