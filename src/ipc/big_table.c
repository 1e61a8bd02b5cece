/* big_table.c -- large zeroed tables on huge pages (see big_table.h). */
#include "big_table.h"

#include "huge_map.h"

#include <stdint.h>
#include <stdlib.h>

/* Bytes of the mapping for a table of `bytes` (>= MT_HUGE_BYTES): whole huge pages. */
static size_t mapped(size_t bytes)
{
    return (bytes + MT_HUGE_BYTES - 1) & ~(MT_HUGE_BYTES - 1);
}

void *mt_big_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 2 / size)
        return NULL;
    size_t bytes = n * size;
    if (bytes < MT_HUGE_BYTES)
        return calloc(n ? n : 1, size ? size : 1);
    return mt_huge_map(mapped(bytes));
}

void mt_big_free(void *p, size_t n, size_t size)
{
    if (!p)
        return;
    if (n * size < MT_HUGE_BYTES)
        free(p);
    else
        munmap(p, mapped(n * size));
}
