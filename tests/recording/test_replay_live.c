/* test_replay_live.c -- the replay's live groups on their own
 * (src/tui/replay/replay_live.c): its table of 16-byte slots against a
 * model.  Many groups on colliding keys (one trace, consecutive births;
 * many traces, one birth), growth from the smallest table, groups emptied
 * in random order (backward-shift deletion), sums and births that do not
 * fit in a slot (the wide groups: moved there, reused, births far apart
 * with equal slot keys), export/import and prune, and the count of
 * negative groups kept along. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay_live.h"
#include "test_xorshift.h"

#define N 20000u

typedef struct model_group {
    uint32_t trace;
    uint64_t birth_ms;
    int64_t count, bytes;
} model_group;

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void)
{
    return test_xorshift(&rng);
}

/* Group i: half on trace 7 at consecutive births, half on consecutive
 * traces at one birth; with odd, some far from the others' births (equal
 * low 32 bits: the same slot key) and some with sums too large for a slot. */
static model_group group(size_t i, bool odd)
{
    model_group g = {i % 2 ? 7u : (uint32_t)i, 40000000000ull + (i % 2 ? i : 0),
                     1 + (int64_t)(i % 5), 64 + (int64_t)i};
    if (odd && i % 7 == 0)
        g.birth_ms += (uint64_t)1 << 32; /* another group, same slot key */
    if (odd && i % 11 == 0)
        g.birth_ms = i % 2 ? i : UINT64_MAX - i;
    if (odd && i % 13 == 0)
        g.bytes = (int64_t)1 << 45;
    if (odd && i % 17 == 0)
        g.count = -((int64_t)1 << 30);
    return g;
}

static int by_key(const void *a, const void *b)
{
    const mt_rgroup *x = a, *y = b;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    return x->birth_ms < y->birth_ms ? -1 : x->birth_ms > y->birth_ms;
}

/* The model's groups (those not empty) must be exactly the table's. */
static void check_same(const mt_rlive *t, const model_group *m, size_t n)
{
    mt_rgroup *want = calloc(n, sizeof *want);
    assert_non_null(want);
    size_t live = 0, neg = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i].count != 0 || m[i].bytes != 0)
            want[live++] = (mt_rgroup){m[i].birth_ms, m[i].count, m[i].bytes, m[i].trace, 1};
        neg += m[i].count < 0;
    }
    assert_int_equal(t->count, live);
    assert_int_equal(t->nneg, neg); /* what lets a prune (and the flush before it) be skipped */
    mt_rgroup *got = mt_rlive_export(t);
    assert_true(got != NULL || live == 0);
    qsort(want, live, sizeof *want, by_key);
    if (got)
        qsort(got, live, sizeof *got, by_key);
    for (size_t k = 0; k < live; k++) {
        assert_int_equal(got[k].trace, want[k].trace);
        assert_int_equal(got[k].birth_ms, want[k].birth_ms);
        assert_int_equal(got[k].count, want[k].count);
        assert_int_equal(got[k].bytes, want[k].bytes);
    }
    free(got);
    free(want);
}

static model_group *fill(mt_rlive *t, bool odd)
{
    model_group *m = calloc(N, sizeof *m);
    assert_non_null(m);
    for (size_t i = 0; i < N; i++) {
        m[i] = group(i, odd);
        assert_int_equal(mt_rlive_add(t, m[i].trace, m[i].birth_ms, m[i].count, m[i].bytes), 0);
    }
    return m;
}

/* Every group added to again (in random order, one more block and its
 * bytes), then emptied: a broken deletion loses the groups behind the hole. */
static void add_then_empty(mt_rlive *t, model_group *m)
{
    for (size_t k = 0; k < N; k++) {
        size_t i = next_rand() % N;
        assert_int_equal(mt_rlive_add(t, m[i].trace, m[i].birth_ms, 1, 100), 0);
        m[i].count += 1;
        m[i].bytes += 100;
    }
    for (size_t k = 0; k < 2 * N; k++) {
        size_t i = next_rand() % N;
        assert_int_equal(mt_rlive_add(t, m[i].trace, m[i].birth_ms, -m[i].count, -m[i].bytes), 0);
        m[i].count = m[i].bytes = 0;
        if (k % 4000 == 0)
            check_same(t, m, N);
    }
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(mt_rlive_add(t, m[i].trace, m[i].birth_ms, -m[i].count, -m[i].bytes), 0);
        m[i].count = m[i].bytes = 0;
    }
    check_same(t, m, N);
    assert_int_equal(t->count, 0);
}

static void collisions_growth_deletion(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    model_group *m = fill(&t, false);
    assert_true(t.cap > 1024);
    assert_int_equal(t.nwide, 0);
    check_same(&t, m, N);
    add_then_empty(&t, m);
    free(m);
    mt_rlive_free(&t);
}

static void wide_groups(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    model_group *m = fill(&t, true);
    check_same(&t, m, N);
    assert_true(t.nwide > 0);
    size_t nwide = t.nwide;
    add_then_empty(&t, m);
    free(fill(&t, true)); /* the wide groups are reused */
    assert_int_equal(t.nwide, nwide);
    free(m);
    mt_rlive_free(&t);
}

/* A group growing past what a slot holds moves to the wide groups, and
 * shrinking back keeps its sums. */
static void sums_cross_the_slot_limits(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    int64_t step = (int64_t)1 << 22, bstep = (int64_t)1 << 38;
    for (int k = 1; k <= 4; k++) {
        assert_int_equal(mt_rlive_add(&t, 3, 1000, step, bstep), 0);
        model_group g = {3, 1000, step * k, bstep * k};
        check_same(&t, &g, 1);
    }
    for (int k = 3; k >= 0; k--) {
        assert_int_equal(mt_rlive_add(&t, 3, 1000, -step, -bstep), 0);
        model_group g = {3, 1000, step * k, bstep * k};
        check_same(&t, &g, 1);
    }
    assert_int_equal(t.count, 0);
    mt_rlive_free(&t);
}

/* Counts at the edge of a slot's: -2^23 is not a packed count (the wide
 * mark), -2^23 + 1 is. */
static void count_edges(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    model_group m[] = {{5, 100, -((int64_t)1 << 23), 9},
                       {5, 101, -((int64_t)1 << 23) + 1, -9},
                       {5, 102, ((int64_t)1 << 23) - 1, ((int64_t)1 << 39) - 1},
                       {5, 103, (int64_t)1 << 23, -((int64_t)1 << 39)}};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(mt_rlive_add(&t, m[i].trace, m[i].birth_ms, m[i].count, m[i].bytes), 0);
    check_same(&t, m, 4);
    mt_rlive_free(&t);
}

/* Births 2^32 ms apart on one trace: one slot key, three groups. */
static void same_slot_key(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    uint64_t b = 50000000000ull, far = (uint64_t)1 << 32;
    model_group m[] = {{3, b, 1, 10}, {3, b + far, 2, 20}, {3, b - far, 3, 30}};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(mt_rlive_add(&t, m[i].trace, m[i].birth_ms, m[i].count, m[i].bytes), 0);
    check_same(&t, m, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(mt_rlive_add(&t, 3, m[i].birth_ms, -m[i].count, -m[i].bytes), 0);
        m[i].count = m[i].bytes = 0;
        check_same(&t, m, 3);
    }
    mt_rlive_free(&t);
}

/* Counts that go below zero and back (a free recorded before its
 * allocation), packed and wide: the table's count of negative groups
 * follows the model's. */
static void negative_counts(void **state)
{
    (void)state;
    mt_rlive t;
    mt_rlive_init(&t);
    model_group m[300];
    for (size_t i = 0; i < 300; i++)
        m[i] = (model_group){(uint32_t)(i % 3), 5000 + i / 3, 0, 0};
    for (size_t k = 0; k < 20000; k++) {
        size_t i = next_rand() % 300;
        int64_t c = (int64_t)(next_rand() % 5) - 2, b = c * 16;
        if (k % 1000 == 999)
            c = m[i].count < 0 ? (int64_t)1 << 24 : -((int64_t)1 << 24); /* to a wide group */
        assert_int_equal(mt_rlive_add(&t, m[i].trace, m[i].birth_ms, c, b), 0);
        m[i].count += c;
        m[i].bytes += b;
        if (k % 500 == 0)
            check_same(&t, m, 300);
    }
    check_same(&t, m, 300);
    mt_rlive_free(&t);
}

static void import_and_prune(void **state)
{
    (void)state;
    mt_rlive t, u;
    mt_rlive_init(&t);
    mt_rlive_init(&u);
    model_group *m = fill(&t, true);
    mt_rgroup *all = mt_rlive_export(&t);
    assert_int_equal(mt_rlive_import(&u, all, t.count), 0);
    free(all);
    check_same(&u, m, N);
    /* prune: the negative groups born before the cut go */
    uint64_t cut = 40000000000ull + N / 2;
    assert_int_equal(mt_rlive_prune(&u, cut), 0);
    for (size_t i = 0; i < N; i++)
        if (m[i].count < 0 && m[i].birth_ms < cut)
            m[i].count = m[i].bytes = 0;
    check_same(&u, m, N);
    free(m);
    mt_rlive_free(&t);
    mt_rlive_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collisions_growth_deletion),
        cmocka_unit_test(wide_groups),
        cmocka_unit_test(sums_cross_the_slot_limits),
        cmocka_unit_test(count_edges),
        cmocka_unit_test(same_slot_key),
        cmocka_unit_test(negative_counts),
        cmocka_unit_test(import_and_prune),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
