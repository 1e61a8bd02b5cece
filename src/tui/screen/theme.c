/* theme.c -- colours and glyphs (see theme.h).  Colour pairs are the only
 * ncurses state this sets up; everything else is plain attributes, so the
 * monochrome theme is the same code with A_NORMAL/A_BOLD/A_REVERSE. */
#include "theme.h"

#include <langinfo.h>
#include <string.h>

enum {
    P_TITLE = 1,
    P_HEADING,
    P_SELECTED,
    P_FKEY,
    P_FKEY_LABEL,
    P_GOOD,
    P_WARN,
    P_BAD,
    P_GRAPH,
    P_LABEL,
    P_SEARCH
};

static bool locale_is_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

static void colour_pairs(void)
{
    start_color();
    use_default_colors();
    init_pair(P_TITLE, COLOR_CYAN, -1);
    init_pair(P_HEADING, COLOR_BLACK, COLOR_GREEN);
    init_pair(P_SELECTED, COLOR_BLACK, COLOR_CYAN);
    init_pair(P_FKEY, COLOR_WHITE, -1);
    init_pair(P_FKEY_LABEL, COLOR_BLACK, COLOR_CYAN);
    init_pair(P_GOOD, COLOR_GREEN, -1);
    init_pair(P_WARN, COLOR_YELLOW, -1);
    init_pair(P_BAD, COLOR_RED, -1);
    init_pair(P_GRAPH, COLOR_GREEN, -1);
    init_pair(P_LABEL, COLOR_CYAN, -1);
    init_pair(P_SEARCH, COLOR_BLACK, COLOR_YELLOW);
}

static void colour_attrs(mt_theme *t)
{
    t->title = COLOR_PAIR(P_TITLE) | A_BOLD;
    t->label = COLOR_PAIR(P_LABEL);
    t->value = A_BOLD;
    t->heading = COLOR_PAIR(P_HEADING);
    t->selected = COLOR_PAIR(P_SELECTED);
    t->fkey = COLOR_PAIR(P_FKEY) | A_BOLD;
    t->fkey_label = COLOR_PAIR(P_FKEY_LABEL);
    t->good = COLOR_PAIR(P_GOOD);
    t->warn = COLOR_PAIR(P_WARN) | A_BOLD;
    t->bad = COLOR_PAIR(P_BAD) | A_BOLD;
    t->dim = A_DIM;
    t->graph = COLOR_PAIR(P_GRAPH);
    t->search = COLOR_PAIR(P_SEARCH);
}

static void mono_attrs(mt_theme *t)
{
    t->title = A_BOLD;
    t->label = A_NORMAL;
    t->value = A_BOLD;
    t->heading = A_REVERSE;
    t->selected = A_REVERSE | A_BOLD;
    t->fkey = A_BOLD;
    t->fkey_label = A_REVERSE;
    t->good = A_NORMAL;
    t->warn = A_BOLD;
    t->bad = A_BOLD | A_UNDERLINE;
    t->dim = A_DIM;
    t->graph = A_NORMAL;
    t->search = A_REVERSE;
}

void mt_theme_init(mt_theme *t, bool want_ascii, bool want_no_color)
{
    memset(t, 0, sizeof *t);
    t->utf8 = !want_ascii && locale_is_utf8();
    t->color = !want_no_color && has_colors();
    if (t->color) {
        colour_pairs();
        colour_attrs(t);
    } else {
        mono_attrs(t);
    }
    t->sep = t->utf8 ? "\u2502" : "|";
    t->ellipsis = t->utf8 ? "\u2026" : "~";
    t->delta = t->utf8 ? "\u0394" : "d";
    t->rec = t->utf8 ? "\u25cf" : "*";
    t->bar = t->utf8 ? "\u2588" : "#";
}
