/* text_lines.c -- scrollable pages of text (see text_lines.h). */
#include "text_lines.h"

#include <stdio.h>

#include "draw.h"

void mt_lines_add(mt_text_lines *l, attr_t attr, const char *fmt, ...)
{
    if (l->count >= MT_LINES_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text[l->count], MT_LINE_BYTES, fmt, ap);
    va_end(ap);
    l->attr[l->count++] = attr;
}

void mt_lines_draw(const mt_theme *t, const mt_text_lines *l, int y, int h, long *scroll)
{
    long max = l->count > h ? l->count - h : 0;
    if (*scroll > max)
        *scroll = max;
    if (*scroll < 0)
        *scroll = 0;
    for (int i = 0; i < h; i++) {
        mt_draw_fill(y + i, 0, COLS, A_NORMAL);
        long k = *scroll + i;
        if (k < l->count)
            mt_draw_text(t, y + i, 1, COLS - 1, l->attr[k], l->text[k]);
    }
}
