/* sym_c.c -- a C program for the symbolization tests: an always_inline
 * helper that allocates, inlined two deep; a static function; leaks so
 * every site stays in the final snapshot.  Built -O2 -g.
 *   --unlink-self          delete its own executable before allocating
 *   --replace-self OTHER   rename OTHER over its own executable first
 *   --stay=SECONDS         (last) keep running that long after allocating,
 *                          for memtop -p to attach */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline __attribute__((always_inline)) void *inline_make(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}

static inline __attribute__((always_inline)) void *outer_inline(size_t n)
{
    return inline_make(n + 16);
}

static __attribute__((noinline)) void *static_make(size_t n)
{
    void *p = calloc(1, n);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

__attribute__((noinline)) void *exported_make(size_t n)
{
    return outer_inline(n);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--unlink-self") == 0 && unlink(argv[0]) != 0)
        return perror("unlink"), 1;
    if (argc > 2 && strcmp(argv[1], "--replace-self") == 0 && rename(argv[2], argv[0]) != 0)
        return perror("rename"), 1;
    void *keep[3];
    keep[0] = exported_make(100 + (size_t)argc);
    keep[1] = static_make(200 + (size_t)argc);
    keep[2] = outer_inline(300 + (size_t)argc);
    printf("%p %p %p\n", keep[0], keep[1], keep[2]);
    fflush(stdout);
    if (argc > 1 && strncmp(argv[argc - 1], "--stay=", 7) == 0)
        sleep((unsigned)atoi(argv[argc - 1] + 7));
    return 0;
}
