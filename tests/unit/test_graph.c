/* test_graph.c -- the text area charts of src/tui/screen/graph.c: scaling,
 * resampling that never hides a spike, braille and ASCII cells, the
 * cursor marker, and degenerate input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"

static char out[MT_GRAPH_MAX_H][MT_GRAPH_LINE_BYTES];

static void test_ascii_scale(void **state)
{
    (void)state;
    double v[4] = {0, 1, 2, 4};
    mt_graph_style st = {false, 4, 2, -1};
    assert_true(mt_graph_render(v, 4, &st, out) == 4.0);
    /* 4 half-cell levels: 0 -> empty, 1 -> one half, 2 -> one full, 4 -> both full. */
    assert_string_equal(out[0], "   #");
    assert_string_equal(out[1], " .##");
}

static void test_spike_survives_resampling(void **state)
{
    (void)state;
    double v[1000] = {0};
    v[501] = 10;
    mt_graph_style st = {false, 10, 1, -1};
    mt_graph_render(v, 1000, &st, out);
    assert_string_equal(out[0], "     #    ");
}

static void test_braille(void **state)
{
    (void)state;
    double v[2] = {1, 0};
    mt_graph_style st = {true, 1, 1, -1};
    mt_graph_render(v, 2, &st, out);
    /* Left column full (dots 1,2,3,7 = 0x47), right column empty: U+2847. */
    assert_string_equal(out[0], "\xe2\xa1\x87");
    double w[2] = {0, 0};
    mt_graph_render(w, 2, &st, out);
    assert_string_equal(out[0], "\xe2\xa0\x80"); /* blank braille keeps the width */
}

static void test_marker_and_empty(void **state)
{
    (void)state;
    mt_graph_style st = {false, 5, 1, 1.0};
    assert_true(mt_graph_render(NULL, 0, &st, out) == 0.0);
    assert_string_equal(out[0], "    |");
    /* In braille the cursor flips its column, so it shows on a full area too. */
    double full[2] = {1, 1};
    mt_graph_style br = {true, 1, 1, 0.0};
    mt_graph_render(full, 2, &br, out);
    assert_string_equal(out[0], "\xe2\xa2\xb8"); /* U+28B8: only the right column */
    st.width = 100000;                           /* clamped, never overflows */
    st.height = 100;
    st.marker = -1;
    double v[3] = {1, 2, 3};
    mt_graph_render(v, 3, &st, out);
    assert_int_equal(strlen(out[0]), MT_GRAPH_MAX_W);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_scale),
        cmocka_unit_test(test_spike_survives_resampling),
        cmocka_unit_test(test_braille),
        cmocka_unit_test(test_marker_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
