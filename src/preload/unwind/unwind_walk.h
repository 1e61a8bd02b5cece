/* unwind_walk.h -- memtop's own x86-64 stack walker (cached frame rules). */
#ifndef MT_UNWIND_H
#define MT_UNWIND_H

#include "unwind_backtrace.h"
#include "unwind_memo.h"

#include <stdbool.h>

/* Sets up the rule cache; false if the own walker cannot run here (then
 * libunwind does all unwinding). */
bool mt_unwind_init(void);

/* The contract of mt_backtrace (unwind_backtrace.h), the frames left in
 * the memo: frames[0..n) (mt_unwind_frames) are the call
 * sites of the code that called into memtop, innermost first, memtop's own
 * frames left out, at most depth; *truncated when there were more;
 * *hash = mt_hash_frames(frames, n).  The walk starts at start's caller
 * (NULL: here, stepping out of memtop's frames), and replays what it can
 * of the thread's previous walk (memo, sized for depth or more, which it
 * then replaces).  Returns
 * n, or -1 when some frame needs more than the cached rules can express (a
 * signal frame, code without unwind tables, a rule outside unwind_rule.h,
 * a stack that does not look sane): the caller then unwinds the whole
 * trace with libunwind.  That is mt_unwind, declared in unwind_backtrace.h,
 * whose inline mt_backtrace calls it. */

/* The n frames of the walk mt_unwind just made with memo (it returned n),
 * from its record: only a trace seen for the first time needs them, so the
 * walk itself stores none. */
void mt_unwind_frames(const mt_walk_memo *memo, uint64_t *frames, uint32_t n);

#endif
