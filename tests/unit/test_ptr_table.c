/* test_ptr_table.c -- unit tests of the preload's live-block table
 * (src/preload/table/table_ptr.c, table_ptr_slot.h, table_ptr_side.c), compiled on its own.
 *
 * The table only stores pointers, it never dereferences them, so the tests
 * use made-up addresses (odd ones and ones above 2^48 included), sizes no
 * program could allocate and births years apart.  The table is
 * process-global: every test leaves it empty, and the birth-time test,
 * which moves a shard's time window years ahead, runs last.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_hash.h"
#include "core_os_memory.h"
#include "table_ptr_slot.h"
#include "table_ptr.h"

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
#define DAY_MS (86400ull * 1000u)

static mt_block blk(uint64_t size, uint32_t trace, uint64_t birth_ns)
{
    return (mt_block){.size = size, .birth_ns = birth_ns, .trace = trace};
}

static void assert_block(const mt_block *b, uint64_t size, uint32_t trace, uint64_t birth_ns)
{
    assert_int_equal(b->size, size);
    assert_int_equal(b->trace, trace);
    assert_int_equal(b->birth_ns, birth_ns);
}

/* Inserts a new block and takes it back out. */
static void round_trip(uintptr_t p, uint64_t size, uint32_t trace, uint64_t birth_ns,
                       uint64_t want_birth_ns)
{
    mt_block b = blk(size, trace, birth_ns), out;
    uint64_t n = mt_ptr_count();
    assert_int_equal(mt_ptr_insert(p, &b, &out), MT_INSERT_NEW);
    assert_int_equal(mt_ptr_count(), n + 1);
    assert_true(mt_ptr_remove(p, &out));
    assert_block(&out, size, trace, want_birth_ns);
    assert_int_equal(mt_ptr_count(), n);
    assert_false(mt_ptr_remove(p, &out));
}

static int setup(void **state)
{
    (void)state;
    return mt_ptrs_init() ? 0 : -1;
}

/* First: the shards' first tables (mt_ptrs_init) are 64 slots each, side by
 * side, several shards to a page: a small process's blocks sit in a few
 * pages, which a fork copies and its parent and child write again
 * (docs/performance.md, "Process start and exit").  They used to be a page
 * per shard (32 pages).  The growth tests below then check that a shard
 * growing out of its first table leaves its neighbours' alone. */
static void first_tables_share_pages(void **state)
{
    (void)state;
    assert_int_equal(mt_ptr_count(), 0);
    assert_true(mt_os_bytes() > 0);
    assert_true(mt_os_bytes() <=
                mt_os_whole_pages((size_t)(1u << MT_SLOT_SHARD_BITS) * 64u * sizeof(mt_slot)));
}

static void slot_pack_edges(void **state)
{
    (void)state;
    const uintptr_t ptrs[] = {8, 16, 0x7fffdeadbee8, MT_SLOT_PTR_LIMIT - 8};
    const uint64_t sizes[] = {0, 1, 4096, MT_SLOT_SIZE_MAX};
    const uint32_t traces[] = {0, 1, MT_SLOT_TRACE_MASK};
    const uint64_t births[] = {0, 1, (1u << 19) - 1, 1u << 19, 123456789012, MT_BIRTH_MASK};
    for (size_t a = 0; a < sizeof ptrs / sizeof *ptrs; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
            for (size_t c = 0; c < sizeof traces / sizeof *traces; c++)
                for (size_t d = 0; d < sizeof births / sizeof *births; d++) {
                    mt_slot s;
                    mt_slot_pack(&s, mt_slot_key(ptrs[a]), sizes[b], traces[c], births[d]);
                    assert_int_not_equal(s.w0, 0);
                    assert_int_equal(mt_slot_ptr(&s), ptrs[a]);
                    assert_int_equal(mt_slot_key_of(&s), ptrs[a] >> 3);
                    assert_int_equal(mt_slot_size(&s), sizes[b]);
                    assert_int_equal(mt_slot_trace(&s), traces[c]);
                    assert_int_equal(mt_slot_birth(&s), births[d]);
                    assert_true(mt_slot_holds(&s, mt_slot_probe(mt_slot_key(ptrs[a]))));
                    assert_false(mt_slot_holds(&s, mt_slot_probe(mt_slot_key(ptrs[a] ^ 8))));
                }
}

static bool fits(uintptr_t ptr, uint64_t size)
{
    return mt_slot_fits(mt_slot_key(ptr), size);
}

static void slot_fits(void **state)
{
    (void)state;
    assert_true(fits(8, 0));
    assert_true(fits(MT_SLOT_PTR_LIMIT - 8, MT_SLOT_SIZE_MAX));
    assert_int_equal(mt_slot_key(0x7fffdeadbee8), 0x7fffdeadbee8 >> 3);
    assert_false(fits(0, 1));      /* key 0 = empty */
    assert_false(fits(0x1004, 1)); /* not 8-aligned */
    assert_false(fits(0x1001, 1));
    assert_false(fits(0x1002, 1));
    assert_false(fits(MT_SLOT_PTR_LIMIT, 1)); /* 2^48 */
    assert_false(fits(MT_SLOT_PTR_LIMIT + 8, 1));
    assert_false(fits(UINTPTR_MAX & ~(uintptr_t)7, 1));
    assert_false(fits(0x1000, MT_SLOT_SIZE_MAX + 1)); /* 16 MiB */
    assert_false(fits(0x1000, 1ull << 32));
}

static void birth_encoding(void **state)
{
    (void)state;
    /* Milliseconds modulo 2^37, decoded against any later reference less
     * than 2^37 ms away. */
    const uint64_t born[] = {0, 1, 123456789, MT_BIRTH_MASK, MT_BIRTH_MASK + 5, 3 * MT_BIRTH_MASK};
    for (size_t i = 0; i < sizeof born / sizeof *born; i++) {
        uint64_t e = mt_birth_store(born[i]);
        assert_true(e <= MT_BIRTH_MASK);
        assert_int_equal(mt_birth_ms(e, born[i]), born[i]);
        assert_int_equal(mt_birth_ms(e, born[i] + 1), born[i]);
        assert_int_equal(mt_birth_ms(e, born[i] + MT_BIRTH_MASK), born[i]);
    }
}

static void insert_remove(void **state)
{
    (void)state;
    assert_int_equal(mt_ptr_count(), 0);
    /* Young blocks keep millisecond precision (rounded down). */
    round_trip(0x55550000aa10, 24, 7, 1234567891, 1234 * MS);
    round_trip(0x55550000aa10, 0, 0, 0, 0);
    round_trip(0x7f0000000008, MT_SLOT_SIZE_MAX, MT_SLOT_TRACE_MASK, 999999, 0);
    round_trip(0x7f0000000010, 12345, 77, 100 * DAY_MS * MS + 5, 100 * DAY_MS * MS);
    round_trip(MT_SLOT_PTR_LIMIT - 8, 1, 3, 5 * MS, 5 * MS);
    assert_int_equal(mt_ptr_count(), 0);
}

static void replace_and_try_remove(void **state)
{
    (void)state;
    uintptr_t p = 0x5555000bb000;
    mt_block a = blk(100, 1, 10 * MS), b = blk(200, 2, 20 * MS), out;
    assert_int_equal(mt_ptr_insert(p, &a, &out), MT_INSERT_NEW);
    assert_int_equal(mt_ptr_insert(p, &b, &out), MT_INSERT_REPLACED);
    assert_block(&out, 100, 1, 10 * MS);
    assert_int_equal(mt_ptr_count(), 1);
    mt_ptrs_lock_all();
    assert_int_equal(mt_ptr_try_remove(p, &out), MT_TRY_BUSY);
    mt_ptrs_unlock_all();
    assert_int_equal(mt_ptr_try_remove(p, &out), MT_TRY_REMOVED);
    assert_block(&out, 200, 2, 20 * MS);
    assert_int_equal(mt_ptr_try_remove(p, &out), MT_TRY_ABSENT);
    assert_int_equal(mt_ptr_count(), 0);
}

/* Blocks a slot cannot hold go through the side table, transparently. */
static void side_table(void **state)
{
    (void)state;
    round_trip(0x5555000cc000, MT_SLOT_SIZE_MAX + 1, 4, 7 * MS, 7 * MS); /* 16 MiB */
    round_trip(0x5555000cc000, 1ull << 31, 4, 7 * MS, 7 * MS);
    round_trip(0x5555000cc000, 1ull << 32, 4, 7 * MS, 7 * MS);
    round_trip(0x5555000cc000, UINT64_MAX / 2, MT_SLOT_TRACE_MASK, 7 * MS + 1, 7 * MS);
    round_trip(0x5555000cc004, 16, 5, 8 * MS, 8 * MS);    /* 4-aligned */
    round_trip(0x5555000cc001, 16, 5, 8 * MS, 8 * MS);    /* odd */
    round_trip(MT_SLOT_PTR_LIMIT, 16, 6, 9 * MS, 9 * MS); /* 2^48 */
    round_trip(0xff00000000001000, 16, 6, 9 * MS, 9 * MS);
    round_trip(UINTPTR_MAX, 1, 6, 9 * MS, 9 * MS);
    assert_int_equal(mt_ptr_count(), 0);
}

/* The same address with a size that fits and one that does not: whichever
 * record is there is replaced, whichever table it is in. */
static void replace_across_tables(void **state)
{
    (void)state;
    uintptr_t p = 0x5555000dd000;
    mt_block small = blk(10, 1, 1 * MS), huge = blk(1ull << 33, 2, 2 * MS), out;
    assert_int_equal(mt_ptr_insert(p, &small, &out), MT_INSERT_NEW);
    assert_int_equal(mt_ptr_insert(p, &huge, &out), MT_INSERT_REPLACED);
    assert_block(&out, 10, 1, 1 * MS);
    assert_int_equal(mt_ptr_count(), 1);
    assert_int_equal(mt_ptr_insert(p, &huge, &out), MT_INSERT_REPLACED);
    assert_block(&out, 1ull << 33, 2, 2 * MS);
    assert_int_equal(mt_ptr_insert(p, &small, &out), MT_INSERT_REPLACED);
    assert_block(&out, 1ull << 33, 2, 2 * MS);
    assert_int_equal(mt_ptr_count(), 1);
    assert_true(mt_ptr_remove(p, &out));
    assert_block(&out, 10, 1, 1 * MS);
    assert_false(mt_ptr_remove(p, &out));
    assert_int_equal(mt_ptr_count(), 0);
}

/* Many blocks (every shard grows several times), a tenth of them in the
 * side tables; visit sees each exactly once; removal in another order. */
#define MANY 200000u

static uintptr_t many_ptr(uint32_t i)
{
    uintptr_t p = 0x560000000000ull + (uintptr_t)i * 48u;
    return i % 10 == 3 ? p + 4 : p; /* side table: not 8-aligned */
}

static uint64_t many_size(uint32_t i)
{
    return i % 10 == 7 ? MT_SLOT_SIZE_MAX + 1 + i : i; /* side table: 16 MiB and up */
}

typedef struct {
    uint32_t *seen;
    uint64_t visits;
} visit_ctx;

static void count_visit(const mt_block *b, void *arg)
{
    visit_ctx *c = arg;
    c->visits++;
    if (b->trace < MANY)
        c->seen[b->trace]++;
}

static void growth_and_visit(void **state)
{
    (void)state;
    mt_block out;
    for (uint32_t i = 0; i < MANY; i++) {
        mt_block b = blk(many_size(i), i, (uint64_t)(i % 1000) * MS);
        assert_int_equal(mt_ptr_insert(many_ptr(i), &b, &out), MT_INSERT_NEW);
    }
    assert_int_equal(mt_ptr_count(), MANY);
    visit_ctx c = {calloc(MANY, sizeof(uint32_t)), 0};
    assert_non_null(c.seen);
    mt_ptr_visit(count_visit, &c);
    assert_int_equal(c.visits, MANY);
    for (uint32_t i = 0; i < MANY; i++)
        assert_int_equal(c.seen[i], 1);
    free(c.seen);
    for (uint32_t k = 0; k < MANY; k++) {
        uint32_t i =
            (uint32_t)(((uint64_t)k * 7919u) % MANY); /* 7919 is prime, MANY is not a multiple */
        assert_true(mt_ptr_remove(many_ptr(i), &out));
        assert_block(&out, many_size(i), i, (uint64_t)(i % 1000) * MS);
    }
    assert_int_equal(mt_ptr_count(), 0);
}

/* A pointer in the same shard as p (shards are chosen by the pointer's
 * hash, table_ptr.c). */
static uintptr_t same_shard(uintptr_t p, uintptr_t after)
{
    uintptr_t q = after;
    while (mt_slot_shard(mt_slot_hash(mt_slot_key(q))) !=
           mt_slot_shard(mt_slot_hash(mt_slot_key(p))))
        q += 16;
    return q;
}

static mt_block lookup(uintptr_t p)
{
    mt_block out, stale;
    assert_true(mt_ptr_remove(p, &out));
    assert_int_equal(mt_ptr_insert(p, &out, &stale), MT_INSERT_NEW);
    return out;
}

/* Random inserts and removals in one shard, checked against a model after
 * every step: a removal must find exactly the record inserted, a removal
 * of an absent pointer must find nothing, and the count must match.  One
 * shard fills and empties through its growth points, so probe runs grow
 * long, wrap around the end of the array, and removals shift keys back
 * into the holes they leave (table_ptr.c): a broken shift loses keys. */
#define CHURN_PTRS 6000u
#define CHURN_STEPS 400000u

static void churn_against_model(void **state)
{
    (void)state;
    static uintptr_t ptrs[CHURN_PTRS];
    static bool live[CHURN_PTRS];
    /* Random addresses, not a run of them: Fibonacci hashing spreads a
     * run of addresses so evenly that probe runs would stay short. */
    uint64_t shard = mt_slot_shard(mt_slot_hash(mt_slot_key(0x7f0000100000u))), pick = 7;
    for (uint32_t i = 0; i < CHURN_PTRS;) {
        pick ^= pick << 13, pick ^= pick >> 7, pick ^= pick << 17;
        uintptr_t p = 0x7f0000000000u | (pick & 0xfffffff0u);
        bool dup = false;
        for (uint32_t k = 0; k < i && !dup; k++)
            dup = ptrs[k] == p;
        if (!dup && mt_slot_shard(mt_slot_hash(mt_slot_key(p))) == shard)
            ptrs[i++] = p;
    }
    uint64_t rng = 99, n = 0, base = mt_ptr_count();
    mt_block out, stale;
    for (uint32_t step = 0; step < CHURN_STEPS; step++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        /* Phases that favour inserting, then removing, so the shard's load
         * sweeps its whole range. */
        uint32_t span = (step / 50000u) % 2 ? CHURN_PTRS / 4 : CHURN_PTRS;
        uint32_t i = (uint32_t)(rng % span);
        if (live[i]) {
            assert_true(mt_ptr_remove(ptrs[i], &out));
            assert_block(&out, i + 1, i, (uint64_t)i * MS);
            live[i] = false;
            n--;
        } else if (rng >> 62) {
            mt_block b = blk(i + 1, i, (uint64_t)i * MS);
            assert_int_equal(mt_ptr_insert(ptrs[i], &b, &stale), MT_INSERT_NEW);
            live[i] = true;
            n++;
        } else {
            assert_false(mt_ptr_remove(ptrs[i], &out));
        }
        assert_int_equal(mt_ptr_count(), base + n);
    }
    for (uint32_t i = 0; i < CHURN_PTRS; i++)
        if (live[i])
            assert_true(mt_ptr_remove(ptrs[i], &out));
    assert_int_equal(mt_ptr_count(), base);
}

#define YEAR_MS (365ull * DAY_MS)

/* Births stay exact to the millisecond whatever the ages and the times
 * between inserts: blocks years old move to the side table before their
 * slot form becomes ambiguous (2^37 ms, 4.3 years).  Runs last: it moves
 * one shard's window years ahead. */
static void birth_window(void **state)
{
    (void)state;
    const uint64_t base = 10 * DAY_MS + 1234; /* ms */
    uintptr_t a = 0x5555000ee000, p = a + 0x100000;
    mt_block out;
    mt_block ba = blk(64, 11, base * MS + 999);
    assert_int_equal(mt_ptr_insert(a, &ba, &out), MT_INSERT_NEW);
    /* d: born 1 ms after a, so 1 ms short of being moved with it. */
    uintptr_t d = same_shard(a, a + 16);
    mt_block bd = blk(65, 12, (base + 1) * MS);
    assert_int_equal(mt_ptr_insert(d, &bd, &out), MT_INSERT_NEW);
    assert_int_equal(lookup(a).birth_ns, base * MS);
    assert_int_equal(lookup(d).birth_ns, (base + 1) * MS);

    /* An insert 3 years after a runs the pass: a moves, d stays. */
    p = same_shard(a, p);
    mt_block bt = blk(1, 13, (base + 3 * YEAR_MS) * MS);
    assert_int_equal(mt_ptr_insert(p, &bt, &out), MT_INSERT_NEW);
    assert_int_equal(lookup(a).birth_ns, base * MS);
    assert_int_equal(lookup(d).birth_ns, (base + 1) * MS);
    assert_int_equal(lookup(p).birth_ns, (base + 3 * YEAR_MS) * MS);

    /* Inserts every half year for 10 more years (more than twice 2^37
     * ms), each checked, then every old block again. */
    for (uint64_t half = 7; half <= 26; half++) {
        uintptr_t q = same_shard(a, p + 16 * half);
        uint64_t born = base + half * YEAR_MS / 2 + half;
        mt_block bq = blk(2, 14, born * MS);
        assert_int_equal(mt_ptr_insert(q, &bq, &out), MT_INSERT_NEW);
        assert_true(mt_ptr_remove(q, &out));
        assert_block(&out, 2, 14, born * MS);
    }
    assert_int_equal(lookup(a).birth_ns, base * MS);
    assert_int_equal(lookup(d).birth_ns, (base + 1) * MS);
    assert_int_equal(lookup(p).birth_ns, (base + 3 * YEAR_MS) * MS);

    /* A block put back with a birth long before the window (a failed
     * realloc) is exact too, and so is a young one. */
    uintptr_t e = same_shard(a, p + 0x10000);
    mt_block be = blk(3, 15, (base + 5 * YEAR_MS + 5) * MS);
    assert_int_equal(mt_ptr_insert(e, &be, &out), MT_INSERT_NEW);
    assert_int_equal(lookup(e).birth_ns, (base + 5 * YEAR_MS + 5) * MS);
    uintptr_t f = same_shard(a, e + 16);
    mt_block bf = blk(4, 16, (base + 13 * YEAR_MS + 5) * MS);
    assert_int_equal(mt_ptr_insert(f, &bf, &out), MT_INSERT_NEW);
    assert_int_equal(lookup(f).birth_ns, (base + 13 * YEAR_MS + 5) * MS);

    /* And the rest of each record is untouched. */
    assert_true(mt_ptr_remove(a, &out));
    assert_block(&out, 64, 11, base * MS);
    assert_true(mt_ptr_remove(d, &out));
    assert_block(&out, 65, 12, (base + 1) * MS);
    assert_true(mt_ptr_remove(p, &out));
    assert_block(&out, 1, 13, (base + 3 * YEAR_MS) * MS);
    assert_true(mt_ptr_remove(e, &out));
    assert_block(&out, 3, 15, (base + 5 * YEAR_MS + 5) * MS);
    assert_true(mt_ptr_remove(f, &out));
    assert_block(&out, 4, 16, (base + 13 * YEAR_MS + 5) * MS);
    assert_int_equal(mt_ptr_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_tables_share_pages), /* first: no table has grown */
        cmocka_unit_test(slot_pack_edges),
        cmocka_unit_test(slot_fits),
        cmocka_unit_test(birth_encoding),
        cmocka_unit_test(insert_remove),
        cmocka_unit_test(replace_and_try_remove),
        cmocka_unit_test(side_table),
        cmocka_unit_test(replace_across_tables),
        cmocka_unit_test(growth_and_visit),
        cmocka_unit_test(churn_against_model),
        cmocka_unit_test(birth_window), /* last: moves a shard's time window */
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
