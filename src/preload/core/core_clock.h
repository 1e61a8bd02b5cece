/* core_clock.h -- cheap time for the hooks.
 *
 * CLOCK_MONOTONIC_COARSE is read through the vDSO in a few nanoseconds (no
 * system call); its resolution (1-4 ms) is ample for lifetimes and ages.
 * Times inside memtop are nanoseconds since tracking began.
 */
#ifndef MT_CLOCK_H
#define MT_CLOCK_H

#include <stdint.h>
#include <time.h>

extern uint64_t mt_clock_origin_ns;

static inline uint64_t mt_mono_raw_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Coarse monotonic time since tracking began, for the hot path. */
static inline uint64_t mt_now_ns(void)
{
    return mt_mono_raw_ns(CLOCK_MONOTONIC_COARSE) - mt_clock_origin_ns;
}

/* Precise monotonic time since tracking began, for the publisher. */
static inline uint64_t mt_now_precise_ns(void)
{
    uint64_t t = mt_mono_raw_ns(CLOCK_MONOTONIC) - mt_clock_origin_ns;
    uint64_t c = mt_now_ns();
    return t > c ? t : c; /* never behind what the hooks have stamped */
}

/* The wall clock (CLOCK_REALTIME), in ns since the epoch. */
static inline uint64_t mt_unix_ns(void)
{
    return mt_mono_raw_ns(CLOCK_REALTIME);
}

/* When tracking began, by the wall clock: what times since tracking began
 * (t_ns) are added to.  A fork child's is its parent's (its clock origin
 * is inherited). */
static inline uint64_t mt_tracking_start_unix_ns(void)
{
    return mt_unix_ns() - mt_now_precise_ns();
}

#endif
