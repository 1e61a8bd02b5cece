/* test_calltree.c -- the call tree builder (src/tui/model/calltree*.c) on
 * hand-made paths: inclusive and own figures top-down and bottom-up,
 * recursion counted once per node, inlined frames as nodes of their own,
 * folding below the threshold into "(other)", the sort on the sort key,
 * the paths kept from build to build (and forgotten), and the tree of a table's rows (the baseline
 * and the filter carry over). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calltree.h"
#include "model_fixture.h"

#define F(s)                                                                                       \
    {                                                                                              \
        s, false                                                                                   \
    }

static mt_ct_fig fig(double bytes, double count)
{
    return (mt_ct_fig){.live_bytes = bytes, .live_count = count, .alloc_count = count};
}

static void add(mt_calltree *t, uint32_t id, const mt_ct_frame *p, unsigned n, double bytes,
                double count)
{
    mt_ct_fig f = fig(bytes, count);
    assert_int_equal(mt_calltree_add(t, id, p, n, &f), 0);
}

/* The node at path "a/b/c" below the roots (sorted order), or NULL. */
static const mt_ct_node *at(const mt_calltree *t, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    uint32_t cur = mt_calltree_first_root(t);
    const mt_ct_node *nd = NULL;
    for (char *save = NULL, *tok = strtok_r(buf, "/", &save); tok;
         tok = strtok_r(NULL, "/", &save)) {
        for (nd = NULL; cur != MT_CT_NONE; cur = mt_calltree_node(t, cur)->next_sibling)
            if (strcmp(mt_calltree_name(t, mt_calltree_node(t, cur)), tok) == 0) {
                nd = mt_calltree_node(t, cur);
                break;
            }
        if (!nd)
            return NULL;
        cur = nd->first_child;
    }
    return nd;
}

static void expect(const mt_calltree *t, const char *path, double incl, double own)
{
    const mt_ct_node *nd = at(t, path);
    if (!nd)
        fail_msg("no node %s", path);
    if (nd->incl.live_bytes != incl || nd->own.live_bytes != own)
        fail_msg("%s: incl %.0f own %.0f, expected %.0f %.0f", path, nd->incl.live_bytes,
                 nd->own.live_bytes, incl, own);
}

/* Two subsystems sharing a helper, one allocating directly. */
static void subsystems(mt_calltree *t, bool reverse)
{
    static const mt_ct_frame a[] = {F("main"), F("net"), F("helper")};
    static const mt_ct_frame b[] = {F("main"), F("db"), F("helper")};
    static const mt_ct_frame c[] = {F("main"), F("db")};
    mt_calltree_begin(t, reverse);
    add(t, 1, a, 3, 100, 1);
    add(t, 2, b, 3, 50, 2);
    add(t, 3, c, 2, 30, 3);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
}

static void test_top_down(void **state)
{
    (void)state;
    mt_calltree *t = mt_calltree_new();
    subsystems(t, false);
    expect(t, "main", 180, 0);
    expect(t, "main/net", 100, 0);
    expect(t, "main/net/helper", 100, 100);
    expect(t, "main/db", 80, 30);
    expect(t, "main/db/helper", 50, 50);
    assert_int_equal(at(t, "main")->ntraces, 3);
    assert_int_equal(at(t, "main")->top_trace, 1);
    assert_int_equal(at(t, "main/db")->depth, 1);
    assert_true(mt_calltree_totals(t)->live_bytes == 180);
    /* sorted by live bytes: net before db */
    assert_string_equal(mt_calltree_name(t, mt_calltree_node(t, at(t, "main")->first_child)),
                        "net");
    mt_calltree_free(t);
}

static void test_bottom_up(void **state)
{
    (void)state;
    mt_calltree *t = mt_calltree_new();
    subsystems(t, true);
    expect(t, "helper", 150, 150);
    expect(t, "helper/net", 100, 0);
    expect(t, "helper/net/main", 100, 0);
    expect(t, "helper/db", 50, 0);
    expect(t, "helper/db/main", 50, 0);
    expect(t, "db", 30, 30);
    expect(t, "db/main", 30, 0);
    assert_string_equal(mt_calltree_name(t, mt_calltree_node(t, mt_calltree_first_root(t))),
                        "helper");
    assert_true(mt_calltree_reverse(t));
    mt_calltree_free(t);
}

/* Direct recursion is one node; indirect recursion nodes again, and either
 * way no node counts a trace twice. */
static void test_recursion(void **state)
{
    (void)state;
    static const mt_ct_frame deep[] = {F("main"), F("walk"), F("walk"), F("walk"), F("leaf")};
    static const mt_ct_frame flat[] = {F("main"), F("walk"), F("leaf")};
    static const mt_ct_frame ind[] = {F("main"), F("a"), F("b"), F("a"), F("x")};
    mt_calltree *t = mt_calltree_new();
    for (int rev = 0; rev < 2; rev++) {
        mt_calltree_begin(t, rev);
        add(t, 1, deep, 5, 64, 1);
        add(t, 2, flat, 3, 16, 1);
        add(t, 3, ind, 5, 10, 1);
        assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
        if (!rev) {
            expect(t, "main", 90, 0);
            expect(t, "main/walk", 80, 0);
            expect(t, "main/walk/leaf", 80, 80);
            assert_null(at(t, "main/walk/walk"));
            expect(t, "main/a", 10, 0);
            expect(t, "main/a/b", 10, 0);
            expect(t, "main/a/b/a", 10, 0);
            expect(t, "main/a/b/a/x", 10, 10);
        } else {
            expect(t, "leaf", 80, 80);
            expect(t, "leaf/walk", 80, 0);
            expect(t, "leaf/walk/main", 80, 0);
            expect(t, "x/a/b/a/main", 10, 0);
        }
    }
    mt_calltree_free(t);
}

static void test_inlined_is_a_node(void **state)
{
    (void)state;
    static const mt_ct_frame p[] = {F("main"), {"fill", true}, F("fill")};
    mt_calltree *t = mt_calltree_new();
    mt_calltree_begin(t, false);
    add(t, 1, p, 3, 8, 1);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
    const mt_ct_node *in = at(t, "main/fill");
    assert_non_null(in);
    assert_true(in->inlined);
    expect(t, "main/fill/fill", 8, 8); /* not merged: one is inlined, one is not */
    assert_false(at(t, "main/fill/fill")->inlined);
    mt_calltree_free(t);
}

static void test_threshold_folds_into_other(void **state)
{
    (void)state;
    static const mt_ct_frame a[] = {F("main"), F("big")};
    static const mt_ct_frame b[] = {F("main"), F("small1"), F("deep")};
    static const mt_ct_frame c[] = {F("main"), F("small2")};
    static const mt_ct_frame d[] = {F("tiny_root")};
    mt_calltree *t = mt_calltree_new();
    mt_calltree_begin(t, false);
    add(t, 1, a, 2, 1000, 1);
    add(t, 2, b, 3, 40, 1);
    add(t, 3, c, 2, 60, 1);
    add(t, 4, d, 1, 5, 1);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 100), 0);
    expect(t, "main", 1100, 0);
    expect(t, "main/big", 1000, 1000);
    expect(t, "main/(other)", 100, 100);
    assert_null(at(t, "main/small1"));
    const mt_ct_node *o = at(t, "main/(other)");
    assert_true(o->other);
    assert_int_equal(o->ntraces, 2);
    assert_int_equal(o->top_trace, 3);
    assert_int_equal(o->first_child, MT_CT_NONE);
    assert_int_equal(at(t, "main")->nchildren, 2);
    expect(t, "(other)", 5, 5); /* roots fold too */
    assert_null(at(t, "tiny_root"));
    mt_calltree_free(t);
}

static void test_sort_key(void **state)
{
    (void)state;
    static const mt_ct_frame a[] = {F("main"), F("few_big")};
    static const mt_ct_frame b[] = {F("main"), F("many_small")};
    mt_calltree *t = mt_calltree_new();
    mt_calltree_begin(t, false);
    add(t, 1, a, 2, 1000, 1);
    add(t, 2, b, 2, 10, 50);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_COUNT, 0), 0);
    const mt_ct_node *m = at(t, "main");
    assert_string_equal(mt_calltree_name(t, mt_calltree_node(t, m->first_child)), "many_small");
    mt_calltree_begin(t, false);
    add(t, 1, a, 2, 1000, 1);
    add(t, 2, b, 2, 10, 50);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
    m = at(t, "main");
    assert_string_equal(mt_calltree_name(t, mt_calltree_node(t, m->first_child)), "few_big");
    /* allocations without rates (a replay: every allocs_ps 0): by the count,
     * as the table sorts, not by live bytes under a tie of zeros */
    mt_calltree_allocs_by_count(t, true);
    mt_calltree_begin(t, false);
    add(t, 1, a, 2, 1000, 1);
    add(t, 2, b, 2, 10, 50);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_ALLOCS, 0), 0);
    m = at(t, "main");
    assert_string_equal(mt_calltree_name(t, mt_calltree_node(t, m->first_child)), "many_small");
    mt_calltree_free(t);
}

static void test_no_frames_is_unknown(void **state)
{
    (void)state;
    mt_calltree *t = mt_calltree_new();
    mt_calltree_begin(t, false);
    add(t, 0, NULL, 0, 7, 1);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
    expect(t, "[unknown]", 7, 7);
    mt_calltree_free(t);
}

/* A second build keeps the paths: known traces are added without one, a
 * trace missing from the build hides its nodes, forget drops them all. */
static void test_kept_paths(void **state)
{
    (void)state;
    static const mt_ct_frame a[] = {F("main"), F("net"), F("helper")};
    static const mt_ct_frame b[] = {F("main"), F("db")};
    mt_calltree *t = mt_calltree_new();
    mt_calltree_begin(t, false);
    add(t, 1, a, 3, 100, 1);
    add(t, 2, b, 2, 30, 1);
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 10), 0);
    mt_calltree_begin(t, false);
    mt_ct_fig f = fig(7, 1);
    assert_true(mt_calltree_add_known(t, 2, &f));
    assert_false(mt_calltree_add_known(t, 3, &f));
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 10), 0);
    expect(t, "(other)", 7, 7); /* main (only db now), under the threshold */
    assert_null(at(t, "main"));
    mt_calltree_begin(t, false);
    assert_true(mt_calltree_add_known(t, 2, &f));
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
    expect(t, "main/db", 7, 7);
    assert_null(at(t, "main/net")); /* no trace of this build goes through net */
    assert_int_equal(at(t, "main")->nchildren, 1);
    mt_calltree_begin(t, false);
    assert_true(mt_calltree_add_known(t, 1, &f));
    assert_int_equal(mt_calltree_finish(t, MT_SORT_LIVE, 0), 0);
    expect(t, "main/net/helper", 7, 7);
    assert_null(at(t, "(other)")); /* an earlier build's (other) is gone */
    mt_calltree_forget(t);
    mt_calltree_begin(t, false);
    assert_false(mt_calltree_add_known(t, 1, &f));
    mt_calltree_begin(t, true); /* the other direction: paths forgotten */
    add(t, 1, a, 3, 5, 1);
    mt_calltree_begin(t, false);
    assert_false(mt_calltree_add_known(t, 1, &f));
    mt_calltree_free(t);
}

/* Paths for the table test: trace id i goes main -> sub<i % 2> -> alloc. */
static unsigned path_of(void *ctx, uint32_t id, const mt_ct_frame **out)
{
    static mt_ct_frame p[3];
    (void)ctx;
    p[0] = (mt_ct_frame)F("main");
    p[1] = (mt_ct_frame)F(id % 2 ? "odd" : "even");
    p[2] = (mt_ct_frame)F("alloc");
    *out = p;
    return 3;
}

static const char *const funcs[] = {"f0", "f1", "f2", "f3"};

/* A table of four traces, live 100, 200, 300 and 400 bytes, built with
 * namer and no filter (*s: their snapshot). */
static mt_table *four_traces(mt_snapshot **s, const mt_namer *namer)
{
    mt_table *tab = mt_table_new();
    *s = fx_snap(4, 10);
    for (size_t i = 0; i < 4; i++)
        fx_trace(*s, i, 10, 100 * (i + 1), 0, 0);
    mt_table_observe(tab, *s, NULL);
    assert_int_equal(mt_table_build(tab, *s, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, namer), 4);
    return tab;
}

static const char *const files[] = {"a.c", "b.c", "c.c", "d.c"};
static const char *const modules[] = {"liba.so", "libb.so", "libc.so", "libd.so"};

/* The tree's `/` matches a trace's file and module names as the table's
 * does (the viewer builds the tree's table unfiltered). */
static void test_from_table_filter_file_module(void **state)
{
    (void)state;
    fx_names nm = {funcs, files, modules, 4, 4, 4, {0}, 0, NULL, 0};
    mt_namer namer = fx_namer(&nm);
    mt_snapshot *s;
    mt_table *tab = four_traces(&s, &namer);
    mt_calltree *t = mt_calltree_new();
    assert_int_equal(
        mt_calltree_from_table(t, tab, false, MT_SORT_LIVE, 0, "C.C", &namer, path_of, NULL), 0);
    expect(t, "main", 300, 0); /* trace 2 alone: its file (also in its label) */
    assert_null(at(t, "main/odd"));
    assert_int_equal(
        mt_calltree_from_table(t, tab, false, MT_SORT_LIVE, 0, "libb", &namer, path_of, NULL), 0);
    expect(t, "main/odd", 200, 0); /* trace 1 alone: its module */
    assert_null(at(t, "main/even"));
    /* without a namer only labels and paths match (a label names no module) */
    assert_int_equal(
        mt_calltree_from_table(t, tab, false, MT_SORT_LIVE, 0, "libc", NULL, path_of, NULL), 0);
    assert_null(at(t, "main"));
    mt_calltree_free(t);
    mt_table_free(tab);
    fx_snap_free(s);
    fx_names_free(&nm);
}

static void test_from_table_baseline_filter(void **state)
{
    (void)state;
    fx_names nm = {funcs, funcs, funcs, 4, 4, 4, {0}, 0, NULL, 0};
    mt_namer namer = fx_namer(&nm);
    mt_snapshot *s;
    mt_table *tab = four_traces(&s, &namer);
    assert_false(mt_table_rates_known(tab)); /* one snapshot: the tree sorts allocs by count */
    mt_calltree *t = mt_calltree_new();
    assert_int_equal(
        mt_calltree_from_table(t, tab, false, MT_SORT_LIVE, 0, NULL, NULL, path_of, NULL), 0);
    expect(t, "main", 1000, 0);
    expect(t, "main/odd", 600, 0);
    expect(t, "main/even/alloc", 400, 400);
    /* the filter: only f3's trace */
    assert_int_equal(mt_table_build(tab, s, MT_GROUP_TRACE, MT_SORT_LIVE, "f3", &namer), 1);
    assert_int_equal(
        mt_calltree_from_table(t, tab, false, MT_SORT_LIVE, 0, NULL, NULL, path_of, NULL), 0);
    expect(t, "main", 400, 0);
    assert_null(at(t, "main/even"));
    /* the baseline: deltas */
    assert_int_equal(mt_table_set_baseline(tab, s), 0);
    mt_snapshot *s2 = fx_snap(4, 11);
    for (size_t i = 0; i < 4; i++)
        fx_trace(s2, i, 11, 100 * (i + 1) + 7, 0, 0);
    mt_table_observe(tab, s2, s);
    assert_int_equal(mt_table_build(tab, s2, MT_GROUP_TRACE, MT_SORT_LIVE, NULL, &namer), 4);
    assert_int_equal(
        mt_calltree_from_table(t, tab, true, MT_SORT_LIVE, 0, NULL, NULL, path_of, NULL), 0);
    expect(t, "alloc", 28, 28);
    expect(t, "alloc/odd/main", 14, 0);
    mt_calltree_free(t);
    mt_table_free(tab);
    fx_snap_free(s);
    fx_snap_free(s2);
    fx_names_free(&nm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top_down),
        cmocka_unit_test(test_bottom_up),
        cmocka_unit_test(test_recursion),
        cmocka_unit_test(test_inlined_is_a_node),
        cmocka_unit_test(test_threshold_folds_into_other),
        cmocka_unit_test(test_sort_key),
        cmocka_unit_test(test_no_frames_is_unknown),
        cmocka_unit_test(test_kept_paths),
        cmocka_unit_test(test_from_table_baseline_filter),
        cmocka_unit_test(test_from_table_filter_file_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
