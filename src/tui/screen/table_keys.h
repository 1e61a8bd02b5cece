/* table_keys.h -- the main table's actions: moving, search, detail. */
#ifndef MEMTOP_TABLE_KEYS_H
#define MEMTOP_TABLE_KEYS_H

#include "app.h"

/* The search line's keys while it is open, else the table's bindings
 * (keymap.c). */
mt_key_result mt_table_key(mt_app *a, mt_panel *self, int ch);
/* The search line's keys (the table's and the tree's filter). */
mt_key_result mt_search_key(mt_app *a, int ch);

/* The table's actions, bound in keymap.c (arg: the binding's argument). */
bool mt_act_move(mt_app *a, double rows);
bool mt_act_page(mt_app *a, double pages);
bool mt_act_ends(mt_app *a, double dir); /* < 0: the first row, else the last */
bool mt_act_detail(mt_app *a, double unused);
bool mt_act_search(mt_app *a, double unused);
bool mt_act_clear_filter(mt_app *a, double unused);

/* Rows a page holds (for PgUp/PgDn), from the current screen size. */
int mt_table_page(const mt_app *a);

/* Remember which row is selected, so it can be found again after the rows
 * are rebuilt; then find it. */
void mt_table_remember_selection(mt_app *a);
void mt_table_restore_selection(mt_app *a);

#endif
