/* backtrace.h -- capture the caller's stack inside a hook. */
#ifndef MT_BACKTRACE_H
#define MT_BACKTRACE_H

#include "mt_common.h"

#include <stdbool.h>

bool mt_backtrace_init(void);

/* Fills frames (innermost first) with call sites (return address - 1) of
 * the code that called the allocation function, memtop's own frames left
 * out, at most `depth`.  Sets *truncated when the stack went deeper. */
uint32_t mt_backtrace(uint64_t *frames, uint32_t depth, bool *truncated);

#endif
