/* addr_set.c -- a sorted set of frame addresses (see addr_set.h). */
#include "addr_set.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

void mt_addr_set_init(mt_addr_set *s)
{
    memset(s, 0, sizeof *s);
}

void mt_addr_set_free(mt_addr_set *s)
{
    free(s->addrs);
    mt_addr_set_init(s);
}

bool mt_addr_set_add(mt_addr_set *s, uint64_t a)
{
    if (mt_grow((void **)&s->addrs, &s->cap, s->n + 1, sizeof *s->addrs))
        return false;
    s->addrs[s->n++] = a;
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void mt_addr_set_seal(mt_addr_set *s)
{
    if (!s->n)
        return;
    qsort(s->addrs, s->n, sizeof *s->addrs, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < s->n; i++)
        if (s->addrs[i] != s->addrs[k - 1])
            s->addrs[k++] = s->addrs[i];
    s->n = k;
}

bool mt_addr_set_has(const mt_addr_set *s, uint64_t a)
{
    size_t lo = 0, hi = s ? s->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->addrs[mid] == a)
            return true;
        if (s->addrs[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}
