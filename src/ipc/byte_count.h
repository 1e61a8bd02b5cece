/* byte_count.h -- the grammar of a byte count: decimal digits with an
 * optional k, M, G or T suffix (powers of 1024, either case), as in
 * --sample, --threshold and MEMTOP_SAMPLE.
 *
 * Why here: memtop checks --sample and hands it to PROG as MEMTOP_SAMPLE,
 * which libmemtop.so reads (core_config.c): both must take the same words
 * (each had its own parser, and neither took the "1T" their messages
 * named as the bound).  Header-only and without libc: libmemtop.so links
 * no part of src/ipc and reads its environment before anything is set
 * up. */
#ifndef MT_BYTE_COUNT_H
#define MT_BYTE_COUNT_H

#include <stdbool.h>
#include <stdint.h>

#define MT_SAMPLE_MAX_BYTES (1ull << 40) /* --sample, MEMTOP_SAMPLE: up to 1T */

/* The shift a suffix stands for (k 10 ... T 40), or 0 for none known. */
static inline unsigned mt_byte_suffix_shift(char c)
{
    switch (c) {
    case 'k':
    case 'K':
        return 10;
    case 'm':
    case 'M':
        return 20;
    case 'g':
    case 'G':
        return 30;
    case 't':
    case 'T':
        return 40;
    default:
        return 0;
    }
}

/* s, the whole string, as a byte count of at most max: true with *out;
 * false (out untouched) for anything else (empty, a sign, spaces, another
 * suffix, more than max). */
static inline bool mt_parse_byte_count(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    if (*p && (!(shift = mt_byte_suffix_shift(*p)) || p[1]))
        return false;
    if (v > (max >> shift))
        return false;
    *out = v << shift;
    return true;
}

#endif
