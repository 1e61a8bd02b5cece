/* table_keys.c -- keys of the main table (see table_keys.h).  While the
 * search line is open, printable keys edit the filter and the table
 * narrows as you type; Enter keeps the filter, Esc drops it. */
#include "table_keys.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "header_view.h"

int mt_table_page(const mt_app *a)
{
    int h = LINES - mt_header_height(a, LINES) - 3; /* heading, status, function bar */
    return h > 1 ? h : 1;
}

void mt_table_remember_selection(mt_app *a)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    if (a->ui.sel < 0 || (size_t)a->ui.sel >= n)
        return;
    const mt_table_row *r = &rows[a->ui.sel];
    a->ui.sel_trace = r->trace_id;
    snprintf(a->ui.sel_label, sizeof a->ui.sel_label, "%s", r->label ? r->label : "");
}

void mt_table_restore_selection(mt_app *a)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    for (size_t i = 0; i < n; i++) {
        bool same = a->ui.group == MT_GROUP_TRACE
                        ? rows[i].trace_id == a->ui.sel_trace
                        : rows[i].label && strcmp(rows[i].label, a->ui.sel_label) == 0;
        if (same) {
            a->ui.sel = (long)i; /* the table panel scrolls to keep it visible */
            return;
        }
    }
}

static void move_sel(mt_app *a, long by)
{
    size_t n;
    mt_table_rows(a->table, &n);
    long s = a->ui.sel + by;
    if (s >= (long)n)
        s = (long)n - 1;
    a->ui.sel = s < 0 ? 0 : s;
    mt_table_remember_selection(a);
    a->dirty = true;
}

static void open_detail(mt_app *a)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    if (a->ui.sel < 0 || (size_t)a->ui.sel >= n)
        return;
    a->ui.detail_trace = rows[a->ui.sel].trace_id;
    snprintf(a->ui.detail_label, sizeof a->ui.detail_label, "%s",
             rows[a->ui.sel].label ? rows[a->ui.sel].label : "");
    a->ui.detail_scroll = 0;
    mt_app_push(a, &mt_detail_panel);
}

static mt_key_result search_key(mt_app *a, int ch)
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
        if (len)
            a->ui.filter[len - 1] = 0;
        mt_app_rows_changed(a);
    } else if (ch >= 32 && ch < 127 && len + 1 < sizeof a->ui.filter) {
        a->ui.filter[len] = (char)ch;
        a->ui.filter[len + 1] = 0;
        mt_app_rows_changed(a);
    } else {
        return MT_KEY_HANDLED; /* function keys do nothing while typing */
    }
    return MT_KEY_HANDLED;
}

static mt_key_result move_key(mt_app *a, int ch)
{
    size_t n;
    mt_table_rows(a->table, &n);
    long page = mt_table_page(a);
    switch (ch) {
    case KEY_UP:
    case 'k':
        move_sel(a, -1);
        return MT_KEY_HANDLED;
    case KEY_DOWN:
    case 'j':
        move_sel(a, 1);
        return MT_KEY_HANDLED;
    case KEY_PPAGE:
        move_sel(a, -page);
        return MT_KEY_HANDLED;
    case KEY_NPAGE:
        move_sel(a, page);
        return MT_KEY_HANDLED;
    case KEY_HOME:
        move_sel(a, -a->ui.sel);
        return MT_KEY_HANDLED;
    case KEY_END:
        move_sel(a, (long)n);
        return MT_KEY_HANDLED;
    case KEY_LEFT:
    case KEY_RIGHT:
        if (!a->src.replay)
            return MT_KEY_UNHANDLED;
        mt_action_cursor(a, ch == KEY_LEFT ? -0.01 : 0.01);
        return MT_KEY_HANDLED;
    }
    return MT_KEY_UNHANDLED;
}

mt_key_result mt_table_key(mt_app *a, int ch)
{
    if (a->ui.searching)
        return search_key(a, ch);
    if (move_key(a, ch) == MT_KEY_HANDLED)
        return MT_KEY_HANDLED;
    switch (ch) {
    case '\n':
    case '\r':
    case KEY_ENTER:
        open_detail(a);
        return MT_KEY_HANDLED;
    case '/':
    case KEY_F(3):
        a->ui.searching = true;
        a->dirty = true;
        return MT_KEY_HANDLED;
    case 27: /* Esc clears a kept filter */
        if (a->ui.filter[0]) {
            a->ui.filter[0] = 0;
            mt_app_rows_changed(a);
        }
        return MT_KEY_HANDLED;
    }
    return MT_KEY_UNHANDLED;
}
