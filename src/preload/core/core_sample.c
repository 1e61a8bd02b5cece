/* core_sample.c -- the sampler's slow parts: random distances, the
 * address filter in front of the live-block table (core_sample.h). */
#include "core_sample.h"

#include "core_os_memory.h"
#include "core_state.h"
#include "core_hash.h"
#include "sample_math.h"

_Atomic(_Atomic uint8_t *) mt_sfilter;
const uint8_t mt_sfilter_closed[1] = {UINT8_MAX};

bool mt_sample_init(void)
{
    if (!mt_g.cfg.sample_rate)
        return true;
    _Atomic uint8_t *f = mt_os_alloc((size_t)1 << MT_SFILTER_BITS);
    /* Before MT_ST_READY.  seq_cst: a store-then-load pair with
     * mt_boot_alloc's (mt_boot_pin_all, CONCURRENCY.md "The sampling
     * filter"). */
    atomic_store_explicit(&mt_sfilter, f, memory_order_seq_cst);
    if (f) /* free(NULL) and realloc's NULL leave the fast paths; slot 0 is
            * also the one a closed gate reads (mt_tls_hot.sfilter_mask) */
        mt_sfilter_pin(NULL);
    return f != NULL;
}

void mt_sfilter_pin(const void *p)
{
    atomic_store_explicit(&mt_sfilter_slots()[mt_sfilter_slot(p)], UINT8_MAX, memory_order_relaxed);
}

/* Saturating: a slot that reached 255 stays set for good (a slower path
 * for the addresses that hash there, never a missed block). */
void mt_sfilter_add(const void *p)
{
    _Atomic uint8_t *c = &mt_sfilter_slots()[mt_sfilter_slot(p)];
    uint8_t v = atomic_load_explicit(c, memory_order_relaxed);
    while (v != UINT8_MAX &&
           !atomic_compare_exchange_weak_explicit(c, &v, (uint8_t)(v + 1), memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

void mt_sfilter_del(const void *p)
{
    _Atomic uint8_t *c = &mt_sfilter_slots()[mt_sfilter_slot(p)];
    uint8_t v = atomic_load_explicit(c, memory_order_relaxed);
    while (v != 0 && v != UINT8_MAX &&
           !atomic_compare_exchange_weak_explicit(c, &v, (uint8_t)(v - 1), memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
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
    _Atomic uint8_t *f = mt_sfilter_slots();
    if (MT_UNLIKELY(t->transient) || !f) {
        mt_sample_disarm();
        return;
    }
    mt_tls_h.held_left = left;
    mt_tls_h.held_filter = f;
}

/* Reached through hook_enter only (tracking ready, so the filter is set
 * if the mode is sampled; the fast paths closed, their values held), or by
 * the unit tests. */
bool mt_sample_skip(mt_thread *t, size_t size)
{
    mt_exact_add(&t->exact_allocs, 1);
    mt_exact_add(&t->exact_bytes, size);
    int64_t left = mt_tls_h.held_left;
    if (left == MT_SAMPLE_DISARMED) /* memoryless: a fresh distance is as good */
        left = draw(t);
    bool skip = size < (uint64_t)left; /* left >= 1 */
    arm(t, skip ? left - (int64_t)size : draw(t));
    return skip;
}

void mt_sample_arm(mt_thread *t)
{
    int64_t left = mt_tls_h.held_left;
    if (left == MT_SAMPLE_DISARMED || !mt_tls_h.held_filter)
        arm(t, left == MT_SAMPLE_DISARMED ? draw(t) : left);
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
