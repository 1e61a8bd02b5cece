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
 * blocks hash there, saturating; and one bit per slot, set while its count
 * is not 0, which is what free's fast path reads: 8 times fewer cache
 * lines) lets most frees return without touching the table.
 * CONCURRENCY.md says why a stale bit is only a slower path.
 */
#ifndef MT_SAMPLE_H
#define MT_SAMPLE_H

#include "core_common.h"
#include "core_thread_state.h"

#include <stdbool.h>

/* The filter's first generation (NULL in exact mode), set at
 * initialisation before tracking becomes ready (published by mt_g.state's
 * release); mt_boot_alloc tests it (seq_cst, CONCURRENCY.md "The sampling
 * filter").  The newest generation is mt_sfilter_now's. */
extern MT_HIDDEN _Atomic(_Atomic uint8_t *) mt_sfilter;

/* One generation of the filter: 2^bits byte counters (slots), indexed by
 * i = mt_sfilter_slot(p) & mask (mask = 2^bits - 1), and 2^bits bits
 * (bits: bit i % 64 of word i / 64), bit i set exactly while slots[i] is
 * not 0 (core_sample.c "Counts and bits"). */
typedef struct mt_sfgen {
    _Atomic uint8_t *slots;
    _Atomic uint64_t *bits;
    uint32_t mask;
} mt_sfgen;

/* The newest complete generation (NULL slots in exact mode): what a slow
 * path reads, and what it arms its thread with.  Acquire: its fill. */
mt_sfgen mt_sfilter_now(void);

/* A multiplicative hash of the address's low 32 bits (blocks are 16-byte
 * aligned, so bits 4-31 count: 4 GiB windows), two instructions on
 * x86-64 (imul with an immediate, shift): MT_SFILTER_BITS bits, whose low
 * ones index a smaller generation (product bits 12.. and up, which mix
 * address bits 4 and up).  Addresses that differ only above bit 31 share
 * a slot: a slower free for them, never a wrong one. */
static inline size_t mt_sfilter_slot(const void *p)
{
    return (uint32_t)((uint32_t)(uintptr_t)p * 0x9e3779b1u) >> (32u - MT_SFILTER_BITS);
}

/* Bit i of a generation's bit array (free's fast path reads the same:
 * hook_enter.h hook_fast_free). */
static inline bool mt_sfilter_bit(const _Atomic uint64_t *bits, size_t i)
{
    return (atomic_load_explicit(&bits[i / 64], memory_order_relaxed) >> (i % 64)) & 1;
}

/* False: p is certainly not a live sampled block (g: a generation). */
static inline bool mt_sfilter_maybe_in(mt_sfgen g, const void *p)
{
    return mt_sfilter_bit(g.bits, mt_sfilter_slot(p) & g.mask);
}

static inline bool mt_sfilter_maybe(const void *p)
{
    return mt_sfilter_maybe_in(mt_sfilter_now(), p);
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

/* Sets p's slot for good (saturated) in every generation: for the
 * addresses free's fast path must never take, NULL and the boot arena's
 * blocks (hook_real_alloc.c), so that it need not test them.  The filter
 * must exist. */
void mt_sfilter_pin(const void *p);

/* A sampled block entered the table / left it: every generation's count
 * for p.  Called only by the block table, under p's shard lock (the
 * sampled variants of table_ptr.h), which is what keeps a new
 * generation's fill consistent (core_sample.c "Generations"). */
void mt_sfilter_add(const void *p);
void mt_sfilter_del(const void *p);

/* After a sampled insert, outside every table lock: makes a larger
 * generation if the live sampled blocks outgrew the newest one. */
void mt_sfilter_grow(void);

/* A fork child: a grower the parent had is gone (single-threaded). */
void mt_sfilter_fork_child(void);

/* The bits of the generation that suits live sampled blocks: the
 * smallest of MT_SFILTER_BITS_MIN, +2, ... MT_SFILTER_BITS whose slots
 * are at least MT_SFILTER_SPARSE times live.  Exposed for the unit tests. */
#define MT_SFILTER_BITS_MIN 14u /* 16 KiB of counts, 2 KiB of bits */
#define MT_SFILTER_SPARSE                                                                          \
    64u /* ~1.5 % of the slots set: of unsampled frees, as many take the                           \
         * slow path */
unsigned mt_sfilter_bits_for(uint64_t live);

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
