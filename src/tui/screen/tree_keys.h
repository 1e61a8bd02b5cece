/* tree_keys.h -- the call tree view (`t`): building it from the table's
 * traces (tree_state.c) and its keys (tree_keys.c). */
#ifndef MEMTOP_TREE_KEYS_H
#define MEMTOP_TREE_KEYS_H

#include "app.h"

/* Build the tree of the table's last build and the lines on screen. */
void mt_tree_rebuild(mt_app *a);
/* The lines on screen again (after opening or closing a node). */
void mt_tree_relayout(mt_tree_panel *tp);
/* Whether node i (path key k) is open. */
bool mt_tree_is_open(const mt_tree_panel *tp, uint32_t i, uint64_t k);
/* Open node i (path key k) if closed, close it if open, and remember it
 * by k whatever its children later; false when out of memory. */
bool mt_tree_flip(mt_tree_panel *tp, uint32_t i, uint64_t k);
void mt_tree_free(mt_tree_panel *tp);

/* The search line's keys while it is open, else the tree's bindings. */
mt_key_result mt_tree_key(mt_app *a, mt_panel *self, int ch);

/* Bound in keymap.c: `t`/F9 opens or closes the tree; the rest act in it. */
bool mt_act_tree(mt_app *a, double unused);
bool mt_act_tree_move(mt_app *a, double rows); /* +-1: a line; +-2: a page; +-3: the ends */
bool mt_act_tree_open(mt_app *a, double open); /* 1: open (or go to the first child); 0: close
                                                  (or go to the parent) */
bool mt_act_tree_reverse(mt_app *a, double unused);
bool mt_act_tree_detail(mt_app *a, double unused);
bool mt_act_tree_close(mt_app *a, double unused);

#endif
