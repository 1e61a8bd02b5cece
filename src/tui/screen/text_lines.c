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

/* Bytes of text that fit in width columns (UTF-8: a continuation byte
 * takes none): up to its last space that fits, or all of it; a word
 * longer than the line is cut. */
static size_t fit_len(const char *text, int width)
{
    size_t n = 0, last_space = 0;
    for (int cols = 0; text[n]; n++) {
        if (((unsigned char)text[n] & 0xC0) == 0x80)
            continue;
        if (cols++ == width)
            return last_space ? last_space : n;
        if (text[n] == ' ')
            last_space = n;
    }
    return n;
}

void mt_lines_add_wrapped(mt_text_lines *l, attr_t attr, int indent, const char *fmt, ...)
{
    char buf[MT_LINE_BYTES * 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    int width = COLS - 1 > indent + 20 ? COLS - 1 : indent + 20;
    const char *p = buf;
    for (int lead = 0; *p; lead = indent) {
        size_t n = fit_len(p, width - lead);
        mt_lines_add(l, attr, "%*s%.*s", lead, "", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
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
        if (i == h - 1 && h > 1 && *scroll < max) { /* say that the page goes on */
            char more[80];
            long below = max - *scroll + 1; /* this row's line too */
            snprintf(more, sizeof more, "-- %ld more lines: Down, PgDn, End --", below);
            mt_draw_text(t, y + i, 1, COLS - 1, t->dim, more);
        } else if (k < l->count)
            mt_draw_text(t, y + i, 1, COLS - 1, l->attr[k], l->text[k]);
    }
}
