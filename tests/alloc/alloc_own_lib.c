/* alloc_own_lib.c -- a shared library with an allocator of its own: a
 * bump allocator named malloc, hidden, so the library's own calls use it
 * and nothing else in the process does.  Loaded with dlopen after start
 * by alloc_dlopen (tests/alloc): memtop must find it then and say NOT
 * exact.  own_leak() leaks 3000 bytes from it. */
#include <stddef.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

static _Alignas(16) char arena[1 << 20];
static size_t used;

HIDDEN void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > sizeof arena - used)
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

HIDDEN void free(void *p)
{
    (void)p;
}

__attribute__((visibility("default"))) char *own_leak(void)
{
    char *p = malloc(3000);
    if (p)
        memset(p, 1, 3000);
    return p;
}
