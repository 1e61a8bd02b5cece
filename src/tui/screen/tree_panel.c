/* tree_panel.c -- `t`: the call tree view, one line per node on screen
 * (tree_state.c lays them out): inclusive figures in the table's columns,
 * OWN (live bytes allocated in the node itself: its allocation site's),
 * then the node indented by depth with its open/closed mark.  On a narrow
 * screen the least needed figure columns give way to the names. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "calltree.h"
#include "columns.h"
#include "format.h"
#include "draw.h"
#include "tree_keys.h"

#define OWN_W 11 /* as LIVE: "-1023.9 KiB" since a baseline */
/* Columns the node names keep at least: every figure column took 66 of
 * 80, leaving "- __libc_s…" (hidden_columns). */
#define NAME_MIN 36

/* A figure column of the tree: 0 LIVE, 1 OWN, c > 1 the table's c - 1. */
static int col_width(int c)
{
    return c == 1 ? OWN_W : mt_columns[c > 1 ? c - 1 : c].width;
}

/* The figure columns left out (bit c) so that the names get NAME_MIN
 * columns on a narrow screen: TEMP%, ALLOC/s, BLOCKS, LEAK, GROWTH/s, OWN
 * in that order, never LIVE nor the column the tree is sorted by. */
static unsigned hidden_columns(const mt_app *a)
{
    static const int order[] = {1 + MT_COL_TEMP, 1 + MT_COL_ALLOCS, 1 + MT_COL_BLOCKS,
                                1 + MT_COL_LEAK, 1 + MT_COL_GROWTH, 1};
    int used = 1;
    for (int c = 0; c <= MT_COLS; c++)
        used += col_width(c) + 1;
    unsigned hidden = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && COLS - used < NAME_MIN; i++) {
        int c = order[i];
        if (c > 1 && mt_columns[c - 1].sort == a->ui.sort)
            continue;
        hidden |= 1u << c;
        used -= col_width(c) + 1;
    }
    return hidden;
}

static void draw_heading(mt_app *a, int y)
{
    const mt_theme *t = &a->theme;
    bool delta = mt_table_has_baseline(a->table);
    mt_draw_fill(y, 0, COLS, t->heading);
    int x = 0;
    unsigned hidden = hidden_columns(a);
    for (int c = 0; c <= MT_COLS; c++) {
        if (hidden & (1u << c))
            continue;
        bool own = c == 1;
        const mt_column *col = &mt_columns[c > 1 ? c - 1 : c];
        int w = col_width(c);
        char h[32]; /* "~LIVE", "~OWN": estimates when sampled, as in the table */
        mt_column_heading(own ? "OWN" : col->heading, w, mt_view_sample_rate(&a->src.view) != 0,
                          delta && (own || col->has_delta) ? t->delta : NULL, h, sizeof h);
        attr_t at =
            !own && col->sort == a->ui.sort ? t->heading | A_BOLD | A_UNDERLINE : t->heading;
        mt_draw_right(t, y, x + w, w, at, h);
        x += w + 1;
    }
    mt_draw_text(t, y, x + 1, COLS - x - 1, t->heading,
                 a->panels.tree.reverse ? "CALL TREE bottom-up (allocation site, then callers)"
                                        : "CALL TREE top-down (from main to allocation sites)");
}

/* A node's figures as a table row, so that the columns read the same. */
static mt_table_row row_of(const mt_ct_fig *f)
{
    mt_table_row r;
    memset(&r, 0, sizeof r);
    r.live_bytes = f->live_bytes;
    r.live_count = f->live_count;
    r.alloc_count = f->alloc_count;
    r.temporary_count = f->temporary_count;
    r.allocs_ps = f->allocs_ps;
    r.growth_bps = f->growth_bps;
    r.temp_share = mt_temp_share(f->temporary_count, f->alloc_count);
    r.leak.score = f->leak;
    return r;
}

static int draw_figures(mt_app *a, int y, const mt_ct_node *nd, attr_t base)
{
    bool delta = mt_table_has_baseline(a->table);
    mt_table_row in = row_of(&nd->incl), own = row_of(&nd->own);
    int x = 0;
    unsigned hidden = hidden_columns(a);
    for (int c = 0; c <= MT_COLS; c++) {
        if (hidden & (1u << c))
            continue;
        char buf[48];
        int col = c > 1 ? c - 1 : c, w = col_width(c);
        mt_column_text(c == 1 ? MT_COL_LIVE : col, c == 1 ? &own : &in, delta,
                       a->ui.rates_known && !a->ui.stale.ended, buf, sizeof buf);
        attr_t at = base;
        if (base == A_NORMAL && col == MT_COL_LEAK && c > 1 && nd->incl.leak >= 60)
            at = a->theme.bad;
        mt_draw_right(&a->theme, y, x + w, w, at, buf);
        x += w + 1;
    }
    return x;
}

static void draw_line(mt_app *a, int y, const mt_tree_row *row, bool selected)
{
    mt_tree_panel *tp = &a->panels.tree;
    const mt_ct_node *nd = mt_calltree_node(tp->tree, row->node);
    attr_t base = selected ? a->theme.selected : A_NORMAL;
    mt_draw_fill(y, 0, COLS, base);
    int x = draw_figures(a, y, nd, base);
    const char *mark = nd->first_child == MT_CT_NONE              ? "  "
                       : mt_tree_is_open(tp, row->node, row->key) ? "- "
                                                                  : "+ ";
    char text[1200];
    snprintf(text, sizeof text, "%*s%s%s%s", (int)(2 * nd->depth), "", mark,
             mt_calltree_name(tp->tree, nd), nd->inlined ? " [inlined]" : "");
    if (nd->other)
        snprintf(text + strlen(text), sizeof text - strlen(text), "  (%u trace%s)", nd->ntraces,
                 mt_plural(nd->ntraces));
    mt_draw_text(&a->theme, y, x + 1, COLS - x - 1, base, text);
}

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    mt_tree_panel *tp = &a->panels.tree;
    draw_heading(a, y);
    int visible = h - 1;
    mt_panel_clamp(self, (long)tp->nrows, visible);
    for (int i = 0; i < visible; i++) {
        long k = self->first + i;
        mt_draw_fill(y + 1 + i, 0, COLS, A_NORMAL);
        if (k < (long)tp->nrows)
            draw_line(a, y + 1 + i, &tp->rows[k], k == self->sel);
    }
    if (!tp->nrows && visible > 0)
        mt_draw_text(&a->theme, y + 1, 2, COLS - 2, a->theme.dim,
                     a->ui.filter[0] ? "no traces match the filter (Esc clears it)"
                                     : "no allocations seen yet");
}

/* No fkeys: the function bar is the key table's (keymap.c). */
const mt_panel_class mt_tree_class = {"tree", true, draw, mt_tree_key, NULL};
