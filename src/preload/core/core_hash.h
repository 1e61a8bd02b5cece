/* core_hash.h -- well-mixed 64-bit hashing for pointers and backtraces. */
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

/* Hash of a backtrace, one frame at a time, so that the unwinder can fold
 * it into its walk (unwind_walk.c) and give the same value as hashing the stored
 * frames: start from MT_HASH_SEED, mt_hash_step each frame innermost
 * first, then mt_hash_finish with the count.  A step multiplies the frame
 * by MT_HASH_MULT and folds it into the state with an xor and an odd
 * multiply (off the walk's serial chain of loads: the rule cache indexes
 * by the address itself, unwind_cache.h).  For a given frame a step is a bijection of
 * the state, and for a given state a bijection of the frame, so traces
 * that differ in one frame never collide; order matters, as it must for
 * call chains; the finaliser gives full avalanche. */
#define MT_HASH_SEED 0x9e3779b97f4a7c15ull
#define MT_HASH_MULT 0xff51afd7ed558ccdull

static inline uint64_t mt_hash_fold(uint64_t h, uint64_t frame_product)
{
    return (h ^ frame_product) * 0xc4ceb9fe1a85ec53ull;
}

static inline uint64_t mt_hash_step(uint64_t h, uint64_t frame)
{
    return mt_hash_fold(h, frame * MT_HASH_MULT);
}

static inline uint64_t mt_hash_finish(uint64_t h, uint32_t n)
{
    return mt_mix64(h ^ ((uint64_t)n * 0xc2b2ae3d27d4eb4full));
}

static inline uint64_t mt_hash_frames(const uint64_t *frames, uint32_t n)
{
    uint64_t h = MT_HASH_SEED;
    for (uint32_t i = 0; i < n; i++)
        h = mt_hash_step(h, frames[i]);
    return mt_hash_finish(h, n);
}

/* Maps a hash onto [0, n) without division (Lemire's fastrange). */
static inline uint64_t mt_range(uint64_t h, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

#endif
