/* core_allocator_figures.c -- the allocator's own figures
 * (core_allocator_figures.h), glibc's taken at a pace.
 *
 * Why the pace: mallinfo2 walks the free lists of every arena while it
 * holds that arena's lock, so every thread of the target that allocates
 * from the arena waits for the whole walk.  The walk grows with the heap's
 * free chunks: a thread allocating beside it was held 1.5 ms with 65,536
 * live blocks of the bench's sizes and 9 to 14 ms with 1 M
 * (docs/performance.md, "mallinfo2 holds the target").  The publisher asked at every interval
 * and a recording's TOTALS every second, so a service with a large heap
 * stalled twice a second for as long as memtop watched it.  Now a walk is
 * due only MT_MALLINFO_PACE times its own duration after the last one
 * began (and the callers' own periods still apply); in between, callers
 * get the last walk's figures with the time they were taken, which the
 * viewer shows once they are 2 s old or more.  MEMTOP_MALLINFO=off: no
 * walk at all (the figures unknown), for a program that cannot wait even
 * that rarely.
 *
 * Threads: the publisher and the recording's writer.  Whoever finds a
 * walk due and none running walks (an exchange on `walking`, acquire);
 * the other takes the last figures without waiting.  The figures and
 * their time are one set under a seqlock (`seq`, odd while written).
 */
#define _GNU_SOURCE
#include "core_allocator_figures.h"

#include "alloc_jemalloc.h"
#include "alloc_stats.h"
#include "hook_real_alloc.h"

#include "core_clock.h"
#include "core_spinlock.h"
#include "core_state.h"
#include "shm_layout.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>

static struct {
    _Atomic bool walking;
    _Atomic uint64_t next_ns;            /* when the next walk is due (0: now) */
    _Atomic uint64_t seq;                /* odd while the figures below are written */
    _Atomic uint64_t held, inuse, at_ns; /* at_ns 0: no walk yet */
} g_mi;

static void store_figures(uint64_t held, uint64_t inuse, uint64_t at_ns)
{
    uint64_t s = atomic_load_explicit(&g_mi.seq, memory_order_relaxed);
    atomic_store_explicit(&g_mi.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* odd before the figures */
    atomic_store_explicit(&g_mi.held, held, memory_order_relaxed);
    atomic_store_explicit(&g_mi.inuse, inuse, memory_order_relaxed);
    atomic_store_explicit(&g_mi.at_ns, at_ns, memory_order_relaxed);
    atomic_store_explicit(&g_mi.seq, s + 2, memory_order_release);
}

static void load_figures(uint64_t *held, uint64_t *inuse, uint64_t *at_ns)
{
    for (unsigned spins = 0;; mt_spin_wait(spins++)) {
        uint64_t s = atomic_load_explicit(&g_mi.seq, memory_order_acquire);
        *held = atomic_load_explicit(&g_mi.held, memory_order_relaxed);
        *inuse = atomic_load_explicit(&g_mi.inuse, memory_order_relaxed);
        *at_ns = atomic_load_explicit(&g_mi.at_ns, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire); /* the figures before seq again */
        if (!(s & 1) && atomic_load_explicit(&g_mi.seq, memory_order_relaxed) == s)
            return;
    }
}

/* One walk; the next is due MT_MALLINFO_PACE times its duration later. */
static void walk(void)
{
    uint64_t t0 = mt_now_precise_ns();
    struct mallinfo2 mi = mallinfo2();
    uint64_t t1 = mt_now_precise_ns();
    store_figures(mi.arena + mi.hblkhd, mi.uordblks + mi.hblkhd, t0 ? t0 : 1);
    atomic_store_explicit(&g_mi.next_ns, t0 + (t1 - t0) * MT_MALLINFO_PACE, memory_order_relaxed);
}

static bool due(uint64_t now)
{
    return now >= atomic_load_explicit(&g_mi.next_ns, memory_order_relaxed);
}

/* glibc's figures as of *at_ns: a new walk when one is due at `now` and no
 * other thread is in one, else the last walk's (unknown, as of now, before
 * the first). */
static void mallinfo_paced(uint64_t now, uint64_t *held, uint64_t *inuse, uint64_t *at_ns)
{
    if (due(now) && !atomic_exchange_explicit(&g_mi.walking, true, memory_order_acquire)) {
        if (due(now)) /* again: a walk that just ended set next_ns (its release, our acquire) */
            walk();
        atomic_store_explicit(&g_mi.walking, false, memory_order_release);
    }
    load_figures(held, inuse, at_ns);
    if (!*at_ns) {
        *held = *inuse = MT_UNKNOWN;
        *at_ns = now;
    }
}

void mt_allocator_bytes(uint64_t *held, uint64_t *inuse, uint64_t *at_ns)
{
    *held = *inuse = MT_UNKNOWN;
    *at_ns = mt_now_precise_ns();
    if (mt_je_main_bytes(held, inuse))
        return; /* a hooked jemalloc: its resident and allocated bytes */
    if (mt_alloc_stats_main(held, inuse))
        return; /* tcmalloc's or mimalloc's, as the publisher last asked */
    if (mt_real.is_glibc && !mt_g.cfg.mallinfo_off) /* off: unknown, no walk ever */
        mallinfo_paced(*at_ns, held, inuse, at_ns);
}

void mt_allocator_figures_child_reset(void)
{
    atomic_store_explicit(&g_mi.walking, false, memory_order_relaxed);
    atomic_store_explicit(&g_mi.next_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&g_mi.seq, 0, memory_order_relaxed); /* a write cut by the fork */
    atomic_store_explicit(&g_mi.at_ns, 0, memory_order_relaxed);
}
