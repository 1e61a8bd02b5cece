/* hash_fnv.h -- FNV-1a over bytes: the one hash of memtop's tables keyed
 * by a name (group labels, interned symbols, module files) and of a
 * module's identity in the target (publish_modules.c).  Cheap and good
 * enough for open addressing at half load; not for hostile keys. */
#ifndef MT_HASH_FNV_H
#define MT_HASH_FNV_H

#include <stddef.h>
#include <stdint.h>

#define MT_FNV_SEED 0xcbf29ce484222325ull

static inline uint64_t mt_fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static inline uint64_t mt_fnv_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
