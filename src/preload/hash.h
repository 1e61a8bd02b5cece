/* hash.h -- well-mixed 64-bit hashing for pointers and backtraces. */
#ifndef MT_HASH_H
#define MT_HASH_H

#include <stdint.h>

/* The 64-bit finaliser of MurmurHash3: full avalanche, cheap. */
static inline uint64_t mt_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Hash of a backtrace: two independent multiply-xorshift lanes (even and
 * odd frames) so the CPU overlaps them, then a full finaliser.  Order
 * matters (frames are mixed in position), as it must for call chains. */
static inline uint64_t mt_hash_frames(const uint64_t *frames, uint32_t n)
{
    uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xc2b2ae3d27d4eb4full;
    uint32_t i = 0;
    for (; i + 1 < n; i += 2) {
        a = (a ^ frames[i]) * 0xff51afd7ed558ccdull;
        b = (b ^ frames[i + 1]) * 0xc4ceb9fe1a85ec53ull;
        a ^= a >> 32;
        b ^= b >> 29;
    }
    if (i < n)
        a = (a ^ frames[i]) * 0xff51afd7ed558ccdull;
    return mt_mix64(a ^ (b * 0x9e3779b97f4a7c15ull));
}

/* Maps a hash onto [0, n) without division (Lemire's fastrange). */
static inline uint64_t mt_range(uint64_t h, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

#endif
