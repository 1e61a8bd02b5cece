/* unwind_libunwind.h -- libunwind, behind memtop's own walker. */
#ifndef MT_UNWIND_LIBUNWIND_H
#define MT_UNWIND_LIBUNWIND_H

#include "mt_common.h"

#include <stdbool.h>

/* Binds libunwind's functions in libunwind's own object and sets its
 * per-thread cache policy.  False if libunwind is not loaded. */
bool mt_libunwind_bind(void);

/* The contract of mt_backtrace (backtrace.h), without the hash. */
uint32_t mt_libunwind_frames(uint64_t *frames, uint32_t depth, bool *truncated);

/* Invalidates libunwind's cached rules (after dlclose).  May take
 * libunwind's locks: not from a hook. */
void mt_libunwind_flush(void);

#endif
