/* pf_mallinfo_spy.c -- a preload placed after libmemtop.so whose mallinfo2
 * stands for the walk of a large, fragmented glibc heap: it reports the
 * call on stderr ("spy-mallinfo"), sleeps MTP_MALLINFO_MS milliseconds
 * (default 40), then calls the real one.
 *
 * glibc's mallinfo2 holds each arena's lock while it walks that arena's
 * free chunks, so the target's threads wait for it: 9 to 14 ms with 1 M
 * live blocks (docs/performance.md, "mallinfo2 holds the target").  Test
 * pitfall_mallinfo: libmemtop.so asks for it at a pace, at most
 * 1/MT_MALLINFO_PACE of the time, not at every publish. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct mallinfo2 mallinfo2(void)
{
    static const char tag[] = "spy-mallinfo\n";
    (void)!write(2, tag, sizeof tag - 1);
    const char *ms = getenv("MTP_MALLINFO_MS");
    long n = ms ? atol(ms) : 40;
    struct timespec d = {n / 1000, (n % 1000) * 1000000L};
    nanosleep(&d, NULL);
    struct mallinfo2 (*next)(void) = (struct mallinfo2(*)(void))dlsym(RTLD_NEXT, "mallinfo2");
    struct mallinfo2 none = {0};
    return next ? next() : none;
}
