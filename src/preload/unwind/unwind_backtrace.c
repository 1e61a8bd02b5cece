/* unwind_backtrace.c -- stack capture: memtop's own walker first, libunwind behind.
 *
 * MEMTOP_UNWIND (core_config.h) picks who unwinds.  auto (the default): the own
 * walker (unwind_walk.c), whose cached rules cost a few instructions a frame;
 * when any frame of a trace is beyond it (signal frames, code without
 * unwind tables, unusual rules), libunwind (unwind_libunwind.c) unwinds the
 * whole trace, so a trace is never worse than libunwind's.  libunwind:
 * libunwind only, as before the own walker existed.  check: both for every
 * allocation, the accounting uses libunwind's result, and mismatches are
 * counted (and the first few logged); a summary is logged at exit, with
 * how many own walks replayed part of their thread's previous walk
 * (unwind_memo.h): the own walker runs with its memo in check mode too.
 *
 * Both leave memtop's own frames out.  The own walker starts at the hook's
 * caller when the hook hands its frame record down (unwind_backtrace.h); both
 * recognise memtop's frames by address otherwise: the executable segment
 * of libmemtop.so, found here at start-up.
 */
#define _GNU_SOURCE
#include "unwind_backtrace.h"

#include "core_hash.h"
#include "core_log.h"
#include "shm_layout.h"
#include "core_state.h"
#include "unwind_walk.h"
#include "unwind_cache.h"
#include "unwind_libunwind.h"

#include <link.h>
#include <signal.h>
#include <string.h>

#define MISMATCH_LOG_MAX 5

static _Atomic bool g_ready; /* set once, by initialisation */
/* Counts, for the summary at exit: own walks and those that replayed
 * part of the thread's previous walk (check mode only; counting them in
 * auto mode would put a shared atomic on every allocation), walks left to
 * libunwind, and check-mode mismatches. */
static _Atomic uint64_t g_own, g_reuse, g_fallback, g_mismatch;

struct self_range {
    uintptr_t probe, lo, hi;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct self_range *r = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (r->probe >= lo && r->probe < hi) {
            r->lo = lo;
            r->hi = hi;
            return 1;
        }
    }
    return 0;
}

bool mt_backtrace_init(void)
{
    struct self_range r = {(uintptr_t)&mt_backtrace_init, 0, 0};
    dl_iterate_phdr(find_self, &r);
    mt_g.self_lo = r.lo;
    mt_g.self_hi = r.hi;
    if (r.lo == 0 || !mt_libunwind_bind())
        return false;
    if (mt_g.cfg.unwind != MT_UNWIND_LIBUNWIND && !mt_unwind_init())
        mt_log(MT_LOG_INFO, "own unwinder unavailable (glibc < 2.35 or no memory): libunwind only");
    atomic_store_explicit(&g_ready, true, memory_order_release); /* the binding above */
    return true;
}

void mt_backtrace_flush(void)
{
    mt_ucache_flush();
    if (atomic_load_explicit(&g_ready, memory_order_acquire))
        mt_libunwind_flush();
}

void mt_backtrace_unloads_seen(unsigned long long subs)
{
    /* Called under the publisher's lock only: no race on g_subs.
     * Unloads through dlclose were flushed already (hook_dl.c); flushing
     * once more for them costs only a few rule recomputations.  Loads
     * (dlpi_adds) alone cannot make a cached rule stale. */
    static unsigned long long g_subs;
    if (subs == g_subs)
        return;
    g_subs = subs;
    mt_backtrace_flush();
}

/* libunwind needs ~13 KB of stack.  A signal handler that allocates on a
 * small alternate signal stack (sigaltstack) may not have that much left:
 * then the trace gets no frames (the block is still counted exactly, on
 * the trace without frames) rather than overflowing the handler's stack.
 * One system call, on libunwind's (rare, slow) path only. */
#define LIBUNWIND_STACK_NEED (16u << 10)

static bool libunwind_has_room(void)
{
    stack_t ss;
    if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
        return true;
    char here;
    uintptr_t sp = (uintptr_t)&here, lo = (uintptr_t)ss.ss_sp;
    return sp > lo && sp - lo >= LIBUNWIND_STACK_NEED;
}

/* libunwind's backtrace, or none when the stack has no room for it. */
static uint32_t libunwind_frames(uint64_t *frames, uint32_t depth, bool *truncated)
{
    if (MT_UNLIKELY(!libunwind_has_room())) {
        *truncated = false;
        return 0;
    }
    return mt_libunwind_frames(frames, depth, truncated);
}

static void log_mismatch(uint64_t k, const uint64_t *own, int on, bool otrunc,
                         const uint64_t *frames, uint32_t n, bool truncated)
{
    uint32_t i = 0;
    while (i < n && (int)i < on && own[i] == frames[i])
        i++;
    mt_log(MT_LOG_WARN,
           "unwind check: mismatch %llu: own %d frames%s, libunwind %u frames%s; "
           "first difference at frame %u: own %#llx, libunwind %#llx",
           (unsigned long long)k, on, otrunc ? " (truncated)" : "", n,
           truncated ? " (truncated)" : "", i, (unsigned long long)((int)i < on ? own[i] : 0),
           (unsigned long long)(i < n ? frames[i] : 0));
}

/* MEMTOP_UNWIND=check: both walkers; libunwind's result is the one used. */
static uint32_t check_both(const mt_hook_frame *start, mt_walk_memo *memo, uint64_t *frames,
                           uint32_t depth, bool *truncated, uint64_t *hash)
{
    uint64_t own[MT_MAX_DEPTH], oh = 0;
    bool otrunc = false;
    int on = mt_unwind(start, memo, depth, &otrunc, &oh);
    if (on > 0)
        mt_unwind_frames(memo, own, (uint32_t)on);
    uint32_t n = libunwind_frames(frames, depth, truncated);
    *hash = mt_hash_frames(frames, n);
    if (on < 0) {
        atomic_fetch_add_explicit(&g_fallback, 1, memory_order_relaxed);
        return n;
    }
    atomic_fetch_add_explicit(&g_own, 1, memory_order_relaxed);
    if (memo->copied)
        atomic_fetch_add_explicit(&g_reuse, 1, memory_order_relaxed);
    if ((uint32_t)on != n || otrunc != *truncated || oh != mt_hash_frames(own, (uint32_t)on) ||
        memcmp(own, frames, n * sizeof *frames) != 0) {
        uint64_t k = atomic_fetch_add_explicit(&g_mismatch, 1, memory_order_relaxed) + 1;
        if (k <= MISMATCH_LOG_MAX)
            log_mismatch(k, own, on, otrunc, frames, n, *truncated);
    }
    return n;
}

/* libunwind's trace, and its hash. */
static uint32_t libunwind_hashed(uint64_t *frames, uint32_t depth, bool *truncated, uint64_t *hash)
{
    uint32_t n = libunwind_frames(frames, depth, truncated);
    *hash = mt_hash_frames(frames, n);
    return n;
}

uint32_t mt_backtrace_fallback(uint64_t *frames, uint32_t depth, bool *truncated, uint64_t *hash)
{
    atomic_fetch_add_explicit(&g_fallback, 1, memory_order_relaxed);
    return libunwind_hashed(frames, depth, truncated, hash);
}

/* mt_backtrace without the trim; *in_memo when the own walker left the
 * frames in memo. */
static uint32_t walk(const mt_hook_frame *start, mt_walk_memo *memo, uint64_t *frames,
                     uint32_t depth, bool *truncated, uint64_t *hash, bool *in_memo)
{
    int mode = mt_g.cfg.unwind;
    if (MT_LIKELY(mode == MT_UNWIND_AUTO)) {
        int n = mt_unwind(start, memo, depth, truncated, hash);
        if (MT_LIKELY(n >= 0)) {
            *in_memo = true;
            return (uint32_t)n;
        }
        return mt_backtrace_fallback(frames, depth, truncated, hash);
    }
    if (mode == MT_UNWIND_CHECK)
        return check_both(start, memo, frames, depth, truncated, hash);
    return libunwind_hashed(frames, depth, truncated, hash);
}

MT_TLS const mt_trim *mt_tls_trim;

static bool in_trim(const mt_trim *tr, uint64_t pc)
{
    for (uint32_t i = 0; i < tr->n; i++)
        if (pc - tr->span[i].lo < tr->span[i].hi - tr->span[i].lo)
            return true;
    return false;
}

/* The walk without the allocator's own frames (mt_tls_trim).  The walk
 * stays at `depth` frames (the walk memo expects the same depth from one
 * walk to the next), so a trimmed trace has as many fewer outer frames as
 * it drops inner ones. */
static uint32_t __attribute__((noinline))
walk_trimmed(const mt_hook_frame *start, mt_walk_memo *memo, uint64_t *frames, uint32_t depth,
             bool *truncated, uint64_t *hash)
{
    bool in_memo = false;
    uint32_t n = walk(start, memo, frames, depth, truncated, hash, &in_memo);
    if (in_memo)
        mt_unwind_frames(memo, frames, n);
    uint32_t k = 0;
    /* The allocator's frames come first; the scan stops two frames past the
     * last one found (one frame outside the ranges, a cold part of the
     * allocator, may lie between two of its own). */
    for (uint32_t i = 0; i < n && i < MT_TRIM_SCAN && (k == 0 || i < k + 2); i++)
        if (in_trim(mt_tls_trim, frames[i]))
            k = i + 1;
    if (k == 0)
        return n;
    memmove(frames, frames + k, (n - k) * sizeof *frames);
    *hash = mt_hash_frames(frames, n - k);
    return n - k;
}

uint32_t mt_backtrace_other(const mt_hook_frame *start, mt_walk_memo *memo, uint64_t *frames,
                            uint32_t depth, bool *truncated, uint64_t *hash, bool *in_memo)
{
    if (mt_tls_trim)
        return walk_trimmed(start, memo, frames, depth, truncated, hash);
    return walk(start, memo, frames, depth, truncated, hash, in_memo);
}

void mt_backtrace_frames(const mt_walk_memo *memo, uint64_t *frames, uint32_t n)
{
    mt_unwind_frames(memo, frames, n);
}

/* The summary at exit (MEMTOP_LOG=info; a check that found mismatches
 * always says so).  Own walks are counted in check mode only. */
__attribute__((destructor)) static void backtrace_summary(void)
{
    if (!atomic_load_explicit(&g_ready, memory_order_acquire))
        return;
    uint64_t fallback = atomic_load_explicit(&g_fallback, memory_order_relaxed),
             mismatch = atomic_load_explicit(&g_mismatch, memory_order_relaxed);
    switch (mt_g.cfg.unwind) {
    case MT_UNWIND_AUTO:
        mt_log(MT_LOG_INFO, "unwind summary: mode=auto fallback=%llu",
               (unsigned long long)fallback);
        break;
    case MT_UNWIND_CHECK:
        mt_log(mismatch ? MT_LOG_WARN : MT_LOG_INFO,
               "unwind summary: mode=check own=%llu fallback=%llu mismatch=%llu reuse=%llu",
               (unsigned long long)atomic_load_explicit(&g_own, memory_order_relaxed),
               (unsigned long long)fallback, (unsigned long long)mismatch,
               (unsigned long long)atomic_load_explicit(&g_reuse, memory_order_relaxed));
        break;
    default:
        break;
    }
}
