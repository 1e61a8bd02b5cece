/* draw.c -- column-exact text output (see draw.h). */
#include "draw.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

#define MAX_CHARS 1024

/* Decode s into printable wide characters (control and invalid bytes
 * become '?'), with their widths; returns how many. */
static int decode(const char *s, wchar_t *wc, int *wid, int max)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int n = 0;
    size_t len = strlen(s);
    while (len && n < max) {
        wchar_t c;
        size_t k = mbrtowc(&c, s, len, &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
            memset(&st, 0, sizeof st);
            c = L'?';
            k = 1;
        }
        int w = wcwidth(c);
        if (w < 0 || c < 0x20 || c == 0x7f) {
            c = L'?';
            w = 1;
        }
        wc[n] = c;
        wid[n++] = w;
        s += k;
        len -= k;
    }
    return n;
}

int mt_text_width(const char *s)
{
    wchar_t wc[MAX_CHARS];
    int wid[MAX_CHARS], total = 0;
    int n = decode(s, wc, wid, MAX_CHARS);
    for (int i = 0; i < n; i++)
        total += wid[i];
    return total;
}

int mt_draw_text(const mt_theme *t, int y, int x, int w, attr_t attr, const char *s)
{
    if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    wchar_t wc[MAX_CHARS];
    int wid[MAX_CHARS];
    int n = decode(s, wc, wid, MAX_CHARS), total = 0, fit = 0;
    for (int i = 0; i < n; i++)
        total += wid[i];
    int room = total > w ? w - 1 : w; /* keep a column for the ellipsis */
    int used = 0;
    while (fit < n && used + wid[fit] <= room)
        used += wid[fit++];
    attr_t old_attr;
    short old_pair;
    attr_get(&old_attr, &old_pair, NULL);
    attrset(attr);
    mvaddnwstr(y, x, wc, fit);
    if (total > w && w > 0) {
        addstr(t->ellipsis);
        used++;
    }
    attr_set(old_attr, old_pair, NULL);
    return used;
}

int mt_draw_fmt(const mt_theme *t, int y, int x, int w, attr_t attr, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return mt_draw_text(t, y, x, w, attr, buf);
}

void mt_draw_right(const mt_theme *t, int y, int x_end, int w, attr_t attr, const char *s)
{
    int tw = mt_text_width(s);
    int x = x_end - (tw < w ? tw : w);
    mt_draw_text(t, y, x, w, attr, s);
}

void mt_draw_fill(int y, int x, int w, attr_t attr)
{
    if (y < 0 || y >= LINES)
        return;
    attr_t old_attr;
    short old_pair;
    attr_get(&old_attr, &old_pair, NULL);
    attrset(attr);
    for (int i = 0; i < w && x + i < COLS; i++)
        mvaddch(y, x + i, ' ');
    attr_set(old_attr, old_pair, NULL);
}
