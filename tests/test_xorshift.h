/* test_xorshift.h -- one xorshift64 step (Marsaglia's 13, 7, 17): the
 * tests' and test programs' reproducible randomness, one copy for all of
 * them (the preload keeps its own generator, core_sample.c).  state must
 * never be 0. */
#ifndef MT_TEST_XORSHIFT_H
#define MT_TEST_XORSHIFT_H

#include <stdint.h>

static inline uint64_t test_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
