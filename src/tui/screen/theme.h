/* theme.h -- how the viewer draws: colour attributes (or plain video on a
 * terminal without colours, or with --no-color) and the glyphs of the
 * current locale (UTF-8 line drawing and braille, or ASCII). */
#ifndef MEMTOP_THEME_H
#define MEMTOP_THEME_H

#include <stdbool.h>

#include <ncursesw/curses.h>

typedef struct mt_theme {
    bool utf8;  /* the locale is UTF-8 and --ascii was not given */
    bool color; /* the terminal has colours and --no-color was not given */
    attr_t title, label, value, heading, selected, fkey, fkey_label;
    attr_t good, warn, bad, dim, graph, search;
    const char *sep;      /* between header fields: "│" or "|" */
    const char *ellipsis; /* "…" or "~" */
    const char *delta;    /* "Δ" or "d" */
    const char *rec;      /* "●" or "*" */
    const char *bar;      /* a full cell of a bar: "█" or "#" */
} mt_theme;

/* Decide from the locale, the terminal and the options.  Call after initscr(). */
void mt_theme_init(mt_theme *t, bool want_ascii, bool want_no_color);

#endif
