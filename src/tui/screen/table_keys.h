/* table_keys.h -- the main table's keys: moving, search, detail. */
#ifndef MEMTOP_TABLE_KEYS_H
#define MEMTOP_TABLE_KEYS_H

#include "app.h"

mt_key_result mt_table_key(mt_app *a, int ch);

/* Rows a page holds (for PgUp/PgDn), from the current screen size. */
int mt_table_page(const mt_app *a);

/* Remember which row is selected, so it can be found again after the rows
 * are rebuilt; then find it. */
void mt_table_remember_selection(mt_app *a);
void mt_table_restore_selection(mt_app *a);

#endif
