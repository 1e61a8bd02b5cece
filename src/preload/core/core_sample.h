/* core_sample.h -- sampled tracking (MEMTOP_SAMPLE=R, docs/sampling.md).
 *
 * Each thread counts down the bytes it allocates; when the count crosses
 * zero the allocation is sampled (tracked in full: backtrace, trace
 * counters with the weights of sample_weight.h, the live-block table) and
 * a new distance is drawn from an exponential distribution of mean R.
 * The distances of all threads together make a Poisson process over the
 * bytes allocated, so a block of s bytes is sampled with probability
 * 1 - exp(-s/R) whatever came before it.  An unsampled allocation costs
 * the countdown and its branch, plus the exact per-thread counts.  The
 * countdown lives in the hooks' TLS block (mt_tls_h), where a disarmed
 * thread's value, or one inside memtop, is below every size, so that one
 * comparison is also the fast path's gate (hook_enter.h).  The slow paths
 * run inside memtop, so they use the held values (mt_gate_close).
 *
 * Frees: the live-block table holds only sampled blocks, and a filter in
 * front of it (one byte per address-hash slot: how many live sampled
 * blocks hash there, saturating) lets most frees return without touching
 * the table.  CONCURRENCY.md says why a stale count is only a slower path.
 */
#ifndef MT_SAMPLE_H
#define MT_SAMPLE_H

#include "core_common.h"
#include "core_thread_state.h"

#include <stdbool.h>

/* The filter (NULL in exact mode), set at initialisation before tracking
 * becomes ready (published by mt_g.state's release). */
extern MT_HIDDEN _Atomic(_Atomic uint8_t *) mt_sfilter;

/* The filter's slots, or NULL in exact mode.  Relaxed: the slots need no
 * publishing (zeroed by the kernel, then only atomics), and the hooks
 * check that tracking is ready before they use what this gates. */
static inline _Atomic uint8_t *mt_sfilter_slots(void)
{
    return atomic_load_explicit(&mt_sfilter, memory_order_relaxed);
}

/* A multiplicative hash of the address's low 32 bits (blocks are 16-byte
 * aligned, so bits 4-31 count: 4 GiB windows), two instructions on
 * x86-64 (imul with an immediate, shift).  Addresses that differ only
 * above bit 31 share a slot: a slower free for them, never a wrong one. */
static inline size_t mt_sfilter_slot(const void *p)
{
    return (uint32_t)((uint32_t)(uintptr_t)p * 0x9e3779b1u) >> (32u - MT_SFILTER_BITS);
}

/* False: p is certainly not a live sampled block (f: the filter). */
static inline bool mt_sfilter_maybe_in(_Atomic uint8_t *f, const void *p)
{
    return atomic_load_explicit(&f[mt_sfilter_slot(p)], memory_order_relaxed) != 0;
}

static inline bool mt_sfilter_maybe(const void *p)
{
    return mt_sfilter_maybe_in(mt_sfilter_slots(), p);
}

/* Disarms this thread's fast paths (mt_tls_h, live and held): its next
 * call takes the slow path, which arms them again if it may
 * (mt_sample_skip).  Before the thread's record goes, and in a fork child
 * before tracking restarts; inside memtop or not. */
static inline void mt_sample_disarm(void)
{
    mt_tls_h.held_left = MT_SAMPLE_DISARMED;
    mt_tls_h.held_filter = NULL;
    mt_tls_h.sample_left = MT_SAMPLE_DISARMED;
    mt_tls_h.sfilter_mask = 0; /* sfilter stays valid: slot 0 is saturated */
}

/* Sets p's slot for good (saturated): for the addresses free's fast path
 * must never take, NULL and the boot arena's blocks (hook_real_alloc.c),
 * so that it need not test them.  The filter must exist. */
void mt_sfilter_pin(const void *p);

/* Before a sampled block enters the table / after it left it. */
void mt_sfilter_add(const void *p);
void mt_sfilter_del(const void *p);

/* A per-thread counter only its thread writes (the publisher reads it,
 * relaxed): one add instruction on x86-64, not a locked read-modify-write.
 * One instruction is also whole with respect to a signal handler on the
 * same thread, so the fast paths count without setting mt_tls_in_hook
 * (elsewhere: a relaxed load and store, as the slow paths do under
 * mt_tls_in_hook). */
static inline void mt_exact_add(_Atomic uint64_t *c, uint64_t n)
{
#if defined(__x86_64__)
    __asm__("addq %1, %0" : "+m"(*(uint64_t *)c) : "er"(n));
#else
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
#endif
}

/* The slow paths' countdown (every tracked allocation in sampled mode):
 * counts the allocation exactly, draws a distance first if this thread
 * was disarmed, and arms the thread's fast paths with what is left (a
 * transient record's thread stays disarmed: its TLS counts would reach
 * no total, core_thread_state.h).
 * True if the block is not sampled; false: sampled, the next distance
 * drawn already. */
bool mt_sample_skip(mt_thread *t, size_t size);

/* The slow path of a free in sampled mode: arms this thread's fast paths
 * if they are not (a thread that only frees gets them too). */
void mt_sample_arm(mt_thread *t);

/* A new distance to this thread's next sample (mt_tls_h), drawn with t's
 * generator. */
void mt_sample_next(mt_thread *t);

/* Seeds t's generator afresh (a new thread state, a fork child) and
 * disarms this thread: its next allocation draws the first distance.  No
 * effect in exact mode. */
void mt_sample_seed(mt_thread *t);

/* Sampled mode's exact process totals (every thread record, and the frees
 * counted outside one): false in exact mode, where the traces' sums are
 * exact themselves.  For the publisher and a recording's TOTALS. */
bool mt_sample_exact_totals(mt_exact_totals *out);

/* Maps the filter when MEMTOP_SAMPLE is set; false if it cannot. */
bool mt_sample_init(void);

/* A distance in bytes for a uniform 64-bit random word r: exponential of
 * mean rate, at least 1.  Exposed for the unit tests. */
int64_t mt_sample_distance(uint64_t r, uint64_t rate);

/* The generator (xorshift64*): one step. */
uint64_t mt_sample_rand(uint64_t *state);

#endif
