/* text_lines.h -- a scrollable page of lines (the detail and help views):
 * collect lines with their attributes, then draw any window of them. */
#ifndef MEMTOP_TEXT_LINES_H
#define MEMTOP_TEXT_LINES_H

#include <stdarg.h>

#include "theme.h"

#define MT_LINES_MAX 1024
#define MT_LINE_BYTES 512

typedef struct mt_text_lines {
    int count;
    attr_t attr[MT_LINES_MAX];
    char text[MT_LINES_MAX][MT_LINE_BYTES];
} mt_text_lines;

void mt_lines_add(mt_text_lines *l, attr_t attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* fmt's text as lines that fit the screen (drawn from column 1), broken
 * at spaces; the lines after the first start with `indent` spaces.  For
 * prose that an 80-column screen would cut with an ellipsis. */
void mt_lines_add_wrapped(mt_text_lines *l, attr_t attr, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Draw lines [*scroll, *scroll + h) at rows [y, y + h), clamping *scroll.
 * While lines follow below the window, its last row says how many (and
 * which keys scroll) instead of a line, which the next page shows. */
void mt_lines_draw(const mt_theme *t, const mt_text_lines *l, int y, int h, long *scroll);

#endif
