/* core_sample.c -- the sampler's slow parts: random distances, the
 * address filter in front of the live-block table (core_sample.h). */
#include "core_sample.h"

#include "core_os_memory.h"
#include "core_state.h"
#include "core_hash.h"
#include "core_assert.h"
#include "core_spinlock.h"
#include "hook_real_alloc.h"
#include "table_ptr.h"
#include "sample_math.h"

_Atomic(_Atomic uint8_t *) mt_sfilter;
const uint64_t mt_sfilter_closed[1] = {UINT64_MAX};

/* Generations.  A small heap's few live sampled blocks get a small filter,
 * one that stays in cache (the fast path's load is its only miss); when
 * they outgrow it (more than 1/MT_SFILTER_SPARSE of its slots),
 * mt_sfilter_grow makes a larger one, filled from the block table.  A
 * thread picks the newest up in its next slow path (arm), so others read
 * older ones for a while: every generation ever made stays mapped, and
 * add/del update all of them.
 *
 * The invariant, for every generation g < g_ngens and every slot i:
 *     g.slots[i] >= the live sampled blocks in the table hashing to i
 * (an undercount would let a sampled block's free pass unseen).  It holds
 * because the table and the filter change together, under the block's
 * shard lock (mt_sfilter_add/del are called from table_ptr.c inside it),
 * and g_ngens changes only under every shard lock, after the new
 * generation was filled from the table under those same locks: each block
 * is counted in a new generation exactly once, by the fill or by its add
 * after it, and removed once, by its del.  Readers (mt_sfilter_now) see a
 * generation only after its pins too (g_now, release). */
#define MT_SFILTER_GENS ((MT_SFILTER_BITS - MT_SFILTER_BITS_MIN) / 2u + 1u)
static mt_sfgen g_gens[MT_SFILTER_GENS]; /* written before g_ngens covers them */
static _Atomic unsigned g_ngens;         /* see above: stored under every shard lock */
static _Atomic unsigned g_now;           /* the newest pinned generation: readers' */
static _Atomic uint64_t g_live;          /* sampled blocks in the table */
static _Atomic uint64_t g_grow_at;       /* g_live above this: grow (UINT64_MAX: never) */
static _Atomic bool g_growing;           /* one grower at a time (never cleared if mmap failed) */

/* Counts and bits.  A slot's count is 0, 1..CNT_MAX live sampled blocks
 * (at most: the invariant above), CNT_SAT (saturated or pinned: set for
 * good), or CNT_LOCK | 0 or 1 while a thread moves it between 0 and 1 and
 * its bit with it.  Free's fast path reads only the bit (hook_enter.h), so
 * the invariant it needs is "no clear bit while a live sampled block hashes
 * there": bit i is set exactly while count i is not 0.  Counts of
 * different blocks table shards may share a bit word, so the bits change
 * by atomic RMW (fetch_or, fetch_and: relaxed, as the counts; why the
 * free sees them: CONCURRENCY.md), and the two transitions of one slot,
 * 0 -> 1 (count, then bit set) and 1 -> 0 (count, then bit clear), must
 * not interleave (a clear after another thread's set would leave a live
 * block's bit clear), hence the lock: a CAS to CNT_LOCK | new (acquire),
 * the bit, a store of new (release); other counters of that slot wait (a
 * few instructions, under a shard lock: never across a fork, whose
 * prepare takes every shard lock).  A pin is no transition: it moves any
 * unlocked count to CNT_SAT (which it never leaves) and then sets the bit
 * (a saturated count's bit is set already, or being set by its pinner). */
#define CNT_LOCK 0x80u
#define CNT_SAT 0xffu
#define CNT_MAX 0x7eu

/* Slot c's count once no transition holds it (CNT_SAT: never held). */
static uint8_t cnt_wait(_Atomic uint8_t *c)
{
    uint8_t v;
    for (unsigned spins = 0;
         ((v = atomic_load_explicit(c, memory_order_acquire)) & CNT_LOCK) && v != CNT_SAT; spins++)
        mt_spin_wait(spins);
    return v;
}

static void bit_set(mt_sfgen g, size_t i)
{
    atomic_fetch_or_explicit(&g.bits[i / 64], (uint64_t)1 << (i % 64), memory_order_relaxed);
}

/* Moves count i from `from` to `to` (both 0 or 1, they differ) with its
 * bit; false if the count was not `from` (reload and retry). */
static bool cnt_flip(mt_sfgen g, size_t i, uint8_t from, uint8_t to)
{
    _Atomic uint8_t *c = &g.slots[i];
    if (!atomic_compare_exchange_strong_explicit(c, &from, (uint8_t)(CNT_LOCK | to),
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    if (to)
        bit_set(g, i);
    else
        atomic_fetch_and_explicit(&g.bits[i / 64], ~((uint64_t)1 << (i % 64)),
                                  memory_order_relaxed);
    atomic_store_explicit(c, to, memory_order_release);
    return true;
}

static void slot_pin(mt_sfgen g, size_t i)
{
    _Atomic uint8_t *c = &g.slots[i];
    uint8_t v = cnt_wait(c);
    while (v != CNT_SAT && !atomic_compare_exchange_weak_explicit(
                               c, &v, (uint8_t)CNT_SAT, memory_order_relaxed, memory_order_relaxed))
        v = cnt_wait(c);
    bit_set(g, i);
}

/* Saturating: a slot that reached CNT_SAT stays set for good (a slower
 * path for the addresses that hash there, never a missed block).  A pin
 * saturates before it sets the bit: an add that sees CNT_SAT sets the bit
 * itself, so that no race with a pin leaves p's bit clear. */
static void slot_add(mt_sfgen g, const void *p)
{
    size_t i = mt_sfilter_slot(p) & g.mask;
    _Atomic uint8_t *c = &g.slots[i];
    for (;;) {
        uint8_t v = cnt_wait(c);
        if (v == CNT_SAT) {
            bit_set(g, i);
            return;
        }
        if (v == 0 ? cnt_flip(g, i, 0, 1)
                   : atomic_compare_exchange_weak_explicit(
                         c, &v, v == CNT_MAX ? (uint8_t)CNT_SAT : (uint8_t)(v + 1),
                         memory_order_relaxed, memory_order_relaxed))
            return;
    }
}

static void slot_del(mt_sfgen g, const void *p)
{
    size_t i = mt_sfilter_slot(p) & g.mask;
    _Atomic uint8_t *c = &g.slots[i];
    for (;;) {
        uint8_t v = cnt_wait(c);
        /* the invariant ("Generations"): p was counted, so its bit is set */
        MT_ASSERT(v != 0 && mt_sfilter_bit(g.bits, i));
        if (v == 0 || v == CNT_SAT)
            return;
        if (v == 1 ? cnt_flip(g, i, 1, 0)
                   : atomic_compare_exchange_weak_explicit(
                         c, &v, (uint8_t)(v - 1), memory_order_relaxed, memory_order_relaxed))
            return;
    }
}

/* Maps a generation of 2^bits slots: its bits, then its counts (zeroed). */
static bool gen_map(mt_sfgen *g, unsigned bits)
{
    size_t n = (size_t)1 << bits;
    char *m = mt_os_alloc(n / 8 + n);
    if (!m)
        return false;
    *g = (mt_sfgen){(_Atomic uint8_t *)(void *)(m + n / 8), (_Atomic uint64_t *)(void *)m,
                    (uint32_t)n - 1};
    return true;
}

unsigned mt_sfilter_bits_for(uint64_t live)
{
    unsigned bits = MT_SFILTER_BITS_MIN;
    while (bits < MT_SFILTER_BITS && (live > ((uint64_t)1 << bits) / MT_SFILTER_SPARSE))
        bits += 2;
    return bits;
}

static uint64_t grow_at(unsigned bits)
{
    return bits >= MT_SFILTER_BITS ? UINT64_MAX : ((uint64_t)1 << bits) / MT_SFILTER_SPARSE;
}

mt_sfgen mt_sfilter_now(void)
{
    return g_gens[atomic_load_explicit(&g_now, memory_order_acquire)];
}

bool mt_sample_init(void)
{
    if (!mt_g.cfg.sample_rate)
        return true;
    if (!gen_map(&g_gens[0], MT_SFILTER_BITS_MIN))
        return false;
    _Atomic uint8_t *f = g_gens[0].slots;
    atomic_store_explicit(&g_grow_at, grow_at(MT_SFILTER_BITS_MIN), memory_order_relaxed);
    atomic_store_explicit(&g_ngens, 1, memory_order_seq_cst); /* before mt_sfilter: pins see it */
    /* Before MT_ST_READY.  seq_cst: a store-then-load pair with
     * mt_boot_alloc's (mt_boot_pin_all, CONCURRENCY.md "The sampling
     * filter"). */
    atomic_store_explicit(&mt_sfilter, f, memory_order_seq_cst);
    /* free(NULL) and realloc's NULL leave the fast paths; slot 0 is also
     * the one a closed gate reads (mt_tls_hot.sfilter_mask) */
    mt_sfilter_pin(NULL);
    return true;
}

void mt_sfilter_pin(const void *p)
{
    /* seq_cst: the other side of mt_sfilter_grow's store (a Dekker pair
     * with mt_boot_pin_all's load of g_boot_used there) */
    unsigned n = atomic_load_explicit(&g_ngens, memory_order_seq_cst);
    for (unsigned g = 0; g < n; g++)
        slot_pin(g_gens[g], mt_sfilter_slot(p) & g_gens[g].mask);
}

/* Under p's shard lock: g_ngens is stable (relaxed). */
void mt_sfilter_add(const void *p)
{
    unsigned n = atomic_load_explicit(&g_ngens, memory_order_relaxed);
    for (unsigned g = 0; g < n; g++)
        slot_add(g_gens[g], p);
    atomic_fetch_add_explicit(&g_live, 1, memory_order_relaxed);
}

void mt_sfilter_del(const void *p)
{
    unsigned n = atomic_load_explicit(&g_ngens, memory_order_relaxed);
    for (unsigned g = 0; g < n; g++)
        slot_del(g_gens[g], p);
    atomic_fetch_sub_explicit(&g_live, 1, memory_order_relaxed);
}

static void fill_one(uintptr_t p, void *ctx)
{
    slot_add(*(const mt_sfgen *)ctx, (const void *)p);
}

static unsigned gen_bits(unsigned g)
{
    return 32u - (unsigned)__builtin_clz(g_gens[g].mask);
}

/* Makes generation g the readers' once its pins are in (NULL's, the boot
 * arena's: its slots are written by add/del already, g < g_ngens). */
static void publish(unsigned g)
{
    mt_sfilter_pin(NULL);
    mt_boot_pin_all();
    atomic_store_explicit(&g_now, g, memory_order_release); /* readers: filled and pinned */
    atomic_store_explicit(&g_grow_at, grow_at(gen_bits(g)), memory_order_relaxed);
}

/* Makes generation n (bits) and fills it; false if it cannot be mapped. */
static bool grow_to(unsigned n, unsigned bits)
{
    if (!gen_map(&g_gens[n], bits))
        return false;
    mt_ptrs_lock_all(); /* no add or del meanwhile: "Generations" */
    mt_ptr_visit_ptrs_locked(fill_one, &g_gens[n]);
    /* seq_cst: a Dekker pair with mt_boot_alloc (its bump, then
     * mt_sfilter_pin's load of g_ngens) against mt_boot_pin_all's load of
     * g_boot_used in publish: every boot block is pinned there or here */
    atomic_store_explicit(&g_ngens, n + 1, memory_order_seq_cst);
    mt_ptrs_unlock_all();
    publish(n);
    return true;
}

void mt_sfilter_grow(void)
{
    uint64_t live = atomic_load_explicit(&g_live, memory_order_relaxed);
    if (MT_LIKELY(live <= atomic_load_explicit(&g_grow_at, memory_order_relaxed)))
        return;
    bool no = false;
    if (!atomic_compare_exchange_strong_explicit(&g_growing, &no, true, memory_order_acquire,
                                                 memory_order_relaxed))
        return; /* another thread grows it */
    unsigned n = atomic_load_explicit(&g_ngens, memory_order_relaxed);
    unsigned bits = mt_sfilter_bits_for(live);
    if (n < MT_SFILTER_GENS && bits > gen_bits(n - 1)) {
        if (!grow_to(n, bits))
            return; /* no memory: g_growing stays set, the filter as it is (more slow frees) */
    } else {
        publish(n - 1); /* a fork child whose parent's grower stopped half way */
    }
    atomic_store_explicit(&g_growing, false, memory_order_release);
}

void mt_sfilter_fork_child(void)
{
    atomic_store_explicit(&g_growing, false, memory_order_relaxed);
}

bool mt_sample_exact_totals(mt_exact_totals *out)
{
    if (!mt_g.cfg.sample_rate)
        return false;
    mt_threads_exact(out);
    out->frees += atomic_load_explicit(&mt_g.nested_frees, memory_order_relaxed);
    return true;
}

uint64_t mt_sample_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

int64_t mt_sample_distance(uint64_t r, uint64_t rate)
{
    double u = ((double)(r >> 11) + 1.0) * 0x1p-53; /* (0, 1] */
    double d = -mt_ln(u) * (double)rate;
    if (d < 1.0)
        return 1;
    if (d > 0x1p62)
        return INT64_C(1) << 62;
    return (int64_t)d;
}

static int64_t draw(mt_thread *t)
{
    return mt_sample_distance(mt_sample_rand(&t->sample_rng), mt_g.cfg.sample_rate);
}

void mt_sample_next(mt_thread *t)
{
    mt_tls_h.held_left = draw(t);
}

/* Arms this thread's fast paths with left bytes to its next sample, if it
 * may: its record is its own (not transient) and the filter is there. */
static void arm(mt_thread *t, int64_t left)
{
    mt_sfgen g = mt_sfilter_now();
    if (MT_UNLIKELY(t->transient) || !g.slots) {
        mt_sample_disarm();
        return;
    }
    mt_tls_h.held_left = left;
    mt_tls_h.held_filter = g.bits;
    mt_tls_h.held_mask = g.mask;
}

/* Reached through hook_enter only (tracking ready, so the filter is set
 * if the mode is sampled; the fast paths closed, their values held), or by
 * the unit tests. */
bool mt_sample_skip(mt_thread *t, size_t size)
{
    mt_exact_add(&t->exact_allocs, 1);
    mt_exact_add(&t->exact_bytes, size);
    int64_t left = mt_tls_h.held_left;
    /* Disarmed (INT64_MIN), or crossed by a signal handler: a fast path
     * whose test passed counts its size down after the handler's calls
     * (hook_enter.h), which may leave 0 or less, never sampled (an
     * unsigned comparison below would skip every call from then on).
     * Memoryless: a fresh distance is as good. */
    if (left <= 0)
        left = draw(t);
    bool skip = size < (uint64_t)left; /* left >= 1 */
    arm(t, skip ? left - (int64_t)size : draw(t));
    return skip;
}

void mt_sample_arm(mt_thread *t)
{
    int64_t left = mt_tls_h.held_left;
    /* also a newer generation (mt_sfilter_grow); left <= 0: see mt_sample_skip */
    if (left <= 0 || mt_tls_h.held_filter != mt_sfilter_now().bits)
        arm(t, left <= 0 ? draw(t) : left);
}

void mt_sample_seed(mt_thread *t)
{
    static _Atomic uint64_t seq; /* distinct seeds for threads seeded in the same tick */
    if (!mt_g.cfg.sample_rate)
        return;
    uint64_t n = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed);
    uint64_t s =
        mt_mix64(__builtin_ia32_rdtsc() ^ (uint64_t)(uintptr_t)t ^ (n * 0x9e3779b97f4a7c15ull));
    t->sample_rng = s ? s : 0x9e3779b97f4a7c15ull; /* xorshift's state must not be 0 */
    mt_sample_disarm();
}
