/* tree_keys.c -- keys of the call tree view (see tree_keys.h), as in
 * htop's tree: Right or + opens the selected node (or, open, goes to its
 * first child), Left or - closes it (or, closed, goes to its parent). */
#include "tree_keys.h"

#include <stdio.h>
#include <string.h>

#include "calltree.h"
#include "keymap.h"
#include "table_keys.h"

mt_key_result mt_tree_key(mt_app *a, mt_panel *self, int ch)
{
    (void)self; /* the actions find it as a->panels.tree */
    if (a->ui.searching)
        return mt_search_key(a, ch);
    return mt_keys_dispatch(a, MT_KEYS_TREE, ch);
}

bool mt_act_tree(mt_app *a, double unused)
{
    (void)unused;
    if (!a->src.pid && !a->src.replay)
        return false; /* the process picker: no data yet */
    bool shown = mt_app_in_tree(a);
    while (a->depth > 1) /* from details, help or a menu: back to the table first */
        mt_app_pop(a);
    if (!shown) {
        mt_app_push(a, &a->panels.tree.p);
        mt_app_status(
            a, false,
            "call tree %s: Right/+ opens, Left/- closes, I inverts, e exports it, t: back",
            a->panels.tree.reverse ? "bottom-up" : "top-down");
    } else if (strncmp(a->status, "call tree ", 10) == 0) {
        a->status[0] = 0; /* the tree's key hint: not the table's keys */
        a->status_until = 0;
    }
    a->rebuild = true; /* the table per trace for the tree, grouped again without */
    return true;
}

bool mt_act_tree_close(mt_app *a, double unused)
{
    (void)unused;
    if (a->ui.filter[0]) { /* as in the table: Esc clears the filter first */
        a->ui.filter[0] = 0;
        mt_app_rows_changed(a);
        return true;
    }
    return mt_act_tree(a, 0);
}

static void select_row(mt_app *a, long r)
{
    mt_tree_panel *tp = &a->panels.tree;
    if (r >= (long)tp->nrows)
        r = (long)tp->nrows - 1;
    tp->p.sel = r < 0 ? 0 : r;
    if (tp->nrows)
        tp->sel_key = tp->rows[tp->p.sel].key;
    a->dirty = true;
}

bool mt_act_tree_move(mt_app *a, double how)
{
    mt_tree_panel *tp = &a->panels.tree;
    long by = (long)how, page = mt_table_page(a);
    if (by == 2 || by == -2)
        by = by / 2 * page;
    else if (by == 3 || by == -3)
        by = by > 0 ? (long)tp->nrows : -tp->p.sel;
    select_row(a, tp->p.sel + by);
    return true;
}

bool mt_act_tree_open(mt_app *a, double open)
{
    mt_tree_panel *tp = &a->panels.tree;
    if (tp->p.sel < 0 || (size_t)tp->p.sel >= tp->nrows)
        return true;
    mt_tree_row row = tp->rows[tp->p.sel];
    const mt_ct_node *nd = mt_calltree_node(tp->tree, row.node);
    bool is_open = mt_tree_is_open(tp, row.node, row.key);
    if (open > 0 && nd->first_child != MT_CT_NONE && !is_open) {
        if (!mt_tree_flip(tp, row.node, row.key))
            mt_app_status(a, true, "out of memory");
    } else if (open > 0 && is_open) {
        select_row(a, tp->p.sel + 1);
    } else if (open <= 0 && is_open) {
        if (!mt_tree_flip(tp, row.node, row.key))
            mt_app_status(a, true, "out of memory");
    } else if (open <= 0) { /* to the parent: the line above with one level less */
        long r = tp->p.sel;
        while (r > 0 && mt_calltree_node(tp->tree, tp->rows[r].node)->depth >= nd->depth)
            r--;
        select_row(a, r);
    }
    mt_tree_relayout(tp);
    a->dirty = true;
    return true;
}

bool mt_act_tree_reverse(mt_app *a, double unused)
{
    (void)unused;
    mt_tree_panel *tp = &a->panels.tree;
    tp->reverse = !tp->reverse;
    tp->p.sel = tp->p.first = 0;
    tp->sel_key = 0;
    a->rebuild = true;
    mt_app_status(a, false, "call tree %s",
                  tp->reverse ? "bottom-up: allocation sites first" : "top-down: from main");
    return true;
}

/* Enter: the details of the trace with the most live bytes below the node. */
bool mt_act_tree_detail(mt_app *a, double unused)
{
    (void)unused;
    mt_tree_panel *tp = &a->panels.tree;
    if (tp->p.sel < 0 || (size_t)tp->p.sel >= tp->nrows)
        return true;
    const mt_ct_node *nd = mt_calltree_node(tp->tree, tp->rows[tp->p.sel].node);
    a->panels.detail.trace = nd->top_trace;
    snprintf(a->panels.detail.label, sizeof a->panels.detail.label, "%s",
             mt_calltree_name(tp->tree, nd));
    a->panels.detail.p.first = 0;
    mt_app_push(a, &a->panels.detail.p);
    return true;
}
