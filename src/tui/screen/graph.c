/* graph.c -- text area charts (see graph.h). */
#include "graph.h"

#include <string.h>

/* Braille dots filled bottom-up: left column 7,3,2,1 then right 8,6,5,4. */
static const unsigned char left_dots[4] = {0x40, 0x04, 0x02, 0x01};
static const unsigned char right_dots[4] = {0x80, 0x20, 0x10, 0x08};

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The largest value among vals[] mapped onto column c of cols. */
static double column_value(const double *vals, size_t n, int c, int cols)
{
    size_t a = (size_t)((double)c * (double)n / cols);
    size_t b = (size_t)((double)(c + 1) * (double)n / cols);
    if (b <= a)
        b = a + 1;
    if (b > n)
        b = n;
    double m = vals[a < n ? a : n - 1];
    for (size_t i = a; i < b; i++)
        if (vals[i] > m)
            m = vals[i];
    return m;
}

/* Heights (in dots or half-cells) of each column, 0..levels. */
static void levels_of(const double *vals, size_t n, int cols, int levels, double max, int *out)
{
    for (int c = 0; c < cols; c++) {
        double v = n ? column_value(vals, n, c, cols) : 0;
        int l = max > 0 && v > 0 ? (int)(v / max * levels + 0.5) : 0;
        /* Anything above zero shows at least one dot. */
        out[c] = clampi(v > 0 && l == 0 ? 1 : l, 0, levels);
    }
}

static size_t put_braille(char *p, unsigned bits)
{
    unsigned cp = 0x2800 + bits;
    p[0] = (char)(0xE0 | (cp >> 12));
    p[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    p[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

static void render_braille(const int *lv, const mt_graph_style *st, int marker_col,
                           char out[][MT_GRAPH_LINE_BYTES])
{
    for (int r = 0; r < st->height; r++) {
        char *p = out[r];
        int base = (st->height - 1 - r) * 4;
        for (int c = 0; c < st->width; c++) {
            unsigned bits = 0;
            int l = clampi(lv[2 * c] - base, 0, 4), rgt = clampi(lv[2 * c + 1] - base, 0, 4);
            for (int k = 0; k < l; k++)
                bits |= left_dots[k];
            for (int k = 0; k < rgt; k++)
                bits |= right_dots[k];
            if (c == marker_col)
                bits ^= 0x47; /* flip the left column: a cursor visible on any fill */
            p += put_braille(p, bits);
        }
        *p = 0;
    }
}

static void render_ascii(const int *lv, const mt_graph_style *st, int marker_col,
                         char out[][MT_GRAPH_LINE_BYTES])
{
    for (int r = 0; r < st->height; r++) {
        int base = (st->height - 1 - r) * 2;
        for (int c = 0; c < st->width; c++) {
            int f = clampi(lv[c] - base, 0, 2);
            out[r][c] = c == marker_col ? '|' : f == 2 ? '#' : f == 1 ? '.' : ' ';
        }
        out[r][st->width] = 0;
    }
}

double mt_graph_render(const double *vals, size_t n, const mt_graph_style *in,
                       char out[][MT_GRAPH_LINE_BYTES])
{
    mt_graph_style st = *in;
    st.width = clampi(st.width, 1, MT_GRAPH_MAX_W);
    st.height = clampi(st.height, 1, MT_GRAPH_MAX_H);
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (vals[i] > max)
            max = vals[i];
    int per_cell = st.utf8 ? 2 : 1, cols = st.width * per_cell;
    int lv[MT_GRAPH_MAX_W * 2];
    levels_of(vals, n, cols, st.height * (st.utf8 ? 4 : 2), max, lv);
    int marker = st.marker >= 0 && st.marker <= 1 ? (int)(st.marker * (st.width - 1) + 0.5) : -1;
    if (st.utf8)
        render_braille(lv, &st, marker, out);
    else
        render_ascii(lv, &st, marker, out);
    return max;
}
