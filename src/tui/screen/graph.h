/* graph.h -- a series of values drawn as text: an area chart of width x
 * height terminal cells, in Unicode braille (2 x 4 dots per cell) or in
 * ASCII.  Pure string output, so it is unit-testable and the screens only
 * place the lines. */
#ifndef MEMTOP_GRAPH_H
#define MEMTOP_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#define MT_GRAPH_MAX_W 512
#define MT_GRAPH_MAX_H 16
/* Bytes a rendered line may take: 3 UTF-8 bytes per cell, and the NUL. */
#define MT_GRAPH_LINE_BYTES (MT_GRAPH_MAX_W * 3 + 1)

typedef struct mt_graph_style {
    bool utf8;         /* braille; else ASCII '.' and '#' */
    int width, height; /* cells; clamped to MT_GRAPH_MAX_* */
    double marker;     /* 0..1: a column to mark (e.g. a time cursor), or < 0 for none */
} mt_graph_style;

/* Render n values (oldest first) scaled to [0, max(vals)] into `height`
 * lines of out (row 0 is the top); each line gets exactly `width` cells.
 * The values are resampled to the width (each column shows the largest
 * value in its span, so a spike never disappears).  Returns the maximum
 * used for the scale (0 when n == 0 or every value is <= 0). */
double mt_graph_render(const double *vals, size_t n, const mt_graph_style *st,
                       char out[][MT_GRAPH_LINE_BYTES]);

#endif
