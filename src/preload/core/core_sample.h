/* core_sample.h -- sampled tracking (MEMTOP_SAMPLE=R, docs/sampling.md).
 *
 * Each thread counts down the bytes it allocates; when the count crosses
 * zero the allocation is sampled (tracked in full: backtrace, trace
 * counters with the weights of sample_weight.h, the live-block table) and
 * a new distance is drawn from an exponential distribution of mean R.
 * The distances of all threads together make a Poisson process over the
 * bytes allocated, so a block of s bytes is sampled with probability
 * 1 - exp(-s/R) whatever came before it.  An unsampled allocation costs
 * the countdown and its branch, plus the exact per-thread counts.
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

#define MT_SFILTER_BITS 18u /* 256 KiB of slots, mapped only in sampled mode */

/* The filter (NULL in exact mode), set at initialisation before tracking
 * becomes ready (published by mt_g.state's release). */
extern _Atomic(_Atomic uint8_t *) mt_sfilter;

/* The fast paths' one gate (hook_enter.h hook_fast_thread): the filter
 * while tracking is ready (mt_g.state == MT_ST_READY) in sampled mode,
 * NULL otherwise (exact mode, before tracking is ready, in a fork child
 * until its first hook restarts it, after tracking was turned off).
 * Opened (release) after mt_g.state became READY, closed before it leaves
 * READY: a hook that loads it non-NULL (acquire) sees tracking ready. */
extern _Atomic(_Atomic uint8_t *) mt_sfast;

/* The filter's slots, or NULL in exact mode.  Relaxed: the slots need no
 * publishing (zeroed by the kernel, then only atomics), and the hooks
 * check that tracking is ready before they use what this gates. */
static inline _Atomic uint8_t *mt_sfilter_slots(void)
{
    return atomic_load_explicit(&mt_sfilter, memory_order_relaxed);
}

static inline size_t mt_sfilter_slot(const void *p)
{
    return (size_t)((((uint64_t)(uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) >>
                    (64u - MT_SFILTER_BITS));
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

/* Opens the fast paths' gate (after mt_g.state became READY; no effect in
 * exact mode) or closes it (before mt_g.state leaves READY). */
void mt_sample_gate(bool open);

/* Before a sampled block enters the table / after it left it. */
void mt_sfilter_add(const void *p);
void mt_sfilter_del(const void *p);

/* A per-thread counter only its thread writes (the publisher reads it):
 * a relaxed load and store, not a locked read-modify-write. */
static inline void mt_exact_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* The unsampled path: counts the allocation exactly, counts down; true
 * if the block is not sampled. */
static inline bool mt_sample_skip(mt_thread *t, size_t size)
{
    mt_exact_add(&t->exact_allocs, 1);
    mt_exact_add(&t->exact_bytes, size);
    t->sample_left -= (int64_t)size;
    return MT_LIKELY(t->sample_left > 0);
}

/* A new distance to the next sample, drawn with the thread's generator. */
void mt_sample_next(mt_thread *t);

/* Seeds t's generator afresh (a new thread state, a fork child) and draws
 * its first distance.  No effect in exact mode. */
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
