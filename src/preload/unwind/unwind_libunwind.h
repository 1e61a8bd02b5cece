/* unwind_libunwind.h -- libunwind, behind memtop's own walker. */
#ifndef MT_UNWIND_LIBUNWIND_H
#define MT_UNWIND_LIBUNWIND_H

#include "core_common.h"

#include <stdbool.h>

/* Binds libunwind's functions in libunwind's own object (its cache
 * policy is set before the first walk).  False if libunwind is not
 * loaded. */
bool mt_libunwind_bind(void);
/* libunwind's unw_backtrace, as bound by mt_libunwind_bind (NULL before):
 * tells the allocator scan which module is memtop's own libunwind. */
const void *mt_libunwind_entry(void);

/* One unw_backtrace, so that libunwind creates its per-thread cache key;
 * until then libunwind walks step by step.  From the publisher thread
 * (its allocations untracked), once; not from a hook. */
void mt_libunwind_probe(void);
/* Whether mt_libunwind_probe would do anything (libunwind bound, not
 * probed yet in this process or its fork parent). */
bool mt_libunwind_wants_probe(void);

/* The contract of mt_backtrace (unwind_backtrace.h), without the hash. */
uint32_t mt_libunwind_frames(uint64_t *frames, uint32_t depth, bool *truncated);

/* Invalidates libunwind's cached rules (after dlclose): threads whose
 * frame cache may predate this walk step by step from then on.  Not from
 * a hook. */
void mt_libunwind_flush(void);

/* fork child: a caching policy a parent's thread was still setting is set
 * again by the child's first walk.  (A walk is a section of the loader
 * gate, core_loader_gate.h: fork waits for walkers there.) */
void mt_libunwind_fork_child(void);

#endif
