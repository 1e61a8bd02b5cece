/* sample_weight.h -- what one sampled block stands for, in bytes and blocks.
 *
 * With MEMTOP_SAMPLE=R the target samples allocations as a Poisson process
 * over the bytes allocated (mean distance R between sample points), so a
 * block of s bytes is sampled with probability p = 1 - exp(-s/R).  Every
 * sampled block then counts for s/p bytes and 1/p blocks: dividing by the
 * probability of being seen makes each figure an unbiased estimate
 * (Horvitz-Thompson; docs/sampling.md gives the variance).
 *
 * The same function weighs a block in the target (publish), in a replay of
 * a sampled recording and in tests, so that they all agree exactly: the
 * byte weight is rounded to the nearest byte, the block weight 1/p is
 * rounded up or down by a fraction derived from the block's size, trace
 * and birth millisecond (mt_sample_key): unbiased over many blocks, and
 * the same at the block's free as at its allocation and in a recording's
 * events, without being stored.
 */
#ifndef MEMTOP_SAMPLE_WEIGHT_H
#define MEMTOP_SAMPLE_WEIGHT_H

#include "sample_math.h"

#include <stdint.h>

typedef struct mt_sample_weight {
    uint64_t bytes; /* s / p, rounded */
    uint64_t count; /* 1 / p, rounded up or down (see above) */
} mt_sample_weight;

/* Probability that a block of size bytes is sampled at rate bytes (> 0). */
static inline double mt_sample_prob(uint64_t size, uint64_t rate)
{
    return -mt_expm1(-(double)size / (double)rate);
}

/* What the rounding of a block's weight depends on besides its size:
 * known wherever the block is (the live-block table, recording events). */
static inline uint64_t mt_sample_key(uint32_t trace, uint64_t birth_ms)
{
    return ((uint64_t)trace << 40) ^ birth_ms;
}

/* The part of a weight that depends on the size and the rate alone: what a
 * caller weighing many blocks of few sizes (the replay) may keep per size.
 * size > 0, rate > 0. */
typedef struct mt_sample_scale {
    double inv;     /* 1 / p */
    uint64_t bytes; /* s / p, rounded */
} mt_sample_scale;

static inline mt_sample_scale mt_sample_scale_of(uint64_t size, uint64_t rate)
{
    double inv = 1.0 / mt_sample_prob(size, rate);
    double bytes = (double)size * inv + 0.5;
    /* saturated past 2^64 (a size or rate near it, read from a file): the
     * conversion of a larger double is undefined */
    return (mt_sample_scale){inv, bytes < 0x1p64 ? (uint64_t)bytes : UINT64_MAX};
}

/* The weight from a block's scale (mt_sample_scale_of of its size), size
 * and key: the count rounded by the block's own fraction. */
static inline mt_sample_weight mt_sample_round(mt_sample_scale sc, uint64_t size, uint64_t key)
{
    double inv = sc.inv;
    /* floor(inv), inv >= 1: from 2^52 on every double is a whole number
     * (and a rate read from a file may make inv too large to convert). */
    double whole = inv < 0x1p52 ? (double)(uint64_t)inv : inv;
    /* A fraction in [0, 1) from key and size: the MurmurHash3 finaliser. */
    uint64_t x = key ^ (size * 0x9e3779b97f4a7c15ull);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    double u = (double)(x >> 11) * 0x1p-53;
    uint64_t count = whole < 0x1p64 ? (uint64_t)whole : UINT64_MAX; /* as the bytes */
    count += u < inv - whole ? 1u : 0u; /* inv - whole is 0 from 2^52 on: no overflow */
    return (mt_sample_weight){sc.bytes, count ? count : 1};
}

/* The weight of a sampled block of size bytes with key (mt_sample_key).
 * rate 0 (exact): every block stands for itself. */
static inline mt_sample_weight mt_sample_weigh(uint64_t size, uint64_t rate, uint64_t key)
{
    if (!rate)
        return (mt_sample_weight){size, 1};
    if (!size) /* never sampled: a zero-byte block holds no sample point */
        return (mt_sample_weight){0, 1};
    return mt_sample_round(mt_sample_scale_of(size, rate), size, key);
}

#endif
