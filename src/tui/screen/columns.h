/* columns.h -- the table's columns: headings, widths and how one row's
 * figures are written (signed when they are changes since a baseline). */
#ifndef MEMTOP_COLUMNS_H
#define MEMTOP_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli_options.h"
#include "table.h"

enum {
    MT_COL_LIVE,
    MT_COL_BLOCKS,
    MT_COL_GROWTH,
    MT_COL_ALLOCS,
    MT_COL_TEMP,
    MT_COL_LEAK,
    MT_COLS
};

typedef struct mt_column {
    const char *heading;
    bool has_delta; /* shows a change (signed) when a baseline is set */
    int width;
    mt_sort_key sort; /* the sort key this column shows */
} mt_column;

extern const mt_column mt_columns[MT_COLS];

/* Columns before LOCATION, separators included. */
int mt_columns_width(void);

/* A column's heading h, w cells wide, into buf: "~" first when est (the
 * figures are estimates: a sampled target) and it fits, then delta (the
 * baseline's mark, one cell whatever its bytes) unless NULL.  The table
 * and the call tree both head their columns with it. */
void mt_column_heading(const char *h, int w, bool est, const char *delta, char *buf, size_t n);

/* The text of column c for row r; rates_known false shows "-" for ALLOC/s
 * (no two snapshots to compare yet, or a recording). */
void mt_column_text(int c, const mt_table_row *r, bool delta, bool rates_known, char *buf,
                    size_t n);

#endif
