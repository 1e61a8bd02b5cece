/* sort_panel.c -- `s` or F6: choose the sort order from a list, as htop's
 * "Sort by" menu does. */
#include "actions.h"
#include "app.h"
#include "draw.h"

static const char *const what[MT_SORT_KEYS] = {
    [MT_SORT_LIVE] = "live bytes",
    [MT_SORT_COUNT] = "live blocks",
    [MT_SORT_ALLOCS] = "allocations per second",
    [MT_SORT_TEMPORARY] = "temporary allocations",
    [MT_SORT_GROWTH] = "growth of live bytes per second",
    [MT_SORT_LEAK] = "leak suspicion",
};

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    const mt_theme *t = &a->theme;
    for (int i = 0; i < h; i++)
        mt_draw_fill(y + i, 0, COLS, A_NORMAL);
    mt_draw_text(t, y, 1, COLS - 1, t->heading, " Sort by ");
    for (int k = 0; k < MT_SORT_KEYS && k + 2 < h; k++) {
        attr_t at = k == self->sel ? t->selected : A_NORMAL;
        mt_draw_fill(y + 2 + k, 1, 48, at);
        mt_draw_fmt(t, y + 2 + k, 2, 46, at, "%c %-10s %s", k == (int)a->ui.sort ? '*' : ' ',
                    mt_sort_name((mt_sort_key)k), what[k]);
    }
}

static mt_key_result key(mt_app *a, mt_panel *self, int ch)
{
    switch (ch) {
    case KEY_UP:
    case 'k':
        if (self->sel > 0)
            self->sel--;
        break;
    case KEY_DOWN:
    case 'j':
        if (self->sel + 1 < MT_SORT_KEYS)
            self->sel++;
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        mt_action_sort(a, (mt_sort_key)self->sel);
        return MT_KEY_CLOSE;
    case 27:
    case 'q':
    case KEY_LEFT:
    case KEY_F(6):
    case 's':
        return MT_KEY_CLOSE;
    default:
        return MT_KEY_HANDLED; /* the menu is modal */
    }
    a->dirty = true;
    return MT_KEY_HANDLED;
}

static const mt_fkey fkeys[] = {{"Enter", "Sort"}, {"Esc", "Cancel"}, {NULL, NULL}};

const mt_panel_class mt_sort_class = {"sort", true, draw, key, fkeys};
