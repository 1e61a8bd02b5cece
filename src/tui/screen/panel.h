/* panel.h -- one screen of the viewer, in the manner of htop's Panels: it
 * draws itself into the body area, handles the keys it knows, and owns its
 * selection and scroll.  A class (the functions, shared) and an instance
 * (the state, one per panel in mt_app.panels) as htop's PanelClass and
 * Panel.  The screen manager (screen_manager.c) owns the stack of panels,
 * the header above them and the function bar below. */
#ifndef MEMTOP_PANEL_H
#define MEMTOP_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_app;

typedef enum mt_key_result {
    MT_KEY_UNHANDLED, /* let the screen manager try its global keys */
    MT_KEY_HANDLED,
    MT_KEY_CLOSE, /* pop this panel */
} mt_key_result;

typedef struct mt_fkey {
    const char *key, *label; /* "F1", "Help" */
} mt_fkey;

typedef struct mt_panel mt_panel;

typedef struct mt_panel_class {
    const char *name;
    bool show_header; /* the process header above the body */
    /* Draw into rows [y, y + h) of the screen, all columns. */
    void (*draw)(struct mt_app *a, mt_panel *self, int y, int h);
    mt_key_result (*key)(struct mt_app *a, mt_panel *self, int ch);
    const mt_fkey *fkeys; /* the function bar, NULL-key terminated; NULL: the F keys
                             of the key table (keymap.c) */
} mt_panel_class;

/* What every panel has: its class, the selected item (a row, a menu entry,
 * a process) and the first item on screen (the scroll; pages of text use
 * only this). */
struct mt_panel {
    const mt_panel_class *cls;
    long sel;
    long first;
};

/* The main table: its selection follows its row across rebuilds, by trace
 * id (trace grouping) or by label (other groupings). */
typedef struct mt_table_panel {
    mt_panel p;
    uint32_t sel_trace;
    char sel_label[256];
    bool sel_reset; /* the next build starts at the top (new sort, grouping, filter) */
} mt_table_panel;

/* Enter on a row: the row it shows (found again by id or label). */
typedef struct mt_detail_panel {
    mt_panel p;
    uint32_t trace;
    char label[256];
} mt_detail_panel;

/* One line of the call tree on screen: a node and its path key (a hash of
 * its path of names, stable across rebuilds, unlike node indices). */
typedef struct mt_tree_row {
    uint32_t node;
    uint64_t key;
} mt_tree_row;

/* `t`: the call tree of the table's traces (tree_panel.c, tree_keys.c).
 * It owns its tree, which nodes are open and the selection, all by path
 * key so that they survive rebuilds.  A node with one child is open by
 * until the user says otherwise, others closed; `flipped` lists the nodes
 * the user opened (key | 1) or closed (key). */
typedef struct mt_tree_panel {
    mt_panel p;
    bool reverse;     /* bottom-up */
    double threshold; /* live bytes under which nodes fold into (other) */
    struct mt_calltree *tree;
    struct mt_ct_pathbuf *pb;
    struct mt_plumbing *skip;
    uint32_t path_trace; /* the trace whose path is being made (chain_of, tree_state.c) */
    mt_tree_row *rows;   /* the lines on screen, in order */
    size_t nrows, cap_rows;
    uint64_t *flipped; /* sorted */
    size_t nflipped, cap_flipped;
    uint64_t sel_key;
    uint64_t names_gen, image; /* the symbolizer's and the target's, of the paths the tree kept */
    bool provisional;          /* a kept path has names still being resolved */
} mt_tree_panel;

/* The viewer's panels, one instance each. */
typedef struct mt_panels {
    mt_table_panel table;
    mt_tree_panel tree;
    mt_detail_panel detail;
    mt_panel help, sort, picker;
} mt_panels;

/* Keep a list panel's selection inside its nrows rows and on screen (visible
 * rows), and never leave rows hidden above the first one shown while there is
 * room below. */
void mt_panel_clamp(mt_panel *u, long nrows, int visible);

/* Each panel with its class, at the top, nothing selected. */
void mt_panels_init(mt_panels *p);

/* The classes (each in its own file). */
extern const mt_panel_class mt_table_class;
extern const mt_panel_class mt_detail_class;
extern const mt_panel_class mt_tree_class;
extern const mt_panel_class mt_help_class;
extern const mt_panel_class mt_sort_class;
extern const mt_panel_class mt_picker_class;

#endif
