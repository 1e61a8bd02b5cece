/* test_ptr_cuckoo.c -- the block table's cuckoo layout (src/preload/table/table_ptr.c,
 * "Bucketized cuckoo hashing"): eviction chains, the fallback when a walk
 * hits its bound (forced with the g_kick_limit test hook), the second walk
 * (from the other bucket), the side table below a third, and a randomized
 * run against a reference map, with duplicates, absent keys, side-table
 * records and growth.
 *
 * It includes table_ptr.c itself to reach raw_put, the shards and the hook.
 * The table is process-global: every test leaves it empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "table_ptr.c"
#include "test_xorshift.h"

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

#define MS 1000000ull

/* Whether slots (cap) hold key in one of its two buckets. */
static bool holds(mt_slot *slots, uint64_t cap, uint64_t key)
{
    uint64_t h = mt_slot_hash(key), nb = cap / MT_BUCKET_SLOTS;
    return bucket_find(slots, bucket_a(h, nb), mt_slot_probe(key)) ||
           bucket_find(slots, bucket_b(h, nb), mt_slot_probe(key));
}

/* raw_put on a bare table of 64 slots until a key finds no room: every key
 * placed, chains included, stays findable, the table holds each once, and
 * the chains fill it well past what two full buckets would allow. */
static void eviction_chains(void **state)
{
    (void)state;
    enum { CAP = 64 };
    mt_slot slots[CAP] __attribute__((aligned(64)));
    uint64_t keys[CAP], rng = 12345, chained = 0;
    memset(slots, 0, sizeof slots);
    unsigned n = 0;
    for (; n < CAP; n++) {
        keys[n] = (test_xorshift(&rng) & 0xfffffffff0ull) >> 3 | 2;
        uint64_t h = mt_slot_hash(keys[n]), nb = CAP / MT_BUCKET_SLOTS;
        chained += !bucket_free(slots, bucket_a(h, nb)) && !bucket_free(slots, bucket_b(h, nb));
        mt_slot e;
        mt_slot_pack(&e, keys[n], n + 1, n, n);
        if (!raw_put(slots, CAP, &e))
            break;
        for (unsigned k = 0; k <= n; k++)
            assert_true(holds(slots, CAP, keys[k]));
    }
    unsigned used = 0;
    for (unsigned j = 0; j < CAP; j++)
        used += slots[j].w0 != 0;
    assert_int_equal(used, n); /* no copy left behind by a chain */
    assert_true(chained > 0);
    assert_true(n >= CAP * 3 / 4);
    for (unsigned k = 0; k < n; k++) { /* each record moved whole */
        uint64_t h = mt_slot_hash(keys[k]), nb = CAP / MT_BUCKET_SLOTS;
        mt_slot *e = bucket_find(slots, bucket_a(h, nb), mt_slot_probe(keys[k]));
        if (!e)
            e = bucket_find(slots, bucket_b(h, nb), mt_slot_probe(keys[k]));
        assert_int_equal(mt_slot_size(e), k + 1);
        assert_int_equal(mt_slot_trace(e), k);
        assert_int_equal(mt_slot_birth(e), k);
    }
}

/* Keys (8-aligned pointers' keys) whose buckets in a table of nb buckets
 * are a and b, from rng: n of them into keys. */
static void keys_with_buckets(uint64_t *rng, uint64_t nb, uint64_t a, uint64_t b, uint64_t *keys,
                              unsigned n)
{
    for (unsigned i = 0; i < n;) {
        uint64_t k = (test_xorshift(rng) & 0xfffffffff0ull) >> 3 | 2, h = mt_slot_hash(k);
        if (bucket_a(h, nb) == a && bucket_b(h, nb) == b)
            keys[i++] = k;
    }
}

/* A key whose bucket a is full of keys that can only live there (both of
 * their buckets are that one: no chain from it can end), and whose bucket
 * b is full of keys that can move elsewhere: only a walk from bucket b
 * makes room.  With one walk (from a) the key found none at a load of
 * 8/64, and went to the side table of its shard. */
static void second_walk(void **state)
{
    (void)state;
    enum { CAP = 64, NB = CAP / MT_BUCKET_SLOTS };
    mt_slot slots[CAP] __attribute__((aligned(64)));
    memset(slots, 0, sizeof slots);
    uint64_t rng = 777, stuck[4], movable[4], key[1];
    keys_with_buckets(&rng, NB, 3, 3, stuck, 4);
    keys_with_buckets(&rng, NB, 9, 12, movable, 4); /* bucket a is 9: they go there first */
    keys_with_buckets(&rng, NB, 3, 9, key, 1);
    for (unsigned i = 0; i < 4; i++) {
        mt_slot e;
        mt_slot_pack(&e, stuck[i], 1, 1, 1);
        assert_true(raw_put(slots, CAP, &e));
        mt_slot_pack(&e, movable[i], 2, 2, 2);
        assert_true(raw_put(slots, CAP, &e));
    }
    assert_null(bucket_free(slots, 3));
    assert_null(bucket_free(slots, 9));
    mt_slot e;
    mt_slot_pack(&e, key[0], 3, 3, 3);
    assert_true(raw_put(slots, CAP, &e));
    assert_non_null(bucket_find(slots, 9, mt_slot_probe(key[0])));
    for (unsigned i = 0; i < 4; i++) {
        assert_non_null(bucket_find(slots, 3, mt_slot_probe(stuck[i])));
        assert_true(holds(slots, CAP, movable[i]));
    }
}

/* Reference map: pool[i] is live with record ref[i]. */
#define POOL 6000u
static uintptr_t pool[POOL];
static mt_block ref[POOL];
static bool live[POOL];

static void fill_pool(uint64_t seed, uint32_t shard_only)
{
    memset(live, 0, sizeof live);
    for (uint32_t i = 0; i < POOL;) {
        uintptr_t p = 0x7f0000000000u | (test_xorshift(&seed) & 0xffffff0u);
        if (i % 97 == 5)
            p |= 1; /* odd: side table */
        bool dup = false;
        for (uint32_t k = 0; k < i && !dup; k++)
            dup = pool[k] == p;
        uint32_t sh = mt_slot_shard(mt_slot_hash(mt_slot_key(p)));
        if (!dup && (shard_only == MT_PTR_SHARDS || sh == shard_only))
            pool[i++] = p;
    }
}

static void empty_pool(void)
{
    mt_block out;
    for (uint32_t i = 0; i < POOL; i++)
        if (live[i]) {
            assert_true(mt_ptr_remove(pool[i], &out));
            live[i] = false;
        }
}

static void assert_same(const mt_block *a, const mt_block *b)
{
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->trace, b->trace);
    assert_int_equal(a->birth_ns, b->birth_ns);
}

static void check_insert(uint32_t i, mt_block b)
{
    mt_block stale;
    mt_insert_result r = mt_ptr_insert(pool[i], &b, &stale);
    assert_int_equal(r, live[i] ? MT_INSERT_REPLACED : MT_INSERT_NEW);
    if (live[i])
        assert_same(&stale, &ref[i]);
    ref[i] = b;
    live[i] = true;
}

static void check_remove(uint32_t i)
{
    mt_block out;
    assert_int_equal(mt_ptr_remove(pool[i], &out), live[i]);
    if (live[i])
        assert_same(&out, &ref[i]);
    live[i] = false;
}

static void sum_block(const mt_block *b, void *ctx)
{
    ((uint64_t *)ctx)[0] += b->size;
    ((uint64_t *)ctx)[1]++;
}

/* Random inserts (new and duplicate), removals (present and absent) against
 * the reference map, with load sweeping up and down (growth) and the
 * eviction bound at its default, then at 1 (walks fail: growth or the side
 * table).  Records come back exact, and a visit sees exactly the live ones. */
static void randomized_against_reference(void **state)
{
    (void)state;
    fill_pool(7, MT_PTR_SHARDS);
    uint64_t rng = 4242, base = mt_ptr_count();
    for (unsigned limit = 0; limit < 3; limit++) {
        g_kick_limit = limit;
        for (uint32_t step = 0; step < 120000; step++) {
            uint64_t r = test_xorshift(&rng);
            uint32_t span = (step / 20000u) % 2 ? POOL / 5 : POOL;
            uint32_t i = (uint32_t)(r % span);
            if (r >> 62)
                check_insert(i, (mt_block){.size = (r >> 20) % 5000 + (i % 211 == 3) * (1u << 24),
                                           .birth_ns = (step / 8) * MS,
                                           .trace = (uint32_t)(r >> 40) % 1000});
            else
                check_remove(i);
        }
        uint64_t want[2] = {0, 0}, got[2] = {0, 0};
        for (uint32_t i = 0; i < POOL; i++)
            if (live[i])
                want[0] += ref[i].size, want[1]++;
        mt_ptr_visit(sum_block, got);
        assert_memory_equal(got, want, sizeof got);
        assert_int_equal(mt_ptr_count(), base + want[1]);
    }
    g_kick_limit = 0;
    empty_pool();
    assert_int_equal(mt_ptr_count(), base);
}

/* A shard below a third full where both walks fail: five keys whose two
 * buckets are one and the same.  The fifth goes to the side table (the
 * shard does not grow for a handful of keys); it stays exact there, and
 * leaves it when removed. */
static void side_table_below_a_third(void **state)
{
    (void)state;
    enum { CAP = SHARD_MIN_CAP };
    static mt_slot slots[CAP] __attribute__((aligned(64)));
    ptr_shard s = {.cap = CAP, .slots = slots, .limit_ms = MT_PASS_MS};
    uint64_t rng = 31337, keys[5];
    keys_with_buckets(&rng, CAP / MT_BUCKET_SLOTS, 5, 5, keys, 5);
    mt_block stale, out;
    for (unsigned i = 0; i < 5; i++) {
        mt_block b = {.size = 100 + i, .birth_ns = i * MS, .trace = i};
        uint64_t h = mt_slot_hash(keys[i]);
        assert_int_equal(insert_slot(&s, keys[i] << 3, keys[i], h, &b, &stale), MT_INSERT_NEW);
    }
    assert_int_equal(s.cap, CAP);
    assert_int_equal(s.count, 4);
    assert_int_equal(s.side.count, 1);
    for (unsigned i = 5; i-- > 0;) {
        assert_true(remove_locked(&s, keys[i] << 3, keys[i], mt_slot_hash(keys[i]), &out));
        assert_int_equal(out.size, 100 + i);
        assert_int_equal(out.birth_ns, i * MS);
        assert_int_equal(out.trace, i);
    }
    assert_int_equal(s.count, 0);
    assert_int_equal(s.side.count, 0);
}

/* One shard, eviction bound 1: walks fail early, and the shard grows.
 * Every record stays exact and the side table empties with the removals. */
static void fallback_when_walks_fail(void **state)
{
    (void)state;
    uint32_t sh = 3;
    fill_pool(99, sh);
    ptr_shard *s = &g_shards[sh];
    uint64_t cap0 = s->cap;
    g_kick_limit = 1;
    for (uint32_t i = 0; i < POOL; i++)
        if (pool[i] & 1)
            continue;
        else
            check_insert(i, (mt_block){.size = i + 1, .birth_ns = i * MS, .trace = i % 77});
    assert_true(s->cap > cap0);
    for (uint32_t i = 0; i < POOL; i += 2)
        check_remove(i);
    for (uint32_t i = 0; i < POOL; i += 2)
        check_insert(i, (mt_block){.size = 3, .birth_ns = 5 * MS, .trace = 9});
    g_kick_limit = 0;
    empty_pool();
    assert_int_equal(s->side.count, 0);
    assert_int_equal(s->count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eviction_chains),          cmocka_unit_test(second_walk),
        cmocka_unit_test(side_table_below_a_third), cmocka_unit_test(randomized_against_reference),
        cmocka_unit_test(fallback_when_walks_fail),
    };
    assert_true(mt_ptrs_init());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
