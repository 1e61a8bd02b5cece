/* writer_plug.c -- the plugin test_writer_dlclose.py's target dlopens:
 * its constructor allocates (a block it keeps: a live trace whose first
 * frame is plug_init) and plug_alloc allocates for the caller. */
#include <stdlib.h>

void *volatile plug_kept;

__attribute__((constructor, noinline)) static void plug_init(void)
{
    plug_kept = malloc(4321);
}

__attribute__((noinline)) void *plug_alloc(size_t n)
{
    void *volatile p = malloc(n); /* not a tail call: plug_alloc is frame 0 */
    return p;
}
