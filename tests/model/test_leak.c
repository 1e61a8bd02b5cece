/* test_leak.c -- the leak suspicion score against sites with known
 * behaviour (leak_sim.c): a steady grower must rank above a larger cache
 * that grew once, above churning temporaries and above one burst, from the
 * first seconds on, with or without the viewer's history; a cache that
 * stopped filling must fall back; group scores use summed counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "leak_sim.h"
#include "model_fixture.h"
#include "rows.h"

/* cmocka's float assertion compares in float; these figures need double. */
#define assert_double_equal(a, b, eps) check_close((double)(a), (double)(b), (eps), #a, __LINE__)

static void check_close(double a, double b, double eps, const char *what, int line)
{
    if (!(fabs(a - b) <= eps)) {
        fprintf(stderr, "line %d: %s = %.17g, expected %.17g\n", line, what, a, b);
        fail();
    }
}

typedef struct run {
    sim s;
    mt_table *t;
    mt_snapshot *snap, *prev;
} run;

static void run_init(run *r, unsigned burst_s)
{
    sim_init(&r->s, burst_s);
    r->t = mt_table_new();
    assert_non_null(r->t);
    r->snap = r->prev = NULL;
}

static void run_done(run *r)
{
    fx_snap_free(r->snap);
    fx_snap_free(r->prev);
    mt_table_free(r->t);
    sim_free(&r->s);
}

/* Advances to second `until`, observing every snapshot when observe. */
static void run_to(run *r, unsigned until, bool observe)
{
    while (r->s.now_ns < (uint64_t)until * 1000000000ull) {
        fx_snap_free(r->prev);
        r->prev = r->snap;
        r->snap = sim_step(&r->s);
        if (observe)
            mt_table_observe(r->t, r->snap, r->prev);
    }
}

static double score(const run *r, sim_kind k, bool with_table)
{
    mt_leak_parts p;
    mt_leak_score(&r->snap->slot, &r->snap->traces[k], with_table ? r->t : NULL, &p);
    assert_true(p.score >= 0 && p.score <= 100);
    return p.score;
}

static void expect_grower_first(const run *r, bool with_table)
{
    double g = score(r, SIM_GROWER, with_table);
    assert_true(r->snap->traces[SIM_CACHE].live_bytes > r->snap->traces[SIM_GROWER].live_bytes);
    assert_true(g > score(r, SIM_CACHE, with_table));
    assert_true(g > score(r, SIM_CHURN, with_table));
    assert_true(g > score(r, SIM_BURST, with_table));
}

static void test_grower_ranks_first_over_time(void **state)
{
    (void)state;
    static const unsigned at[] = {2, 3, 4, 5, 10, 30, 45, 60, 120, 200, 201, 202, 230, 400, 700};
    run r;
    run_init(&r, 200);
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        run_to(&r, at[i], true);
        expect_grower_first(&r, true);  /* the viewer: checkpoints + history */
        expect_grower_first(&r, false); /* --batch: checkpoints only */
    }
    run_done(&r);
}

static void test_grower_first_right_after_attach(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 600, false); /* long-running target, viewer not yet there */
    run_to(&r, 601, true);  /* first snapshot observed */
    expect_grower_first(&r, true);
    run_to(&r, 603, true);
    expect_grower_first(&r, true);
    run_done(&r);
}

static void test_short_checkpoint_is_enough(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 2, false); /* second publish: checkpoints 0 and 1 are the first publish */
    assert_true(r.snap->slot.ckpt_ns[0] == 1000000000ull);
    expect_grower_first(&r, false);
    assert_true(score(&r, SIM_GROWER, false) > 0);
    assert_double_equal(score(&r, SIM_CACHE, false), 0.0, 1e-9);
    run_done(&r);
}

static void test_filling_cache_falls_back(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 50, true);
    double filling = score(&r, SIM_FILLING, true); /* still filling: looks like a leak */
    assert_true(filling > 50);
    run_to(&r, 100, true); /* stopped at 60 s */
    assert_true(score(&r, SIM_FILLING, true) < filling / 2);
    assert_true(score(&r, SIM_FILLING, true) < score(&r, SIM_GROWER, true));
    run_to(&r, 700, true); /* no checkpoint sees the filling any more */
    assert_double_equal(score(&r, SIM_FILLING, true), 0.0, 1e-9);
    assert_double_equal(score(&r, SIM_FILLING, false), 0.0, 1e-9);
    assert_true(score(&r, SIM_GROWER, true) > 50);
    run_done(&r);
}

static void test_one_burst_is_not_growth(void **state)
{
    (void)state;
    run r;
    run_init(&r, 200);
    run_to(&r, 199, true);
    assert_double_equal(score(&r, SIM_BURST, true), 0.0, 1e-9);
    for (unsigned t = 200; t <= 240; t += 5) {
        run_to(&r, t, true);
        mt_leak_parts p;
        mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_BURST], r.t, &p);
        assert_true(p.growth <= 0.25);
        mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_BURST], NULL, &p);
        assert_true(p.growth <= 0.25);
    }
    run_done(&r);
}

static void test_parts(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 120, true);
    mt_leak_parts p;
    mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_CHURN], r.t, &p);
    assert_true(p.retention < 0.05 && p.aging < 0.05);
    mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_CACHE], r.t, &p);
    assert_double_equal(p.retention, 1.0, 1e-9);
    assert_double_equal(p.aging, 1.0, 1e-9);
    assert_double_equal(p.growth, 0.0, 1e-9);
    mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_GROWER], r.t, &p);
    assert_true(p.growth > 0.7 && p.retention == 1.0 && p.aging > 0.9);
    assert_double_equal(p.score, 100 * p.growth * (0.3 + 0.5 * p.magnitude + 0.2 * p.aging), 1e-9);
    assert_double_equal(p.magnitude, log10(1 + p.rate) / 9, 1e-12);
    run_done(&r);
}

static double growth(const run *r, sim_kind k)
{
    return mt_trace_growth(&r->snap->slot, &r->snap->traces[k]);
}

/* GROWTH/s is the present rate: over the window of checkpoint 1 (30-36 s
 * once the target is that old, since the first publish before), so a site
 * that stopped growing reads 0 once its growth is out of the window. */
static void test_growth_is_present_rate(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 5, false);
    assert_double_equal(mt_growth_window_s(&r.snap->slot), 4.0, 1e-9); /* since second 1 */
    assert_double_equal(growth(&r, SIM_GROWER), 1024.0, 1e-6);
    assert_double_equal(growth(&r, SIM_CACHE), 0.0, 1e-9);
    assert_true(growth(&r, SIM_WARMUP) > 10000); /* filling now */
    for (unsigned t = 37; t <= 700; t += 7) {
        run_to(&r, t, false);
        double w = mt_growth_window_s(&r.snap->slot);
        assert_true(w >= 30 && w <= 36);
        assert_double_equal(growth(&r, SIM_GROWER), 1024.0, 1e-6); /* steady: its rate */
        assert_double_equal(growth(&r, SIM_CACHE), 0.0, 1e-9);
        if (t >= 11 + 36) /* the warm-up stopped at 11 s */
            assert_double_equal(growth(&r, SIM_WARMUP), 0.0, 1e-9);
        if (t >= 60 + 36) /* the filling cache stopped at 60 s */
            assert_double_equal(growth(&r, SIM_FILLING), 0.0, 1e-9);
        else if (t <= 60 + 30) /* its growth is in the window */
            assert_true(growth(&r, SIM_FILLING) > 0);
        assert_true(fabs(growth(&r, SIM_CHURN)) < 20 * 64 / 30.0); /* 0..19 blocks alive */
    }
    run_done(&r);
}

static const char *const kind_name[SIM_KINDS] = {"grower", "cache",  "churn", "filling",
                                                 "burst",  "warmup", "lru",   "sawtooth",
                                                 "slow",   "hidden", "small", "keyspace"};

/* a ranks above b at every time checked, with and without the viewer. */
static void expect_above(const run *r, sim_kind a, sim_kind b, unsigned t)
{
    for (int with = 0; with < 2; with++) {
        double sa = score(r, a, with), sb = score(r, b, with);
        if (!(sa > sb))
            fail_msg("at %u s (%s history): %s %.2f is not above %s %.2f", t,
                     with ? "with" : "without", kind_name[a], sa, kind_name[b], sb);
    }
}

/* The cases of docs/leak-score.md, over simulated time. */
static void test_leak_cases(void **state)
{
    (void)state;
    static const sim_kind leaks[] = {SIM_HIDDEN, SIM_KEYSPACE, SIM_GROWER, SIM_SLOW};
    static const sim_kind not_leaks[] = {SIM_CACHE, SIM_CHURN, SIM_LRU, SIM_SAWTOOTH, SIM_BURST};
    run r;
    run_init(&r, 200);
    for (unsigned t = 60; t <= 900; t += 30) {
        run_to(&r, t, true);
        /* the fast leak among temporaries (retention ~0.015) first; magnitude orders the leaks */
        for (size_t i = 0; i + 1 < sizeof leaks / sizeof leaks[0]; i++)
            expect_above(&r, leaks[i], leaks[i + 1], t);
        expect_above(&r, SIM_HIDDEN, SIM_SMALL, t);
        /* every steady leak, even the slowest, above every site that is not one */
        for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++)
            for (size_t j = 0; j < sizeof not_leaks / sizeof not_leaks[0]; j++)
                expect_above(&r, leaks[i], not_leaks[j], t);
        /* a warm-up that stopped at 11 s, a cache that stopped filling at 60 s */
        expect_above(&r, SIM_SLOW, SIM_WARMUP, t);
        if (t >= 150)
            expect_above(&r, SIM_SLOW, SIM_FILLING, t);
    }
    mt_leak_parts p;
    mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_HIDDEN], r.t, &p);
    assert_true(p.retention < 0.05); /* churns: retention does not hide it */
    assert_double_equal(p.rate, 300 * 1024, 1.0);
    mt_leak_score(&r.snap->slot, &r.snap->traces[SIM_LRU], r.t, &p);
    assert_double_equal(p.score, 0, 1e-9); /* full and churning: no growth */
    run_done(&r);
}

/* Names that put the grower and churn in one function, the cache alone. */
static const char *const funcs[SIM_KINDS] = {"work", "cache_fill", "work",
                                             "fill", "burst",      "warmup"};
static const char *const files[] = {"a.c"};
static const char *const mods[] = {"prog"};

static void test_group_score_uses_sums(void **state)
{
    (void)state;
    run r;
    run_init(&r, 100000);
    run_to(&r, 90, true);
    fx_names nm = {funcs, files, mods, SIM_KINDS, 1, 1, {0}, 0, NULL, 0};
    mt_namer namer = fx_namer(&nm);
    long n = mt_table_build(r.t, r.snap, MT_GROUP_FUNCTION, MT_SORT_LEAK, NULL, &namer);
    assert_int_equal(n, SIM_KINDS - 1);
    size_t nr;
    const mt_table_row *rows = mt_table_rows(r.t, &nr);
    size_t w = 0;
    while (w < nr && strcmp(rows[w].label, "work") != 0)
        w++;
    assert_true(w < nr);
    assert_int_equal(rows[w].ntraces, 2);
    mt_shm_trace sum = r.snap->traces[SIM_GROWER];
    const mt_shm_trace *c = &r.snap->traces[SIM_CHURN];
    sum.alloc_count += c->alloc_count;
    sum.free_count += c->free_count;
    sum.live_bytes += c->live_bytes;
    for (unsigned k = 0; k < MT_CKPTS; k++)
        sum.ckpt_live_bytes[k] += c->ckpt_live_bytes[k];
    for (unsigned k = 0; k < MT_AGE_BUCKETS; k++)
        sum.age_bytes[k] += c->age_bytes[k];
    mt_leak_parts p;
    mt_leak_compute(&r.snap->slot, &sum, NULL, &p);
    assert_double_equal(rows[w].leak.retention, p.retention, 1e-12);
    assert_double_equal(rows[w].leak.aging, p.aging, 1e-12);
    assert_true(rows[w].leak.score > 0);
    run_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grower_ranks_first_over_time),
        cmocka_unit_test(test_grower_first_right_after_attach),
        cmocka_unit_test(test_short_checkpoint_is_enough),
        cmocka_unit_test(test_filling_cache_falls_back),
        cmocka_unit_test(test_one_burst_is_not_growth),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_growth_is_present_rate),
        cmocka_unit_test(test_leak_cases),
        cmocka_unit_test(test_group_score_uses_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
