/* sample_math.h -- the two logarithm/exponential functions sampling needs,
 * without libm.
 *
 * Sampled mode draws exponential distances (-log(u) * rate, core_sample.c)
 * and weighs blocks by 1 / (1 - exp(-s/rate)) (sample_weight.h).  With
 * libm's log and expm1, libmemtop.so depended on libm.so.6, and every
 * preloaded process -- most of them in exact mode, most short ones never
 * linking libm themselves -- paid for loading it, relocating it and
 * running its IFUNC resolvers (about 0.1 ms of CPU per process:
 * docs/performance.md, "Process start and exit").  These are plain
 * series, accurate to a few units in the last place over the ranges used
 * (tests/unit/test_sample_math.c compares them with libm's); the target,
 * the replay and the tests all call these, so they agree exactly.
 *
 * mt_ln(x): natural logarithm of a finite x > 0 (normal numbers).
 * mt_expm1(x): exp(x) - 1 for finite x <= 0 (no overflow to handle).
 */
#ifndef MEMTOP_SAMPLE_MATH_H
#define MEMTOP_SAMPLE_MATH_H

#include <stdint.h>
#include <string.h>

/* ln 2 in two parts: the high part has trailing zero bits, so k * hi is
 * exact for the |k| < 2^11 used here. */
#define MT_LN2_HI 6.93147180369123816490e-01
#define MT_LN2_LO 1.90821492927058770002e-10

static inline double mt_ln(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    double m;
    memcpy(&m, &b, sizeof m);
    if (m > 1.41421356237309504880) { /* m in [sqrt(1/2), sqrt(2)) */
        m *= 0.5;
        e++;
    }
    /* log(m) = 2 atanh(f), f = (m - 1) / (m + 1), |f| < 0.1716: the odd
     * series to f^25 leaves less than 1e-19 out. */
    double f = (m - 1.0) / (m + 1.0), f2 = f * f;
    double s = 1.0 / 25;
    for (int k = 23; k >= 3; k -= 2)
        s = s * f2 + 1.0 / k;
    double r = 2.0 * f + 2.0 * f * f2 * s;
    return (double)e * MT_LN2_HI + (r + (double)e * MT_LN2_LO);
}

/* exp(r) - 1 for |r| <= 0.5 by its Taylor series to r^17 (the rest is
 * below 1e-20 of the result), summed from the small terms up. */
static inline double mt_expm1_small(double r)
{
    double s = 1.0;
    for (int k = 17; k >= 2; k--)
        s = 1.0 + s * r / k;
    return r * s;
}

static inline double mt_expm1(double x)
{
    if (x > -0.5)
        return mt_expm1_small(x);
    if (x < -40.0) /* exp(-40) < 2^-57: -1 + that rounds to -1 */
        return -1.0;
    /* exp(x) = 2^k exp(r), |r| <= ln2 / 2; then minus 1 loses at most a
     * factor 2.6 of relative accuracy (exp(x) <= exp(-0.5)). */
    double kf = x * 1.44269504088896340736 - 0.5;
    int k = (int)kf; /* toward zero: kf < 0, so this rounds x / ln2 */
    double r = (x - (double)k * MT_LN2_HI) - (double)k * MT_LN2_LO;
    uint64_t sb = (uint64_t)(1023 + k) << 52; /* k >= -59: a normal 2^k */
    double scale;
    memcpy(&scale, &sb, sizeof scale);
    return (mt_expm1_small(r) + 1.0) * scale - 1.0;
}

#endif
