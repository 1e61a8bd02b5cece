/* test_ptr_spread.c -- the block table spreads real allocation patterns.
 *
 * The table (src/preload/table/table_ptr.c) is bucketized cuckoo hashing:
 * a hash that maps many keys near one another fills their buckets, pushes
 * records to their second bucket (a second cache line per lookup) and
 * makes inserts walk eviction chains or spill to the side table.  Equal-size
 * blocks sit at a fixed stride, so their keys are arithmetic runs; a hash
 * that is only a multiply (Fibonacci hashing) clusters such runs for some
 * strides (4032, 3312 or 17664 bytes).  This inserts runs of 5,000 blocks
 * for every stride from 16 bytes to 8 KiB in steps of 16, and those three,
 * and requires that at most MAX_SECOND of the records sit in their second
 * bucket and none in a side table (a well-mixed hash gives ~0.1 at
 * these loads).
 *
 * It includes table_ptr.c itself to see the shards' slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "table_ptr.c"

/* The sampling filter (core_sample.c) is not tested here: the table's
 * sampled variants call it. */
void mt_sfilter_add(const void *p)
{
    (void)p;
}
void mt_sfilter_del(const void *p)
{
    (void)p;
}

#define RUN 5000u
#define MAX_SECOND 0.25

/* Share of the stored records outside their first bucket, over all shards
 * (a single small shard's share varies too much to judge a hash by). */
static double second_share(void)
{
    uint64_t second = 0, n = 0;
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        const ptr_shard *s = &g_shards[i];
        uint64_t nb = s->cap / MT_BUCKET_SLOTS;
        assert_int_equal(s->side.count, 0);
        for (uint64_t j = 0; j < s->cap; j++) {
            if (!s->slots[j].w0)
                continue;
            uint64_t a = bucket_a(mt_slot_hash(mt_slot_key_of(&s->slots[j])), nb);
            second += j / MT_BUCKET_SLOTS != a;
            n++;
        }
    }
    return n ? (double)second / (double)n : 0;
}

static void check_stride(uintptr_t stride)
{
    const uintptr_t base = 0x55d0c0a00010u; /* like a glibc heap */
    mt_block b = {.size = 16, .birth_ns = 0, .trace = 1}, stale, out;
    for (uint32_t i = 0; i < RUN; i++)
        assert_int_equal(mt_ptr_insert(base + i * stride, &b, &stale), MT_INSERT_NEW);
    double d = second_share();
    if (d > MAX_SECOND)
        fail_msg("stride %lu: %.2f of the records in their second bucket", (unsigned long)stride,
                 d);
    for (uint32_t i = 0; i < RUN; i++)
        assert_true(mt_ptr_remove(base + i * stride, &out));
}

static void strides_spread(void **state)
{
    (void)state;
    assert_true(mt_ptrs_init());
    for (uintptr_t stride = 16; stride <= 8192; stride += 16)
        check_stride(stride);
    check_stride(3312);
    check_stride(4032);
    check_stride(17664);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(strides_spread)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
