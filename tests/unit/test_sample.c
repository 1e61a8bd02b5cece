/* test_sample.c -- unit tests of the sampler (src/preload/core/core_sample.c)
 * and of the weight of a sampled block (src/ipc/sample_weight.h), compiled
 * on their own with a made-up mt_g.
 *
 * The generator is seeded with fixed values here, so every figure below is
 * the same at every run: the bounds are many standard deviations wide
 * (computed in each test) so that they hold for any seed, not only these.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>

#include <cmocka.h>

#include "core_sample.h"
#include "table_ptr.h"
#include "core_state.h"
#include "hook_real_alloc.h"
#include "sample_weight.h"

mt_global mt_g;                               /* the sampler reads only cfg.sample_rate */
MT_TLS mt_tls_hot mt_tls_h = MT_TLS_HOT_INIT; /* core_thread_state.c's */

void mt_threads_exact(mt_exact_totals *out) /* core_thread_state.c's: not tested here */
{
    *out = (mt_exact_totals){0, 0, 0};
}

#define RATE (512u * 1024u)

static mt_thread *new_thread(uint64_t seed)
{
    static mt_thread t;
    memset(&t, 0, sizeof t);
    t.sample_rng = seed;
    mt_sample_next(&t);
    return &t;
}

/* Distances are exponential of mean RATE: the mean of n draws has a
 * standard deviation of RATE / sqrt(n); P(d > RATE) = 1/e. */
static void distance_distribution(void **state)
{
    (void)state;
    uint64_t s = 12345;
    const int n = 1000000;
    double sum = 0;
    int above = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = mt_sample_distance(mt_sample_rand(&s), RATE);
        assert_true(d >= 1);
        sum += (double)d;
        above += d > RATE;
    }
    double sd = RATE / sqrt(n);
    assert_true(fabs(sum / n - RATE) < 6 * sd);
    double q = exp(-1.0), qsd = sqrt(q * (1 - q) / n);
    assert_true(fabs((double)above / n - q) < 6 * qsd);
}

/* The countdown over a stream of equal blocks of size s samples each with
 * probability 1 - exp(-s/RATE) (the Poisson process over bytes). */
static double sampled_share(uint64_t size, int n, uint64_t seed)
{
    mt_thread *t = new_thread(seed);
    int hit = 0;
    for (int i = 0; i < n; i++)
        if (!mt_sample_skip(t, size))
            hit++; /* the next distance is drawn already */
    return (double)hit / n;
}

static void sampling_probability(void **state)
{
    (void)state;
    const uint64_t sizes[] = {64, 4096, RATE / 4, RATE, 2 * RATE};
    const int n = 200000;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double p = mt_sample_prob(sizes[i], RATE);
        double got = sampled_share(sizes[i], n, 777 + i);
        double sd = sqrt(p * (1 - p) / n);
        print_message("size %llu: sampled %.5f, expected %.5f (sd %.5f)\n",
                      (unsigned long long)sizes[i], got, p, sd);
        assert_true(fabs(got - p) < 6 * sd + 1e-9);
    }
}

/* A block of at least 8 times the rate is missed with probability
 * exp(-8) = 0.03 %. */
static void big_blocks_nearly_always(void **state)
{
    (void)state;
    assert_true(sampled_share(8 * RATE, 100000, 99) > 0.999);
    assert_true(sampled_share(64 * RATE, 10000, 98) == 1.0);
}

/* s / p bytes and 1 / p blocks; rate 0: the block itself. */
static void weight_formula(void **state)
{
    (void)state;
    mt_sample_weight w = mt_sample_weigh(1000, 0, 0x1000);
    assert_int_equal(w.bytes, 1000);
    assert_int_equal(w.count, 1);
    const uint64_t sizes[] = {1, 16, 1000, 65536, RATE, 10 * RATE};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t s = sizes[i];
        double p = 1 - exp(-(double)s / RATE);
        double want = (double)s / p;
        w = mt_sample_weigh(s, RATE, 0x7f0000001000ull);
        assert_true(fabs((double)w.bytes - want) <= 0.5 + want * 1e-12);
        /* the count is 1/p rounded up or down: its mean over addresses is 1/p */
        double sum = 0;
        const int n = 100000;
        for (int a = 0; a < n; a++) {
            w = mt_sample_weigh(s, RATE, 0x7f0000000000ull + 16ull * (uint64_t)a);
            assert_true(w.count == (uint64_t)floor(1 / p) || w.count == (uint64_t)ceil(1 / p));
            sum += (double)w.count;
        }
        assert_true(fabs(sum / n - 1 / p) < 6 * 0.5 / sqrt(n) + 1e-9);
    }
    assert_int_equal(mt_sample_weigh(0, RATE, 0x1000).bytes, 0);
    assert_int_equal(mt_sample_weigh(10 * RATE, RATE, 0x1000).count, 1); /* p ~ 1 - 5e-5 */
}

/* The estimate of the bytes of a stream of random blocks is unbiased: the
 * sum of the weights of the sampled blocks is within 6 standard
 * deviations, sqrt(sum s^2 (1-p)/p), of the true sum. */
static void estimate_unbiased(void **state)
{
    (void)state;
    mt_thread *t = new_thread(4242);
    uint64_t r = 17, truth = 0;
    double est = 0, var = 0;
    for (int i = 0; i < 2000000; i++) {
        uint64_t s = 16 + mt_sample_rand(&r) % 65536;
        truth += s;
        double p = mt_sample_prob(s, RATE);
        var += (double)s * (double)s * (1 - p) / p;
        if (!mt_sample_skip(t, s)) {
            est += (double)mt_sample_weigh(s, RATE, 0x10000 + 16ull * (uint64_t)i).bytes;
        }
    }
    print_message("true %llu, estimated %.0f, sd %.0f (%.2f %%)\n", (unsigned long long)truth, est,
                  sqrt(var), 100 * sqrt(var) / (double)truth);
    assert_true(fabs(est - (double)truth) < 6 * sqrt(var));
    assert_int_equal(atomic_load(&t->exact_allocs), 2000000);
    assert_int_equal(atomic_load(&t->exact_bytes), truth);
}

/* The filter: set while a sampled block may be live at the address, never
 * clear while one is; a slot that saturates stays set. */
static void filter(void **state)
{
    (void)state;
    char *a = (char *)0x7f0000010000ull;
    assert_false(mt_sfilter_maybe(a));
    mt_sfilter_add(a);
    assert_true(mt_sfilter_maybe(a));
    mt_sfilter_add(a);
    mt_sfilter_del(a);
    assert_true(mt_sfilter_maybe(a));
    mt_sfilter_del(a);
    assert_false(mt_sfilter_maybe(a));
    for (int i = 0; i < 300; i++)
        mt_sfilter_add(a);
    for (int i = 0; i < 300; i++)
        mt_sfilter_del(a);
    assert_true(mt_sfilter_maybe(a)); /* saturated: a slower path from now on, never wrong */
    int set = 0;
    for (uint64_t i = 1; i < 4096; i++)
        set += mt_sfilter_maybe(a + 16 * i);
    assert_true(set < 16); /* other addresses mostly pass */
}

/* Every slot of generation g: its bit is set exactly when its count is
 * not 0 (free's fast path reads the bit, the slow paths keep the count). */
static void assert_bits_match(mt_sfgen g)
{
    for (size_t i = 0; i <= g.mask; i++)
        if (mt_sfilter_bit(g.bits, i) != (atomic_load(&g.slots[i]) != 0))
            fail_msg("slot %zu: bit %d, count %u", i, mt_sfilter_bit(g.bits, i),
                     (unsigned)atomic_load(&g.slots[i]));
}

/* Random adds and dels of addresses whose slots share one bit word, and
 * the same slots across threads (the addresses differ only above bit 31,
 * which the hash ignores), one thread or several at once: while a
 * thread's block is counted its bit is set, whatever the others do to the
 * same slot and word (their 0 <-> 1 moves interleave), and at the end
 * every bit equals "count > 0". */
enum { BITS_THREADS = 4, BITS_ADDRS = 8, BITS_STEPS = 1000000 };
static uintptr_t g_bit_addrs[BITS_ADDRS]; /* low 32 bits: distinct slots, one word */

static char *bit_addr(uintptr_t k, size_t j)
{
    return (char *)(g_bit_addrs[j] + (k << 32));
}

static void *bits_worker(void *arg)
{
    uintptr_t k = (uintptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (k + 1);
    bool live[BITS_ADDRS] = {false};
    long bad = 0;
    for (int s = 0; s < BITS_STEPS; s++) {
        size_t j = (size_t)(mt_sample_rand(&rng) % BITS_ADDRS);
        if (live[j])
            mt_sfilter_del(bit_addr(k, j));
        else
            mt_sfilter_add(bit_addr(k, j));
        live[j] = !live[j];
        for (size_t m = 0; m < BITS_ADDRS; m++) /* the live ones stay visible */
            bad += live[m] && !mt_sfilter_maybe(bit_addr(k, m));
    }
    for (size_t j = 0; j < BITS_ADDRS; j++)
        if (live[j])
            mt_sfilter_del(bit_addr(k, j));
    return (void *)bad;
}

/* BITS_ADDRS addresses (below 4 GiB) whose slots in g are distinct, in one
 * bit word, and clear. */
static void pick_bit_addrs(mt_sfgen g)
{
    size_t n = 0, word = SIZE_MAX;
    for (uintptr_t a = 0x10000010; n < BITS_ADDRS; a += 16) {
        size_t i = mt_sfilter_slot((void *)a) & g.mask;
        if (atomic_load(&g.slots[i]) || (word != SIZE_MAX && i / 64 != word))
            continue;
        bool dup = false;
        for (size_t m = 0; m < n; m++)
            dup |= (mt_sfilter_slot((void *)g_bit_addrs[m]) & g.mask) == i;
        if (dup)
            continue;
        word = i / 64;
        g_bit_addrs[n++] = 0x7d0000000000ull + a;
    }
}

static void filter_bits_match(void **state)
{
    (void)state;
    mt_sfgen g = mt_sfilter_now();
    pick_bit_addrs(g);
    assert_null(bits_worker((void *)0));
    assert_bits_match(g);
    pthread_t th[BITS_THREADS];
    for (uintptr_t k = 0; k < BITS_THREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, bits_worker, (void *)(k + 1)), 0);
    long bad = 0;
    for (int k = 0; k < BITS_THREADS; k++) {
        void *r;
        pthread_join(th[k], &r);
        bad += (long)r;
    }
    assert_int_equal(bad, 0);
    assert_bits_match(g);
    for (size_t j = 0; j < BITS_ADDRS; j++) /* all gone: their bits were cleared */
        assert_false(mt_sfilter_maybe(bit_addr(0, j)));
}

/* The generation for a number of live sampled blocks: the smallest with
 * at least MT_SFILTER_SPARSE slots per block, capped at MT_SFILTER_BITS. */
static void filter_bits(void **state)
{
    (void)state;
    assert_int_equal(mt_sfilter_bits_for(0), 14);
    assert_int_equal(mt_sfilter_bits_for(256), 14);
    assert_int_equal(mt_sfilter_bits_for(257), 16);
    assert_int_equal(mt_sfilter_bits_for(1024), 16);
    assert_int_equal(mt_sfilter_bits_for(1025), 18);
    assert_int_equal(mt_sfilter_bits_for(4097), 20);
    assert_int_equal(mt_sfilter_bits_for(UINT64_MAX), MT_SFILTER_BITS);
}

/* Growth: live sampled blocks in the table (its sampled inserts count
 * them) beyond a generation's share make a larger one, filled from the
 * table; every generation still sees every live block, and forgets the
 * removed ones (a count never below the truth: core_sample.c). */
static void filter_grows(void **state)
{
    (void)state;
    mt_sfgen first = mt_sfilter_now();
    enum { N = 6000 };
    uintptr_t base = 0x7e0000000000ull;
    mt_block b = {.size = 32, .birth_ns = 1000000, .trace = 1}, out;
    for (uintptr_t i = 0; i < N; i++) {
        assert_int_equal(mt_ptr_insert_sampled(base + 48 * i, &b, &out), MT_INSERT_NEW);
        mt_sfilter_grow();
    }
    mt_sfgen now = mt_sfilter_now();
    assert_int_equal(now.mask, (1u << MT_SFILTER_BITS) - 1); /* 6000 > 4096: the largest */
    assert_int_equal(first.mask, (1u << MT_SFILTER_BITS_MIN) - 1);
    for (uintptr_t i = 0; i < N; i++) {
        assert_true(mt_sfilter_maybe_in(first, (void *)(base + 48 * i)));
        assert_true(mt_sfilter_maybe_in(now, (void *)(base + 48 * i)));
    }
    for (uintptr_t i = 0; i < N; i += 2)
        assert_true(mt_ptr_remove_sampled(base + 48 * i, &out));
    int set = 0;
    for (uintptr_t i = 0; i < N; i++) {
        if (i % 2) {
            assert_true(mt_sfilter_maybe_in(first, (void *)(base + 48 * i)));
            assert_true(mt_sfilter_maybe_in(now, (void *)(base + 48 * i)));
        } else {
            set += mt_sfilter_maybe_in(now, (void *)(base + 48 * i));
        }
    }
    assert_true(set < N / 2 / 50); /* the large one: ~0.3 % of its slots set */
    for (uintptr_t i = 1; i < N; i += 2)
        assert_true(mt_ptr_remove_sampled(base + 48 * i, &out));
}

static void *g_early_boot; /* a boot block made before the filter existed */

/* free's fast path tests neither NULL nor the boot arena (hook_libc.c):
 * their slots are pinned, for blocks made before the filter existed
 * (mt_boot_pin_all) and after (mt_boot_alloc); the rest of the arena is
 * not. */
static void filter_pins(void **state)
{
    (void)state;
    assert_true(mt_sfilter_maybe(NULL));
    assert_non_null(g_early_boot);
    assert_true(mt_sfilter_maybe(g_early_boot));
    for (int i = 0; i < 100; i++) {
        char *late = mt_boot_alloc(24 + (size_t)i, i % 2 ? 16 : 64);
        assert_non_null(late);
        assert_true(mt_sfilter_maybe(late));
        mt_sfilter_del(late); /* pinned for good */
        assert_true(mt_sfilter_maybe(late));
    }
    int set = 0;
    for (size_t off = 64 * 1024; off < 128 * 1024; off += 16)
        set += mt_sfilter_maybe(mt_boot_arena + off);
    assert_true(set < 64); /* not the whole arena: ~4k granules, a handful pinned */
}

/* A countdown at 0 or below that is not MT_SAMPLE_DISARMED: what a fast
 * path leaves when a signal handler's calls ran between its test and its
 * subtraction (hook_enter.h).  The slow path must sample again from there
 * as from a fresh distance: blocks of RATE / 8 bytes each sampled with
 * probability 1 - exp(-1/8), whatever negative value the countdown held
 * (an unsigned comparison skipped every one of them, and the countdown only
 * fell further). */
static void crossed_countdown(void **state)
{
    (void)state;
    const int64_t crossed[] = {0, -1, -(int64_t)RATE, INT64_MIN + 1};
    const uint64_t size = RATE / 8;
    const int n = 20000;
    double p = mt_sample_prob(size, RATE), sd = sqrt(p * (1 - p) / n);
    for (unsigned i = 0; i < sizeof crossed / sizeof crossed[0]; i++) {
        mt_thread *t = new_thread(4242 + i);
        int hit = 0;
        for (int k = 0; k < n; k++) {
            if (k % 100 == 0)
                mt_tls_h.held_left = crossed[i]; /* again and again */
            hit += !mt_sample_skip(t, size);
            assert_true(mt_tls_h.held_left >= 1); /* armed with a real distance */
        }
        double got = (double)hit / n;
        print_message("countdown %lld: sampled %.4f, expected %.4f\n", (long long)crossed[i], got,
                      p);
        assert_true(fabs(got - p) < 6 * sd);
    }
    mt_sample_disarm();
}

int main(void)
{
    mt_g.cfg.sample_rate = RATE;
    g_early_boot = mt_boot_alloc(40, 16);
    if (!mt_sample_init() || !mt_ptrs_init())
        return 1;
    mt_boot_pin_all();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distance_distribution),
        cmocka_unit_test(sampling_probability),
        cmocka_unit_test(big_blocks_nearly_always),
        cmocka_unit_test(crossed_countdown),
        cmocka_unit_test(weight_formula),
        cmocka_unit_test(estimate_unbiased),
        cmocka_unit_test(filter),
        cmocka_unit_test(filter_bits_match),
        cmocka_unit_test(filter_bits),
        cmocka_unit_test(filter_grows), /* before filter_pins: pins carried into new generations */
        cmocka_unit_test(filter_pins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
