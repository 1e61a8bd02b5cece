/* big_table.c -- large zeroed tables on huge pages (see big_table.h). */
#include "big_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_BYTES ((size_t)2 << 20)

/* Bytes of the mapping for a table of `bytes` (>= HUGE_BYTES): whole huge pages. */
static size_t mapped(size_t bytes)
{
    return (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
}

void *mt_big_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 2 / size)
        return NULL;
    size_t bytes = n * size;
    if (bytes < HUGE_BYTES)
        return calloc(n ? n : 1, size ? size : 1);
    size_t len = mapped(bytes);
    /* One huge page more than needed, then the unaligned ends given back. */
    char *raw =
        mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
    char *p = (char *)at;
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + HUGE_BYTES > p)
        munmap(p + len, (size_t)(raw + HUGE_BYTES - p));
    madvise(p, len, MADV_HUGEPAGE); /* a hint; failing it leaves ordinary pages */
    return p;
}

void mt_big_free(void *p, size_t n, size_t size)
{
    if (!p)
        return;
    if (n * size < HUGE_BYTES)
        free(p);
    else
        munmap(p, mapped(n * size));
}
