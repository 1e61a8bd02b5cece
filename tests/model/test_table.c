/* test_table.c -- the viewer's table model on in-memory snapshots: grouping
 * sums, the filter, sort keys and ties, baseline deltas, allocation rates,
 * temporary share, history order and limits, skipped and empty traces, a
 * build of 100,000 traces, the leak score on demand, the sort's order on
 * every key, the TRACE labels (the namer's own strings) and a replay's leak
 * score by cursor position, not by the path the cursor took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "model_fixture.h"

/* cmocka's float assertion compares in float; these figures need double. */
#define assert_double_equal(a, b, eps) check_close((double)(a), (double)(b), (eps), #a, __LINE__)

static void check_close(double a, double b, double eps, const char *what, int line)
{
    if (!(fabs(a - b) <= eps)) {
        fprintf(stderr, "line %d: %s = %.17g, expected %.17g\n", line, what, a, b);
        fail();
    }
}

static const char *const funcs[] = {"parse", "Render", "parse", "load", "Render", "idle"};
static const char *const files[] = {"parser.c", "gfx.c", "parser.c", "io.c", "gfx.c", "x.c"};
static const char *const mods[] = {"app", "libgfx.so", "app", "app", "libgfx.so", "app"};

static fx_names names(void)
{
    return (fx_names){funcs, files, mods, 6, 6, 6, {0}, 0, NULL, 0};
}

/* Six traces: live bytes 100, 500, 300, 50, 200, and an unused one. */
static mt_snapshot *six(void)
{
    mt_snapshot *s = fx_snap(6, 10);
    fx_trace(s, 0, 10, 1000, 9, 900);    /* live 100, 1 */
    fx_trace(s, 1, 20, 800, 15, 300);    /* live 500, 5 */
    fx_trace(s, 2, 40, 400, 30, 100);    /* live 300, 10 */
    fx_trace(s, 3, 5, 50, 0, 0);         /* live 50, 5 */
    fx_trace(s, 4, 100, 1200, 98, 1000); /* live 200, 2 */
    s->traces[0].temporary_count = 3;
    s->traces[4].temporary_count = 49;
    return s; /* trace 5: alloc_count 0 */
}

/* nm: the namer, kept by the caller while it reads the rows' labels. */
static const mt_table_row *build(fx_names *nm, mt_table *t, const mt_snapshot *s, mt_group_key g,
                                 mt_sort_key k, const char *filter, long expect)
{
    mt_namer namer = fx_namer(nm);
    assert_int_equal(mt_table_build(t, s, g, k, filter, &namer), expect);
    size_t n;
    const mt_table_row *rows = mt_table_rows(t, &n);
    assert_int_equal(n, (size_t)expect);
    return rows;
}

static void test_trace_rows_and_skip_unused(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, 5);
    static const uint32_t order[] = {1, 2, 4, 0, 3};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(r[i].trace_id, order[i]);
        assert_int_equal(r[i].ntraces, 1);
    }
    assert_string_equal(r[0].label, "Render (gfx.c:1)");
    assert_string_equal(r[1].label, "parse (parser.c:2)");
    assert_double_equal(r[0].live_bytes, 500, 0);
    assert_double_equal(r[0].live_count, 5, 0);
    assert_double_equal(r[0].alloc_count, 20, 0);
    assert_double_equal(r[0].alloc_bytes, 800, 0);
    assert_double_equal(r[0].free_count, 15, 0);
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_grouping_sums(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_FUNCTION, MT_SORT_LIVE, NULL, 3);
    assert_string_equal(r[0].label, "Render"); /* 1 + 4 */
    assert_double_equal(r[0].live_bytes, 700, 0);
    assert_double_equal(r[0].alloc_count, 120, 0);
    assert_double_equal(r[0].free_count, 113, 0);
    assert_double_equal(r[0].temporary_count, 49, 0);
    assert_int_equal(r[0].ntraces, 2);
    assert_int_equal(r[0].trace_id, 1);       /* the member with the most live bytes */
    assert_string_equal(r[1].label, "parse"); /* 0 + 2 */
    assert_double_equal(r[1].live_bytes, 400, 0);
    assert_int_equal(r[1].trace_id, 2);
    assert_string_equal(r[2].label, "load");
    r = build(&nm, t, s, MT_GROUP_FILE, MT_SORT_LIVE, NULL, 3);
    assert_string_equal(r[0].label, "gfx.c");
    assert_string_equal(r[1].label, "parser.c");
    r = build(&nm, t, s, MT_GROUP_MODULE, MT_SORT_LIVE, NULL, 2);
    assert_string_equal(r[0].label, "libgfx.so");
    assert_double_equal(r[0].live_bytes, 700, 0);
    assert_string_equal(r[1].label, "app"); /* 0 + 2 + 3; 5 is unused */
    assert_double_equal(r[1].live_bytes, 450, 0);
    assert_double_equal(r[1].live_count, 16, 0);
    assert_int_equal(r[1].ntraces, 3);
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_filter(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "RENDER", 2);
    assert_int_equal(r[0].trace_id, 1);
    assert_int_equal(r[1].trace_id, 4);
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "libGFX", 2); /* module name only */
    assert_int_equal(r[0].trace_id, 1);
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "io.c", 1);
    assert_int_equal(r[0].trace_id, 3);
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, ":2)", 1); /* the location line */
    assert_int_equal(r[0].trace_id, 2);
    build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "nothing-like-this", 0);
    build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "", 5);
    r = build(&nm, t, s, MT_GROUP_FUNCTION, MT_SORT_LIVE, "ARS", 1);
    assert_string_equal(r[0].label, "parse");
    build(&nm, t, s, MT_GROUP_FUNCTION, MT_SORT_LIVE, "gfx", 0); /* groups: label only */
    r = build(&nm, t, s, MT_GROUP_MODULE, MT_SORT_LIVE, "gfx", 1);
    assert_string_equal(r[0].label, "libgfx.so");
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_sort_keys(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_COUNT, NULL, 5);
    assert_int_equal(r[0].trace_id, 2); /* 10 live */
    assert_int_equal(r[1].trace_id, 1); /* 5 live, 500 B: before trace 3 (5 live, 50 B) */
    assert_int_equal(r[2].trace_id, 3);
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_TEMPORARY, NULL, 5);
    assert_int_equal(r[0].trace_id, 4);
    assert_int_equal(r[1].trace_id, 0);
    assert_int_equal(r[2].trace_id, 1); /* ties at 0: live bytes */
    /* growth: checkpoint 1 at 5 s */
    s->slot.ckpt_ns[1] = 5000000000ull;
    s->traces[3].ckpt_live_bytes[1] = 0;   /* +50 B in 5 s */
    s->traces[0].ckpt_live_bytes[1] = 600; /* -500 B */
    for (int i = 1; i < 5; i++)
        if (i != 3)
            s->traces[i].ckpt_live_bytes[1] = s->traces[i].live_bytes;
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_GROWTH, NULL, 5);
    assert_int_equal(r[0].trace_id, 3);
    assert_double_equal(r[0].growth_bps, 10, 1e-9);
    assert_int_equal(r[4].trace_id, 0);
    assert_double_equal(r[4].growth_bps, -100, 1e-9);
    r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LEAK, NULL, 5);
    assert_int_equal(r[0].trace_id, 3); /* the only one that grew */
    assert_true(r[0].leak.score > 0);
    assert_double_equal(r[1].leak.score, 0, 0);
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_ties_by_id(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = fx_snap(3, 1);
    for (int i = 0; i < 3; i++) {
        s->traces[i].id = (uint32_t)(2 - i); /* stored in descending id order */
        fx_trace(s, (size_t)i, 1, 8, 0, 0);
    }
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, 3);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(r[i].trace_id, i);
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_baseline_deltas(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *a = six();
    assert_false(mt_table_has_baseline(t));
    assert_int_equal(mt_table_set_baseline(t, a), 0);
    assert_true(mt_table_has_baseline(t));
    mt_snapshot *b = fx_snap(7, 20);
    memcpy(b->traces, a->traces, 6 * sizeof *a->traces);
    fx_trace(b, 1, 25, 1000, 24, 900); /* live 500 -> 100 */
    fx_trace(b, 3, 15, 150, 0, 0);     /* live 50 -> 150 */
    fx_trace(b, 6, 2, 64, 1, 32);      /* new since the baseline */
    b->traces[6].temporary_count = 1;
    /* Traces that neither allocated nor freed since the baseline are not rows. */
    const mt_table_row *r = build(&nm, t, b, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, 3);
    assert_int_equal(r[0].trace_id, 3);
    assert_double_equal(r[0].live_bytes, 100, 0);
    assert_double_equal(r[0].alloc_count, 10, 0);
    assert_int_equal(r[1].trace_id, 6);
    assert_double_equal(r[1].live_bytes, 32, 0);
    assert_double_equal(r[1].temp_share, 0.5, 0); /* of the 2 allocations, not of the 1 free */
    assert_int_equal(r[2].trace_id, 1);
    assert_double_equal(r[2].live_bytes, -400, 0);
    assert_double_equal(r[2].live_count, -4, 0);
    assert_double_equal(r[2].free_count, 9, 0);
    assert_double_equal(r[2].temp_share, 0, 0); /* no temporaries among the 9 frees */
    r = build(&nm, t, b, MT_GROUP_FUNCTION, MT_SORT_LIVE, NULL, 3); /* groups: deltas summed */
    assert_string_equal(r[2].label, "Render");
    assert_double_equal(r[2].live_bytes, -400, 0);
    mt_table_clear_baseline(t);
    assert_false(mt_table_has_baseline(t));
    r = build(&nm, t, b, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, 6);
    assert_int_equal(r[0].trace_id, 2);
    assert_double_equal(r[0].live_bytes, 300, 0);
    fx_snap_free(a);
    fx_snap_free(b);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_allocs_ps_and_temp_share(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *a = six();
    mt_snapshot *b = six();
    b->slot.t_ns = a->slot.t_ns + 2000000000ull;
    fx_trace(b, 4, 140, 1600, 138, 1400);
    b->traces[4].temporary_count = 49;
    mt_table_observe(t, a, NULL);
    const mt_table_row *r = build(&nm, t, a, MT_GROUP_TRACE, MT_SORT_ALLOCS, NULL, 5);
    assert_double_equal(r[0].allocs_ps, 0, 0); /* no previous snapshot */
    /* no rate known (the first snapshot, a replay's every one): by the count,
     * not in the order of live bytes that equal rates left */
    assert_int_equal(r[0].trace_id, 4); /* 100 allocations */
    assert_int_equal(r[1].trace_id, 2); /* 40 */
    assert_int_equal(r[4].trace_id, 3); /* 5 */
    mt_table_observe(t, b, a);
    r = build(&nm, t, b, MT_GROUP_TRACE, MT_SORT_ALLOCS, NULL, 5);
    assert_int_equal(r[0].trace_id, 4);
    assert_double_equal(r[0].allocs_ps, 20, 1e-6);             /* 40 in 2 s */
    assert_double_equal(r[0].temp_share, 49.0 / 140.0, 1e-12); /* of allocations, not frees */
    assert_double_equal(r[1].allocs_ps, 0, 0);
    r = build(&nm, t, b, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, 5);
    assert_int_equal(r[4].trace_id, 3);
    assert_double_equal(r[4].temp_share, 0, 0); /* no temporaries */
    r = build(&nm, t, b, MT_GROUP_FILE, MT_SORT_LIVE, NULL, 3);
    assert_string_equal(r[0].label, "gfx.c");
    assert_double_equal(r[0].allocs_ps, 20, 1e-6);
    fx_snap_free(a);
    fx_snap_free(b);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_history(void **state)
{
    (void)state;
    mt_table *t = mt_table_new();
    mt_snapshot *prev = NULL;
    double live[64];
    uint64_t when[64];
    assert_int_equal(mt_table_history(t, 0, live, when, 64), 0);
    for (int i = 1; i <= 40; i++) {
        mt_snapshot *s = fx_snap(i < 20 ? 1 : 2, i);
        fx_trace(s, 0, (uint64_t)i, (uint64_t)i * 10, 0, 0);
        if (i >= 20)
            fx_trace(s, 1, 1, 7, 0, 0);
        mt_table_observe(t, s, prev);
        mt_table_observe(t, s, prev); /* the same snapshot again: ignored */
        fx_snap_free(prev);
        prev = s;
    }
    size_t n = mt_table_history(t, 0, live, when, 10);
    assert_int_equal(n, 10);
    for (int k = 0; k < 10; k++) {
        assert_double_equal(live[k], (31 + k) * 10, 0);
        assert_int_equal(when[k], (uint64_t)(31 + k) * 1000000000ull);
    }
    n = mt_table_history(t, 0, live, when, 64);
    assert_int_equal(n, 32); /* the ring keeps the last 32 */
    assert_double_equal(live[0], 90, 0);
    assert_double_equal(live[31], 400, 0);
    n = mt_table_history(t, 1, live, NULL, 64); /* born at 20 s: 0 before */
    assert_int_equal(n, 32);
    assert_double_equal(live[10], 0, 0);
    assert_double_equal(live[11], 7, 0);
    assert_int_equal(mt_table_history(t, 99, live, when, 64), 0);
    /* A row's history: the sum of its members. */
    fx_names nm = names();
    mt_namer namer = fx_namer(&nm);
    nm.nmodule = 1; /* both traces in module "app" */
    assert_int_equal(mt_table_build(t, prev, MT_GROUP_MODULE, MT_SORT_LIVE, NULL, &namer), 1);
    n = mt_table_row_history(t, 0, live, NULL, 2);
    assert_int_equal(n, 2);
    assert_double_equal(live[1], 407, 0);
    /* An older snapshot: a new process image, history starts afresh. */
    mt_snapshot *s = fx_snap(1, 1);
    fx_trace(s, 0, 1, 5, 0, 0);
    mt_table_set_baseline(t, prev);
    mt_table_observe(t, s, prev);
    assert_false(mt_table_has_baseline(t));
    n = mt_table_history(t, 0, live, when, 64);
    assert_int_equal(n, 1);
    assert_double_equal(live[0], 5, 0);
    fx_snap_free(s);
    fx_snap_free(prev);
    mt_table_free(t);
    fx_names_free(&nm);
}

static void test_empty_and_no_namer(void **state)
{
    (void)state;
    mt_table *t = mt_table_new();
    mt_snapshot *e = fx_snap(0, 1);
    mt_table_observe(t, e, NULL);
    assert_int_equal(mt_table_build(t, e, MT_GROUP_TRACE, MT_SORT_LEAK, NULL, NULL), 0);
    assert_int_equal(mt_table_build(t, e, MT_GROUP_FUNCTION, MT_SORT_LIVE, "x", NULL), 0);
    mt_snapshot *s = six();
    assert_int_equal(mt_table_build(t, s, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, NULL), 5);
    size_t n;
    const mt_table_row *r = mt_table_rows(t, &n);
    assert_string_equal(r[0].label, "#1");
    fx_snap_free(e);
    fx_snap_free(s);
    mt_table_free(t);
}

static void test_100k_traces(void **state)
{
    (void)state;
    enum { N = 100000 };
    mt_table *t = mt_table_new();
    mt_snapshot *a = fx_snap(N, 1), *b = fx_snap(N, 2);
    for (size_t i = 0; i < N; i++) {
        uint64_t live = (i * 7919u) % 100003u;
        fx_trace(a, i, 1 + live, live * 2, 1, live);
        fx_trace(b, i, 2 + live, live * 2 + 16, 1, live);
    }
    mt_table_observe(t, a, NULL);
    mt_table_observe(t, b, a);
    fx_names nm = names();
    mt_namer namer = fx_namer(&nm);
    assert_int_equal(mt_table_build(t, b, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, &namer), N);
    size_t n;
    const mt_table_row *r = mt_table_rows(t, &n);
    for (size_t i = 1; i < n; i++)
        assert_true(r[i - 1].live_bytes >= r[i].live_bytes);
    assert_double_equal(r[0].allocs_ps, 1, 1e-6);
    assert_int_equal(mt_table_build(t, b, MT_GROUP_FUNCTION, MT_SORT_LEAK, NULL, &namer), 4);
    assert_int_equal(mt_table_build(t, b, MT_GROUP_TRACE, MT_SORT_LEAK, "load", &namer),
                     N / 6 + (N % 6 > 3));
    fx_snap_free(a);
    fx_snap_free(b);
    mt_table_free(t);
    fx_names_free(&nm);
}

/* Without sorting by leak, the score is computed on demand, and is the same. */
static void test_leak_on_demand(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    s->slot.ckpt_ns[1] = 5000000000ull;
    s->slot.age_scan_ns = s->slot.t_ns;
    for (int i = 0; i < 5; i++) {
        s->traces[i].ckpt_live_bytes[1] = s->traces[i].live_bytes / (uint64_t)(i + 1);
        s->traces[i].age_bytes[i % MT_AGE_BUCKETS] = s->traces[i].live_bytes;
    }
    mt_table_observe(t, s, NULL);
    for (int g = MT_GROUP_TRACE; g <= MT_GROUP_FUNCTION; g++) {
        long n = g == MT_GROUP_TRACE ? 5 : 3;
        const mt_table_row *r = build(&nm, t, s, (mt_group_key)g, MT_SORT_LEAK, NULL, n);
        mt_leak_parts want[6];
        uint32_t ids[6];
        for (long i = 0; i < n; i++) {
            want[i] = r[i].leak;
            ids[i] = r[i].trace_id;
        }
        assert_true(want[0].score > 0);
        assert_true(mt_table_leak(t, 0) == &r[0].leak);
        r = build(&nm, t, s, (mt_group_key)g, MT_SORT_LIVE, NULL, n);
        assert_null(mt_table_leak(t, (size_t)n));
        for (long i = 0; i < n; i++) {
            assert_double_equal(r[i].leak.score, 0, 0); /* not computed yet */
            long j = 0;
            while (ids[j] != r[i].trace_id)
                j++;
            const mt_leak_parts *p = mt_table_leak(t, (size_t)i);
            assert_memory_equal(p, &want[j], sizeof *p);
            assert_memory_equal(&r[i].leak, &want[j], sizeof *p); /* cached in the row */
        }
    }
    assert_null(mt_table_leak(NULL, 0));
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

/* A trace growing 80 KiB/s seen at t_s, with the publisher's checkpoints
 * 33 s and 1 s before (as a replay's snapshot carries them). */
static mt_snapshot *growing_at(double t_s)
{
    mt_snapshot *s = fx_snap(1, t_s);
    uint64_t live = (uint64_t)(t_s * 81920);
    fx_trace(s, 0, (uint64_t)t_s * 10, live, 0, 0);
    s->slot.ckpt_ns[1] = s->slot.t_ns - 33000000000ull;
    s->slot.ckpt_ns[0] = s->slot.t_ns - 1000000000ull;
    s->traces[0].ckpt_live_bytes[1] = live - 33 * 81920;
    s->traces[0].ckpt_live_bytes[0] = live - 81920;
    s->slot.age_scan_ns = s->slot.t_ns;
    s->traces[0].age_bytes[2] = live;
    return s;
}

/* A recording's cursor: the leak score at one position is the same however
 * the cursor got there (opened at the end, or moved back and forward), and
 * the export's at that position (no viewer history). */
static void test_replay_leak_by_cursor(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_table_set_rewinds(t);
    mt_snapshot *end = growing_at(100), *early = growing_at(90), *mid = growing_at(95);
    mt_leak_parts want;
    mt_leak_score(&end->slot, &end->traces[0], NULL, &want);
    assert_true(want.score > 0);
    mt_table_observe(t, end, NULL); /* opened at the end */
    const mt_table_row *r = build(&nm, t, end, MT_GROUP_TRACE, MT_SORT_LEAK, NULL, 1);
    assert_double_equal(r[0].leak.score, want.score, 0);
    mt_table_observe(t, early, NULL); /* '{' back, then '}' twice */
    mt_table_observe(t, mid, NULL);
    mt_table_observe(t, end, NULL);
    r = build(&nm, t, end, MT_GROUP_TRACE, MT_SORT_LEAK, NULL, 1);
    assert_double_equal(r[0].leak.score, want.score, 0);
    r = build(&nm, t, end, MT_GROUP_MODULE, MT_SORT_LEAK, NULL, 1);
    assert_double_equal(r[0].leak.score, want.score, 0);
    fx_snap_free(early);
    fx_snap_free(mid);
    fx_snap_free(end);
    mt_table_free(t);
    fx_names_free(&nm);
}

static double key_of(mt_table *t, const mt_table_row *r, size_t i, mt_sort_key k)
{
    switch (k) {
    case MT_SORT_COUNT:
        return r->live_count;
    case MT_SORT_ALLOCS:
        return r->allocs_ps;
    case MT_SORT_TEMPORARY:
        return r->temporary_count;
    case MT_SORT_GROWTH:
        return r->growth_bps;
    case MT_SORT_LEAK:
        return mt_table_leak(t, i)->score;
    default:
        return r->live_bytes;
    }
}

/* Every key, ids out of order, many ties, negative deltas: each row once, in
 * order (key desc, then live bytes desc, then id asc). */
static void test_sort_order(void **state)
{
    (void)state;
    enum { N = 3000 };
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *a = fx_snap(N, 1), *b = fx_snap(N, 3);
    uint32_t x = 12345;
    for (size_t i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        uint32_t id = (uint32_t)((i * 7919u) % N); /* a permutation */
        a->traces[i].id = b->traces[i].id = id;
        uint64_t allocs = 1 + (x >> 8) % 4, frees = (x >> 12) % 2;
        fx_trace(a, i, allocs, allocs * 64, frees, frees * 64);
        fx_trace(b, i, allocs + (x >> 16) % 3, (allocs + (x >> 16) % 3) * 64, frees + (x >> 20) % 2,
                 (frees + (x >> 20) % 2) * 64);
        b->traces[i].temporary_count = (x >> 24) % 3;
        b->traces[i].ckpt_live_bytes[1] = (x >> 26) % 2 ? b->traces[i].live_bytes : 0;
    }
    b->slot.ckpt_ns[1] = 2000000000ull;
    mt_table_observe(t, a, NULL);
    mt_table_observe(t, b, a);
    for (int base = 0; base < 2; base++) {
        if (base)
            assert_int_equal(mt_table_set_baseline(t, a), 0);
        for (int k = 0; k < MT_SORT_KEYS; k++) {
            size_t n;
            mt_namer namer = fx_namer(&nm);
            long want = mt_table_build(t, b, MT_GROUP_TRACE, (mt_sort_key)k, NULL, &namer);
            const mt_table_row *r = mt_table_rows(t, &n);
            assert_true(want > N / 2 && (size_t)want == n);
            static bool seen[N];
            memset(seen, 0, sizeof seen);
            for (size_t i = 0; i < n; i++) {
                assert_false(seen[r[i].trace_id]);
                seen[r[i].trace_id] = true;
                if (!i)
                    continue;
                double k0 = key_of(t, &r[i - 1], i - 1, (mt_sort_key)k);
                double k1 = key_of(t, &r[i], i, (mt_sort_key)k);
                assert_true(k0 >= k1);
                if (k0 == k1) {
                    assert_true(r[i - 1].live_bytes >= r[i].live_bytes);
                    if (r[i - 1].live_bytes == r[i].live_bytes)
                        assert_true(r[i - 1].trace_id < r[i].trace_id);
                }
            }
        }
    }
    fx_snap_free(a);
    fx_snap_free(b);
    mt_table_free(t);
    fx_names_free(&nm);
}

/* TRACE labels are the namer's strings (asked last for each id, also when
 * the filter asked for other names first); without a namer, "#id" each. */
static void test_trace_labels(void **state)
{
    (void)state;
    fx_names nm = names();
    mt_table *t = mt_table_new();
    mt_snapshot *s = six();
    const mt_table_row *r = build(&nm, t, s, MT_GROUP_TRACE, MT_SORT_LIVE, "app", 3);
    assert_string_equal(r[0].label, "parse (parser.c:2)"); /* matched by module */
    assert_string_equal(r[1].label, "parse (parser.c:0)");
    assert_string_equal(r[2].label, "load (io.c:3)");
    assert_true(r[0].label == nm.trace[2]); /* not copied */
    assert_int_equal(mt_table_build(t, s, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, NULL), 5);
    size_t n;
    r = mt_table_rows(t, &n);
    static const char *const want[] = {"#1", "#2", "#4", "#0", "#3"};
    for (size_t i = 0; i < n; i++)
        assert_string_equal(r[i].label, want[i]);
    fx_snap_free(s);
    mt_table_free(t);
    fx_names_free(&nm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_rows_and_skip_unused),
        cmocka_unit_test(test_grouping_sums),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_sort_keys),
        cmocka_unit_test(test_ties_by_id),
        cmocka_unit_test(test_baseline_deltas),
        cmocka_unit_test(test_allocs_ps_and_temp_share),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_empty_and_no_namer),
        cmocka_unit_test(test_100k_traces),
        cmocka_unit_test(test_leak_on_demand),
        cmocka_unit_test(test_replay_leak_by_cursor),
        cmocka_unit_test(test_sort_order),
        cmocka_unit_test(test_trace_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
