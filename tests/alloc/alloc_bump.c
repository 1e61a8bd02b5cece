/* alloc_bump.c -- a program with its own allocator: a bump allocator that
 * defines malloc, calloc, realloc and free in the executable, so that its
 * malloc wins over any preloaded one (tests/alloc: memtop must say that it
 * does not see it, and --strict must fail).  Leaks 1000 bytes from
 * leak_bump() and prints one line; exits 0.  With an argument N, sleeps N
 * seconds first (for memtop -p). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Alignas(16) char arena[1 << 24];
static size_t used;

void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > sizeof arena - used)
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

void free(void *p)
{
    (void)p; /* a bump allocator never gives back */
}

void *calloc(size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n))
        return NULL;
    void *p = malloc(n);
    if (p)
        memset(p, 0, n);
    return p;
}

void *realloc(void *old, size_t n)
{
    void *p = malloc(n);
    if (p && old)
        memmove(p, old, n); /* may read past old's end, but inside the arena */
    return p;
}

__attribute__((noinline)) static char *leak_bump(void)
{
    char *p = malloc(1000);
    memset(p, 'x', 1000);
    return p;
}

int main(int argc, char **argv)
{
    char *p = leak_bump();
    if (argc > 1)
        sleep((unsigned)atoi(argv[1]));
    printf("bump: %c\n", p[999]);
    return 0;
}
