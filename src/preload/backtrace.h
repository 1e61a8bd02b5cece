/* backtrace.h -- capture the caller's stack inside a hook. */
#ifndef MT_BACKTRACE_H
#define MT_BACKTRACE_H

#include "mt_common.h"

#include <stdbool.h>

bool mt_backtrace_init(void);

/* Fills frames (innermost first) with call sites (return address - 1) of
 * the code that called the allocation function, memtop's own frames left
 * out, at most `depth`.  Sets *truncated when the stack went deeper, and
 * *hash to mt_hash_frames(frames, n) (hash.h; computed during the walk).
 * Returns n. */
uint32_t mt_backtrace(uint64_t *frames, uint32_t depth, bool *truncated, uint64_t *hash);

/* After dlclose: forgets the unwind rules both unwinders cached, since
 * the unloaded object's addresses may be reused by the next one loaded
 * (libunwind's own caches are not invalidated by dlclose either: without
 * this, a library loaded where another was would be unwound with the old
 * one's rules).  Not from a hook: it may take libunwind's locks. */
void mt_backtrace_flush(void);

#endif
