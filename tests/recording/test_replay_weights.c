/* test_replay_weights.c -- the replay's per-size table of sampled weights
 * (src/tui/replay/replay_weights.c) against mt_sample_weigh itself: the
 * table must give the same weight to the bit for every block, or a replay
 * of a sampled recording no longer equals the target's figures.  Sizes
 * that share a slot (size and size + k * slots), the rate changing under
 * a filled table, sizes 0, 1 and past 2^52 (where the weight's whole part
 * is no longer converted), random keys, and a table that could not be
 * allocated; and weights pinned from before mt_sample_weigh was split in
 * two (commit b06047b), so that a change to the split itself, which both
 * sides share, fails too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "replay_weights.h"
#include "test_xorshift.h"

static void same(mt_rweights *w, uint64_t size, uint64_t rate, uint64_t key)
{
    mt_sample_weight a = mt_rweights_weigh(w, size, rate, key);
    mt_sample_weight b = mt_sample_weigh(size, rate, key);
    if (a.bytes != b.bytes || a.count != b.count)
        fail_msg("size %llu rate %llu key %llx: table %llu B x%llu, direct %llu B x%llu",
                 (unsigned long long)size, (unsigned long long)rate, (unsigned long long)key,
                 (unsigned long long)a.bytes, (unsigned long long)a.count,
                 (unsigned long long)b.bytes, (unsigned long long)b.count);
}

/* Random sizes, mostly small and repeated (hits), some in the same slot
 * (misses that refill it), keys random: every weight as the direct one. */
static void random_sizes(void **state)
{
    (void)state;
    mt_rweights w = {0};
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < 2000000; i++) {
        uint64_t r = test_xorshift(&rng);
        uint64_t size = 1 + (r & 0x3ff) + ((r >> 10) & 3) * MT_RWEIGHTS_SLOTS;
        if ((r >> 12) % 64 == 0)
            size = 1 + (r >> 20) % (64u << 20); /* up to 64 MiB */
        same(&w, size, 4096, test_xorshift(&rng));
    }
    assert_non_null(w.slot);
    mt_rweights_free(&w);
    assert_null(w.slot);
}

/* One size at two rates, alternately: a slot filled at one rate is never
 * used at another. */
static void rate_changes(void **state)
{
    (void)state;
    mt_rweights w = {0};
    static const uint64_t rates[] = {512u << 10, 4096, 1, 1u << 20, 4096};
    uint64_t rng = 7;
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
            for (uint64_t size = 1; size < 3 * MT_RWEIGHTS_SLOTS; size += 97)
                same(&w, size, rates[i], test_xorshift(&rng));
    mt_rweights_free(&w);
}

/* The ends of the range: size 0 (no sample point), 1, sizes where 1 / p
 * passes 2^52 at a small rate's inverse (huge blocks weigh 1), and the
 * largest sizes and rates a file may hold. */
static void edges(void **state)
{
    (void)state;
    mt_rweights w = {0};
    static const uint64_t sizes[] = {
        0, 1, 2, MT_RWEIGHTS_SLOTS, MT_RWEIGHTS_SLOTS + 1, 1ull << 40, UINT64_MAX - 1, UINT64_MAX};
    static const uint64_t rates[] = {1, 4096, 1ull << 62, UINT64_MAX};
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (uint64_t key = 0; key < 64; key++) {
                same(&w, sizes[s], rates[r], key * 0x9e3779b97f4a7c15ull);
                same(&w, sizes[s], rates[r], key * 0x9e3779b97f4a7c15ull); /* a hit */
            }
    mt_sample_weight z = mt_rweights_weigh(&w, 0, 4096, 1);
    assert_int_equal(z.bytes, 0);
    assert_int_equal(z.count, 1);
    mt_rweights_free(&w);
}

/* Weights of the function before its split (b06047b's sample_weight.h),
 * rounding by the key included: {size, rate, key, bytes, count}. */
static void pinned(void **state)
{
    (void)state;
    static const uint64_t want[][5] = {
        {1u, 4096u, 0x1234u, 4097u, 4096u},
        {16u, 4096u, 0xdeadbeefu, 4104u, 256u},
        {100u, 4096u, 0x7u, 4146u, 42u},
        {4095u, 4096u, 0x9e3779b97f4a7c15u, 6479u, 2u},
        {4096u, 4096u, 0x2au, 6480u, 1u},
        {65536u, 4096u, 0x1u, 65536u, 1u},
        {1000u, 524288u, 0xabcdefu, 524788u, 525u},
        {123457u, 524288u, 0x63u, 588437u, 4u},
        {1048576u, 524288u, 0x5u, 1212697u, 1u},
        {24u, 1048576u, 0x5555u, 1048588u, 43691u},
        {3000u, 1048576u, 0xffffffffffffu, 1050077u, 350u},
        {48u, 512u, 0x3u, 536u, 11u},
    };
    mt_rweights w = {0};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        mt_sample_weight d = mt_sample_weigh(want[i][0], want[i][1], want[i][2]);
        mt_sample_weight t = mt_rweights_weigh(&w, want[i][0], want[i][1], want[i][2]);
        assert_int_equal(d.bytes, want[i][3]);
        assert_int_equal(d.count, want[i][4]);
        assert_int_equal(t.bytes, want[i][3]);
        assert_int_equal(t.count, want[i][4]);
    }
    mt_rweights_free(&w);
}

/* Without memory for the table every block is weighed directly. */
static void no_table(void **state)
{
    (void)state;
    mt_rweights w = {.failed = 1};
    uint64_t rng = 99;
    for (int i = 0; i < 10000; i++)
        same(&w, 1 + test_xorshift(&rng) % 100000, 4096, test_xorshift(&rng));
    assert_null(w.slot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_sizes), cmocka_unit_test(rate_changes), cmocka_unit_test(edges),
        cmocka_unit_test(pinned),       cmocka_unit_test(no_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
