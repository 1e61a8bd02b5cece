/* writer_plug.c -- the plugins test_writer_dlclose.py's target dlopens:
 * the constructor allocates (a block it keeps: a live trace whose first
 * frame is plug_init) and plug_alloc allocates for the caller (its first
 * frame: plug_alloc).  Built twice: libwriter_plug.so, and, with PLUG_B,
 * libwriter_plug_b.so, whose functions have other names (plug_b_init,
 * plug_b_alloc behind plug_alloc): a module the recording lacks leaves
 * them unnamed. */
#include <stdlib.h>

void *volatile plug_kept;

#ifndef PLUG_B
__attribute__((constructor, noinline)) static void plug_init(void)
{
    plug_kept = malloc(4321);
}

__attribute__((noinline)) void *plug_alloc(size_t n)
{
    void *volatile p = malloc(n); /* not a tail call: plug_alloc is frame 0 */
    return p;
}
#else
__attribute__((constructor, noinline)) static void plug_b_init(void)
{
    plug_kept = malloc(5432);
}

__attribute__((noinline)) static void *plug_b_alloc(size_t n)
{
    void *volatile p = malloc(n);
    return p;
}

__attribute__((noinline)) void *plug_alloc(size_t n)
{
    void *volatile p = plug_b_alloc(n + 1);
    return p;
}
#endif
