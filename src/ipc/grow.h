/* grow.h -- growing a malloc'd array by doubling: the one growth rule of
 * the viewer's private tables (definitions, modules, rows, groups). */
#ifndef MEMTOP_GROW_H
#define MEMTOP_GROW_H

#include <stdlib.h>

/* The capacity that holds need: cap doubled (from min when 0) until it does. */
static inline size_t mt_grown_cap(size_t cap, size_t need, size_t min)
{
    size_t n = cap ? cap : min;
    while (n < need)
        n *= 2;
    return n;
}

/* Make the array *p (of *cap elements of elem bytes) hold need elements.
 * 0, or -1 when out of memory (*p and *cap unchanged). */
static inline int mt_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = mt_grown_cap(*cap, need, 64);
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

#endif
