/* bars.c -- status line and function bar (see bars.h). */
#include "bars.h"

#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "draw.h"
#include "format.h"
#include "keymap.h"
#include "rows.h"

/* A key and its label, padded to 6 columns where there is room (htop's
 * bar): the last label of a full 80-column bar is not cut ("F10Quit…"). */
static int draw_fkey(const mt_theme *t, int y, int x, const char *key, const char *label)
{
    x += mt_draw_text(t, y, x, COLS - x, t->fkey, key);
    int w = (int)strlen(label), pad = w < 6 && x + 6 <= COLS ? 6 : w;
    return x + mt_draw_fmt(t, y, x, COLS - x, t->fkey_label, "%-*s", pad, label);
}

static void draw_fkeys(mt_app *a, int y)
{
    const mt_theme *t = &a->theme;
    const mt_panel *p = a->depth ? a->stack[a->depth - 1] : NULL;
    mt_draw_fill(y, 0, COLS, A_NORMAL);
    int x = 0;
    for (const mt_fkey *k = p ? p->cls->fkeys : NULL; k && k->key && x < COLS; k++)
        x = draw_fkey(t, y, x, k->key, k->label);
    bool can_record = mt_app_can_record(a);
    for (int f = 1; p && !p->cls->fkeys && f <= 12 && x < COLS; f++) { /* the key table's bar */
        const char *label = mt_keys_fkey_label(f, can_record);
        char name[8];
        if (label)
            x = draw_fkey(t, y, x, mt_key_name(KEY_F(f), name, sizeof name), label);
    }
    if (x < COLS)
        mt_draw_fill(y, x, COLS - x, t->fkey_label);
}

static void draw_summary(mt_app *a, int y)
{
    const mt_theme *t = &a->theme;
    size_t n = 0;
    if (a->table)
        mt_table_rows(a->table, &n);
    char filt[MT_FILTER_MAX + 16] = "";
    if (a->ui.filter[0])
        snprintf(filt, sizeof filt, ", filter \"%s\"", a->ui.filter);
    char win[48] = ""; /* the window of GROWTH/s (rows.h) */
    const mt_snapshot *s = mt_app_snapshot(a);
    double w = s ? mt_growth_window_s(&s->slot) : 0;
    if (w > 0)
        snprintf(win, sizeof win, ", growth/s over the last %s%s%s",
                 mt_fmt_window(w, (char[32]){0}, 32), a->ui.stale.ended ? " until it " : "",
                 a->ui.stale.ended ? a->ui.stale.ended : "");
    mt_draw_fmt(t, y, 0, COLS, t->dim, "%zu row%s by %s, sorted by %s%s%s  (? for help)", n,
                mt_plural(n), mt_group_name(a->ui.group), mt_sort_name(a->ui.sort), filt, win);
}

void mt_bars_draw(mt_app *a)
{
    const mt_theme *t = &a->theme;
    int y = LINES - 2;
    mt_draw_fill(y, 0, COLS, A_NORMAL);
    if (a->ui.searching) {
        int x = mt_draw_text(t, y, 0, COLS, t->search, "Filter: ");
        x += mt_draw_text(t, y, x, COLS - x - 1, A_BOLD, a->ui.filter);
        mt_draw_text(t, y, x, 1, A_REVERSE, " ");
    } else if (a->status[0] && a->now < a->status_until) {
        mt_draw_text(t, y, 0, COLS, a->status_is_error ? t->bad : t->warn, a->status);
    } else if (a->src.error[0]) {
        mt_draw_text(t, y, 0, COLS, t->bad, a->src.error);
    } else if (a->depth && a->stack[a->depth - 1] == &a->panels.table.p) {
        draw_summary(a, y);
    }
    draw_fkeys(a, LINES - 1);
}
