/* draw.h -- putting text on the screen by columns, not bytes: UTF-8 text
 * (paths, demangled names) is measured with wcwidth, clipped to a width
 * with an ellipsis, and control characters never reach the terminal. */
#ifndef MEMTOP_DRAW_H
#define MEMTOP_DRAW_H

#include <stdarg.h>

#include "theme.h"

/* Columns s takes on screen (invalid bytes count as one column each). */
int mt_text_width(const char *s);

/* Draw s at (y, x) in at most w columns; clip with the theme's ellipsis.
 * Returns the columns used. */
int mt_draw_text(const mt_theme *t, int y, int x, int w, attr_t attr, const char *s);

/* printf-style mt_draw_text. */
int mt_draw_fmt(const mt_theme *t, int y, int x, int w, attr_t attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Right-align s in the w columns ending before x_end. */
void mt_draw_right(const mt_theme *t, int y, int x_end, int w, attr_t attr, const char *s);

/* Fill columns [x, x + w) of row y with spaces in attr. */
void mt_draw_fill(int y, int x, int w, attr_t attr);

#endif
