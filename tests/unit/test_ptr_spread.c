/* test_ptr_spread.c -- the block table spreads real allocation patterns.
 *
 * The table (src/preload/table/table_ptr.c) is linear probing: a hash that maps
 * many keys near one another makes long probe runs, and every insert,
 * lookup and removal in them slow (a removal scans to the end of the run).
 * Equal-size blocks sit at a fixed stride, so their keys are arithmetic
 * runs; a hash that is only a multiply (Fibonacci hashing) clusters such
 * runs for some strides (4032, 3312 or 17664 bytes: mean displacements of
 * 50..260 slots were measured).  This inserts runs of 5,000 blocks for
 * every stride from 16 bytes to 8 KiB in steps of 16, and those three,
 * and requires a mean displacement from the home slot of at most 2.5
 * slots (a well-mixed hash gives ~1 at these loads).
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

#define RUN 5000u
#define MAX_MEAN_DISPLACEMENT 2.5

/* Mean distance of the stored keys from their home slots, over all shards
 * (a single small shard's mean varies too much to judge a hash by). */
static double mean_displacement(void)
{
    uint64_t sum = 0, n = 0;
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        const ptr_shard *s = &g_shards[i];
        for (uint64_t j = 0; j < s->cap; j++) {
            if (!s->slots[j].w0)
                continue;
            uint64_t home = mt_slot_home(mt_slot_hash(mt_slot_key_of(&s->slots[j])), s->cap);
            sum += (j + s->cap - home) % s->cap;
            n++;
        }
    }
    return n ? (double)sum / (double)n : 0;
}

static void check_stride(uintptr_t stride)
{
    const uintptr_t base = 0x55d0c0a00010u; /* like a glibc heap */
    mt_block b = {.size = 16, .birth_ns = 0, .trace = 1}, stale, out;
    for (uint32_t i = 0; i < RUN; i++)
        assert_int_equal(mt_ptr_insert(base + i * stride, &b, &stale), MT_INSERT_NEW);
    double d = mean_displacement();
    if (d > MAX_MEAN_DISPLACEMENT)
        fail_msg("stride %lu: mean displacement %.1f slots", (unsigned long)stride, d);
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
