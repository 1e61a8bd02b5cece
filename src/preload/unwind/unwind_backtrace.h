/* unwind_backtrace.h -- capture the caller's stack inside a hook. */
#ifndef MT_BACKTRACE_H
#define MT_BACKTRACE_H

#include "core_common.h"
#include "core_state.h"

#include <stdbool.h>

#include "unwind_memo.h"

/* The frame record of an exported allocation hook, which has a frame
 * pointer because it takes __builtin_frame_address(0) (hook_libc.c): the
 * caller's rbp, saved by the hook's prologue, then the hook's return
 * address; the caller's rsp after the call is just above it.  The own
 * walker starts there, instead of stepping out of memtop's frames. */
typedef struct mt_hook_frame {
    uint64_t rbp;
    uint64_t ret;
} mt_hook_frame;

bool mt_backtrace_init(void);

/* Address ranges of an allocator's code that a hook installed into it
 * (alloc_jemalloc.c) is called from: while mt_tls_trim points to one, the
 * backtrace drops its frames up to the outermost one inside a range among
 * the first MT_TRIM_SCAN, so that frames[0] is the program's call into
 * the allocator, as for the exported hooks. */
#define MT_TRIM_SPANS 8u
#define MT_TRIM_SCAN 24u
typedef struct mt_trim {
    uint32_t n;
    struct {
        uint64_t lo, hi;
    } span[MT_TRIM_SPANS];
} mt_trim;
extern MT_TLS const mt_trim *mt_tls_trim;

/* The own walker (unwind_walk.c; its contract in unwind_walk.h). */
int mt_unwind(const mt_hook_frame *start, mt_walk_memo *memo, uint32_t depth, bool *truncated,
              uint64_t *hash);

/* mt_backtrace's other paths: trimmed, check mode, libunwind only; and
 * libunwind after the own walker gave up. */
uint32_t mt_backtrace_other(const mt_hook_frame *start, mt_walk_memo *memo, uint64_t *frames,
                            uint32_t depth, bool *truncated, uint64_t *hash, bool *in_memo);
uint32_t mt_backtrace_fallback(uint64_t *frames, uint32_t depth, bool *truncated, uint64_t *hash);

/* Fills frames (innermost first) with call sites (return address - 1) of
 * the code that called the allocation function, memtop's own frames left
 * out, at most `depth`.  Sets *truncated when the stack went deeper, and
 * *hash to mt_hash_frames(frames, n) (core_hash.h; computed during the walk).
 * Returns n.  start: the hook's frame record, or NULL (the walk then finds
 * the caller by stepping out of memtop's frames); libunwind ignores it.
 * memo: the calling thread's previous walk (unwind_memo.h), used and
 * replaced by the own walker.  *in_memo: the own walker's frames were left
 * in memo, not stored in frames (a known trace needs only the hash), for
 * mt_backtrace_frames to fill in if they are needed, before memo's next walk. */
static inline uint32_t mt_backtrace(const mt_hook_frame *start, mt_walk_memo *memo,
                                    uint64_t *frames, uint32_t depth, bool *truncated,
                                    uint64_t *hash, bool *in_memo)
{
    /* Inline, the usual case: the hook's caller calls the walker directly. */
    *in_memo = false;
    if (MT_UNLIKELY(mt_tls_trim || mt_g.cfg.unwind != MT_UNWIND_AUTO))
        return mt_backtrace_other(start, memo, frames, depth, truncated, hash, in_memo);
    int n = mt_unwind(start, memo, depth, truncated, hash);
    if (MT_UNLIKELY(n < 0))
        return mt_backtrace_fallback(frames, depth, truncated, hash);
    *in_memo = true;
    return (uint32_t)n;
}

/* frames[0..n) of the walk mt_backtrace (returning n) left in memo. */
void mt_backtrace_frames(const mt_walk_memo *memo, uint64_t *frames, uint32_t n);

/* After dlclose: forgets the unwind rules both unwinders cached, since
 * the unloaded object's addresses may be reused by the next one loaded
 * (libunwind's own caches are not invalidated by dlclose either: without
 * this, a library loaded where another was would be unwound with the old
 * one's rules).  Not from a hook: it may take libunwind's locks. */
void mt_backtrace_flush(void);

/* subs: the loader's count of unloaded objects (dl_phdr_info.dlpi_subs)
 * as the publisher just read it.  Flushes (mt_backtrace_flush) when it
 * changed since the last call: glibc unloads some objects without the
 * interposed dlclose (iconv's gconv modules, through its internal
 * __libc_dlclose), which the dlclose hook never sees.  Called with the
 * publisher's lock held (every module sync is). */
void mt_backtrace_unloads_seen(unsigned long long subs);

#endif
