/* keymap.c -- the main screen's key bindings (see keymap.h).  The order of
 * the table is the order of the help page. */
#include "keymap.h"

#include <stdio.h>

#include "actions.h"
#include "app.h"
#include "table_keys.h"
#include "tree_keys.h"

#define ENTER '\n', '\r', KEY_ENTER
#define ESC 27
#define CTRL_L 12

/* {scope, keys, bar, shown, help, run, arg}: shown and help make one line
 * of the help page; a binding without them is on the line above it. */
static const mt_binding bindings[] = {
    {MT_KEYS_TABLE, {KEY_UP, 'k'}, NULL, "Up/Down, j/k", "select a row", mt_act_move, -1},
    {MT_KEYS_TABLE, {KEY_DOWN, 'j'}, NULL, NULL, NULL, mt_act_move, 1},
    {MT_KEYS_TREE, {KEY_UP, 'k'}, NULL, NULL, NULL, mt_act_tree_move, -1},
    {MT_KEYS_TREE, {KEY_DOWN, 'j'}, NULL, NULL, NULL, mt_act_tree_move, 1},
    {MT_KEYS_TABLE,
     {KEY_PPAGE},
     NULL,
     "PgUp/PgDn, Home/End",
     "move by pages, to the first or last row",
     mt_act_page,
     -1},
    {MT_KEYS_TABLE, {KEY_NPAGE}, NULL, NULL, NULL, mt_act_page, 1},
    {MT_KEYS_TABLE, {KEY_HOME}, NULL, NULL, NULL, mt_act_ends, -1},
    {MT_KEYS_TABLE, {KEY_END}, NULL, NULL, NULL, mt_act_ends, 1},
    {MT_KEYS_TREE, {KEY_PPAGE}, NULL, NULL, NULL, mt_act_tree_move, -2},
    {MT_KEYS_TREE, {KEY_NPAGE}, NULL, NULL, NULL, mt_act_tree_move, 2},
    {MT_KEYS_TREE, {KEY_HOME}, NULL, NULL, NULL, mt_act_tree_move, -3},
    {MT_KEYS_TREE, {KEY_END}, NULL, NULL, NULL, mt_act_tree_move, 3},
    {MT_KEYS_TABLE,
     {ENTER},
     NULL,
     "Enter",
     "details of the selected row: backtrace, counters, ages, history",
     mt_act_detail,
     0},
    {MT_KEYS_TREE, {ENTER}, NULL, NULL, NULL, mt_act_tree_detail, 0},
    /* Esc and Left close the other panels in their own key handlers. */
    {MT_KEYS_TABLE,
     {ESC},
     NULL,
     "Esc, Left",
     "back from details, help or a menu; in the table, Esc clears the filter",
     mt_act_clear_filter,
     0},
    {MT_KEYS_TREE, {ESC}, NULL, NULL, NULL, mt_act_tree_close, 0},
    {MT_KEYS_GLOBAL,
     {'t', KEY_F(9)},
     "Tree",
     "t, F9",
     "call tree of the same data, from main down (t again, or Esc: back to the table)",
     mt_act_tree,
     0},
    {MT_KEYS_TREE,
     {KEY_RIGHT, '+'},
     NULL,
     "Right/Left, +/-",
     "call tree: open/close the node (open: go to its first child; closed: its parent)",
     mt_act_tree_open,
     1},
    {MT_KEYS_TREE, {KEY_LEFT, '-'}, NULL, NULL, NULL, mt_act_tree_open, 0},
    {MT_KEYS_TREE,
     {'I'},
     NULL,
     "I",
     "call tree: invert it, top-down (from main) or bottom-up (from the allocation sites)",
     mt_act_tree_reverse,
     0},
    {MT_KEYS_GLOBAL,
     {'s', KEY_F(6)},
     "SortBy",
     "s, F6",
     "choose the sort order",
     mt_act_sort_menu,
     0},
    {MT_KEYS_GLOBAL, {'L'}, NULL, "L", "sort by leak suspicion", mt_act_sort, MT_SORT_LEAK},
    {MT_KEYS_GLOBAL, {'M'}, NULL, "M", "sort by live bytes (memory)", mt_act_sort, MT_SORT_LIVE},
    {MT_KEYS_GLOBAL,
     {'G'},
     NULL,
     "G",
     "sort by growth of live bytes per second",
     mt_act_sort,
     MT_SORT_GROWTH},
    {MT_KEYS_GLOBAL,
     {'N'},
     NULL,
     "N, A, T",
     "sort by live blocks, allocations, temporary allocations",
     mt_act_sort,
     MT_SORT_COUNT},
    {MT_KEYS_GLOBAL, {'A'}, NULL, NULL, NULL, mt_act_sort, MT_SORT_ALLOCS},
    {MT_KEYS_GLOBAL, {'T'}, NULL, NULL, NULL, mt_act_sort, MT_SORT_TEMPORARY},
    {MT_KEYS_TABLE,
     {'/', KEY_F(3)},
     "Search",
     "/, F3",
     "filter rows by name as you type (Enter keeps it, Esc drops it)",
     mt_act_search,
     0},
    {MT_KEYS_TREE, {'/', KEY_F(3)}, NULL, NULL, NULL, mt_act_search, 0},
    {MT_KEYS_GLOBAL,
     {'g', KEY_F(4)},
     "Group",
     "g, F4",
     "group rows by trace, function, source file or module",
     mt_act_group,
     0},
    {MT_KEYS_GLOBAL,
     {'b', KEY_F(2)},
     "Base",
     "b, F2",
     "mark a baseline: figures show the change since then (b again: clear)",
     mt_act_baseline,
     0},
    {MT_KEYS_GLOBAL,
     {'e', KEY_F(7)},
     "Export",
     "e, F7",
     "export the snapshot on screen as JSON (as --export: every trace, absolute, without "
     "the filter, baseline or grouping); in the call tree, the tree as FILE.tree.json",
     mt_act_export,
     0},
    {MT_KEYS_GLOBAL,
     {'P'},
     NULL,
     "P",
     "export the snapshot on screen as a pprof heap profile (.pb.gz)",
     mt_act_export,
     1},
    {MT_KEYS_GLOBAL,
     {'r', KEY_F(8)},
     "Record",
     "r, F8",
     "start or stop recording to a .dat file",
     mt_act_record,
     0},
    {MT_KEYS_GLOBAL,
     {'R'},
     NULL,
     "R",
     "start a culled recording (blocks freed within --cull's SECS, 10 s by default, only "
     "counted), or stop recording",
     mt_act_record,
     1},
    {MT_KEYS_GLOBAL,
     {' ', KEY_F(5)},
     "Pause",
     "Space, F5",
     "pause or resume the data (keys keep working)",
     mt_act_pause,
     0},
    {MT_KEYS_TABLE,
     {KEY_LEFT},
     NULL,
     "Left/Right, [ ]",
     "recordings (-f): move the time cursor by 1% of the run",
     mt_act_cursor,
     -0.01},
    {MT_KEYS_TABLE, {KEY_RIGHT}, NULL, NULL, NULL, mt_act_cursor, 0.01},
    {MT_KEYS_GLOBAL, {'['}, NULL, NULL, NULL, mt_act_cursor, -0.01},
    {MT_KEYS_GLOBAL, {']'}, NULL, NULL, NULL, mt_act_cursor, 0.01},
    {MT_KEYS_GLOBAL,
     {'{'},
     NULL,
     "{ }, < >",
     "recordings: by 10%; to the start or the end",
     mt_act_cursor,
     -0.1},
    {MT_KEYS_GLOBAL, {'}'}, NULL, NULL, NULL, mt_act_cursor, 0.1},
    {MT_KEYS_GLOBAL, {'<'}, NULL, NULL, NULL, mt_act_cursor, -2},
    {MT_KEYS_GLOBAL, {'>'}, NULL, NULL, NULL, mt_act_cursor, 2},
    {MT_KEYS_GLOBAL, {CTRL_L}, NULL, "Ctrl-L", "redraw the screen", mt_act_redraw, 0},
    {MT_KEYS_GLOBAL, {'?', 'h', KEY_F(1)}, "Help", "?, h, F1", "this help", mt_act_help, 0},
    {MT_KEYS_GLOBAL,
     {'q', KEY_F(10)},
     "Quit",
     "q, F10",
     "quit (a program memtop started is ended: SIGTERM, then SIGKILL)",
     mt_act_quit,
     0},
};

const mt_binding *mt_bindings(size_t *n)
{
    *n = sizeof bindings / sizeof bindings[0];
    return bindings;
}

static bool binds(const mt_binding *b, int ch)
{
    for (int i = 0; i < MT_BINDING_KEYS && b->keys[i]; i++)
        if (b->keys[i] == ch)
            return true;
    return false;
}

mt_key_result mt_keys_dispatch(struct mt_app *a, mt_key_scope scope, int ch)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
        const mt_binding *b = &bindings[i];
        if (b->scope == scope && binds(b, ch) && b->run(a, b->arg))
            return MT_KEY_HANDLED;
    }
    return MT_KEY_UNHANDLED;
}

const char *mt_key_name(int ch, char *buf, size_t n)
{
    static const struct {
        int ch;
        const char *name;
    } named[] = {
        {KEY_UP, "Up"},      {KEY_DOWN, "Down"},  {KEY_LEFT, "Left"},   {KEY_RIGHT, "Right"},
        {KEY_PPAGE, "PgUp"}, {KEY_NPAGE, "PgDn"}, {KEY_HOME, "Home"},   {KEY_END, "End"},
        {'\n', "Enter"},     {'\r', "Enter"},     {KEY_ENTER, "Enter"}, {ESC, "Esc"},
        {' ', "Space"},      {CTRL_L, "Ctrl-L"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].ch == ch)
            return named[i].name;
    if (ch >= KEY_F(1) && ch <= KEY_F(12))
        snprintf(buf, n, "F%d", ch - KEY_F0);
    else
        snprintf(buf, n, "%c", ch > 32 && ch < 127 ? ch : '?');
    return buf;
}

const char *mt_keys_fkey_label(int n, bool can_record)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
        if (bindings[i].bar && binds(&bindings[i], KEY_F(n)) &&
            (can_record || bindings[i].run != mt_act_record))
            return bindings[i].bar;
    return NULL;
}
