/* picker_panel.c -- `memtop` with no target: the processes running with
 * libmemtop.so (as --list shows them), refreshed every second; Enter
 * attaches to the selected one. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "draw.h"
#include "format.h"
#include "picker.h"

static void draw_entry(mt_app *a, int y, const mt_proc_entry *e, bool selected)
{
    const mt_theme *t = &a->theme;
    attr_t at = selected ? t->selected : e->ok ? A_NORMAL : t->dim;
    char live[32] = "-", up[32] = "-";
    if (e->have_totals) {
        mt_fmt_bytes(e->live_bytes, live, sizeof live);
        mt_fmt_duration(e->uptime_s, up, sizeof up);
    }
    mt_draw_fill(y, 0, COLS, at);
    mt_draw_fmt(t, y, 0, COLS, at, "%8d  %-8s %10s %8s  %s", e->pid, e->shown, live, up,
                e->ok ? e->cmd : e->why);
}

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    const mt_theme *t = &a->theme;
    mt_picker *p = &a->picker;
    for (int i = 0; i < h; i++)
        mt_draw_fill(y + i, 0, COLS, A_NORMAL);
    mt_draw_text(t, y, 0, COLS, t->title,
                 "memtop: choose a process to watch (started with LD_PRELOAD=libmemtop.so)");
    mt_draw_fill(y + 2, 0, COLS, t->heading);
    mt_draw_fmt(t, y + 2, 0, COLS, t->heading, "%8s  %-8s %10s %8s  %s", "PID", "STATE", "LIVE",
                "UPTIME", "COMMAND");
    if (!p->list.count) {
        /* two lines: one cut the hint at 80 columns */
        mt_draw_fmt(t, y + 3, 2, COLS - 2, t->dim, "none yet in %s", p->dir);
        mt_draw_text(t, y + 4, 2, COLS - 2, t->dim,
                     "start one with  memtop -- PROG  or  LD_PRELOAD=libmemtop.so PROG");
        return;
    }
    mt_picker_clamp(p, self, h - 3);
    for (int i = 0; i + 3 < h; i++) {
        size_t k = (size_t)(self->first + i);
        if (k < p->list.count)
            draw_entry(a, y + 3 + i, &p->list.items[k], (long)k == self->sel);
    }
}

static mt_key_result key(mt_app *a, mt_panel *self, int ch)
{
    const mt_picker *p = &a->picker;
    switch (ch) {
    case KEY_UP:
    case 'k':
        self->sel--;
        break;
    case KEY_DOWN:
    case 'j':
        self->sel++;
        break;
    case KEY_HOME:
        self->sel = 0;
        break;
    case KEY_END:
        self->sel = (long)p->list.count - 1;
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        mt_picker_choose(a);
        break;
    case 'q':
    case KEY_F(10):
    case '?':
    case 'h':
    case KEY_F(1):
        return MT_KEY_UNHANDLED; /* quit and help are the global keys */
    default:
        return MT_KEY_HANDLED; /* no target yet: sorting, recording, ... mean nothing */
    }
    a->dirty = true;
    return MT_KEY_HANDLED;
}

static const mt_fkey fkeys[] = {{"Enter", "Watch"}, {"F1", "Help"}, {"F10", "Quit"}, {NULL, NULL}};

const mt_panel_class mt_picker_class = {"picker", false, draw, key, fkeys};
