/* naive_alloc.c -- a stand-in for an allocator memtop does not know,
 * preloaded after libmemtop.so (tests/sampling/check_counts.py): its
 * realloc and calloc call malloc and free by their exported names, as
 * some small allocators do, which reaches memtop's hooks again from inside
 * the real call.  Each call must still be counted once.
 * Built twice: NAIVE_LIBC_ALIAS also exports __libc_malloc as its own
 * malloc, as Debian's libtcmalloc and libmimalloc do, which must not make
 * memtop take it for glibc. */
#include <stddef.h>
#include <string.h>

void *__libc_malloc(size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);
size_t malloc_usable_size(void *p);

void *malloc(size_t n)
{
#ifdef NAIVE_LIBC_ALIAS
    return __libc_memalign(16, n);
#else
    return __libc_malloc(n);
#endif
}

#ifdef NAIVE_LIBC_ALIAS
void *__libc_malloc(size_t n) __attribute__((alias("malloc")));
#endif

void free(void *p)
{
    __libc_free(p);
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

void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p) {
        size_t old = malloc_usable_size(p);
        memcpy(q, p, old < n ? old : n);
        free(p);
    }
    return q;
}
