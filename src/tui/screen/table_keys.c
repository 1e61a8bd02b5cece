/* table_keys.c -- keys of the main table (see table_keys.h).  While the
 * search line is open, printable keys edit the filter and the table
 * narrows as you type; Enter keeps the filter, Esc drops it. */
#include "table_keys.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "header_view.h"
#include "keymap.h"

int mt_table_page(const mt_app *a)
{
    int h = LINES - mt_header_height(a, LINES) - 3; /* heading, status, function bar */
    return h > 1 ? h : 1;
}

void mt_table_remember_selection(mt_app *a)
{
    mt_table_panel *tp = &a->panels.table;
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    if (tp->p.sel < 0 || (size_t)tp->p.sel >= n)
        return;
    const mt_table_row *r = &rows[tp->p.sel];
    tp->sel_trace = r->trace_id;
    snprintf(tp->sel_label, sizeof tp->sel_label, "%s", r->label ? r->label : "");
}

void mt_table_restore_selection(mt_app *a)
{
    mt_table_panel *tp = &a->panels.table;
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    for (size_t i = 0; i < n; i++) {
        bool same = a->ui.group == MT_GROUP_TRACE
                        ? rows[i].trace_id == tp->sel_trace
                        : rows[i].label && strcmp(rows[i].label, tp->sel_label) == 0;
        if (same) {
            tp->p.sel = (long)i; /* the table panel scrolls to keep it visible */
            return;
        }
    }
}

static void move_sel(mt_app *a, long by)
{
    mt_table_panel *tp = &a->panels.table;
    size_t n;
    mt_table_rows(a->table, &n);
    long s = tp->p.sel + by;
    if (s >= (long)n)
        s = (long)n - 1;
    tp->p.sel = s < 0 ? 0 : s;
    mt_table_remember_selection(a);
    a->dirty = true;
}

bool mt_act_move(mt_app *a, double rows)
{
    move_sel(a, (long)rows);
    return true;
}

bool mt_act_page(mt_app *a, double pages)
{
    move_sel(a, (long)pages * mt_table_page(a));
    return true;
}

bool mt_act_ends(mt_app *a, double dir)
{
    mt_table_panel *tp = &a->panels.table;
    size_t n;
    mt_table_rows(a->table, &n);
    move_sel(a, dir < 0 ? -tp->p.sel : (long)n);
    return true;
}

bool mt_act_detail(mt_app *a, double unused)
{
    mt_table_panel *tp = &a->panels.table;
    (void)unused;
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    if (tp->p.sel < 0 || (size_t)tp->p.sel >= n)
        return true;
    a->panels.detail.trace = rows[tp->p.sel].trace_id;
    snprintf(a->panels.detail.label, sizeof a->panels.detail.label, "%s",
             rows[tp->p.sel].label ? rows[tp->p.sel].label : "");
    a->panels.detail.p.first = 0;
    mt_app_push(a, &a->panels.detail.p);
    return true;
}

bool mt_act_search(mt_app *a, double unused)
{
    (void)unused;
    a->ui.searching = true;
    a->dirty = true;
    return true;
}

bool mt_act_clear_filter(mt_app *a, double unused)
{
    (void)unused;
    if (a->ui.filter[0]) {
        a->ui.filter[0] = 0;
        mt_app_rows_changed(a);
    }
    return true;
}

mt_key_result mt_search_key(mt_app *a, int ch)
{
    size_t len = strlen(a->ui.filter);
    if (ch == 27) { /* Esc */
        a->ui.filter[0] = 0;
        a->ui.searching = false;
        mt_app_rows_changed(a);
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        a->ui.searching = false;
        a->dirty = true;
    } else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        while (len && ((unsigned char)a->ui.filter[len - 1] & 0xc0) == 0x80)
            len--; /* a UTF-8 character's continuation bytes, then its first */
        a->ui.filter[len ? len - 1 : 0] = 0;
        mt_app_rows_changed(a);
    } else if (((ch >= 32 && ch < 127) || (ch >= 128 && ch <= 255)) &&
               len + 1 < sizeof a->ui.filter) {
        /* 128-255: the bytes of a UTF-8 character (a C++ or Rust name's),
         * one getch each; names are matched byte for byte */
        a->ui.filter[len] = (char)ch;
        a->ui.filter[len + 1] = 0;
        mt_app_rows_changed(a);
    } else {
        return MT_KEY_HANDLED; /* function keys do nothing while typing */
    }
    return MT_KEY_HANDLED;
}

mt_key_result mt_table_key(mt_app *a, mt_panel *self, int ch)
{
    (void)self; /* the bindings' actions find it as a->panels.table */
    if (a->ui.searching)
        return mt_search_key(a, ch);
    return mt_keys_dispatch(a, MT_KEYS_TABLE, ch);
}
