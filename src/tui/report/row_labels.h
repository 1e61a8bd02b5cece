/* row_labels.h -- the LOCATION texts of the rows a report shows together
 * (--batch, the text, CSV and JSON exports): each trace's location
 * (mt_trace_location), and for the rows whose location another shown row
 * shares, the callers that tell them apart (caller_labels.h). */
#ifndef MEMTOP_ROW_LABELS_H
#define MEMTOP_ROW_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "caller_labels.h"
#include "rows.h"
#include "view.h"

typedef struct mt_row_labels {
    const mt_locator *loc;
    mt_caller_row *rows; /* per row: frames, label (owned), depth */
    size_t n;
} mt_row_labels;

/* The labels of rows[0..n) of v ("(overflow)" for the trace of
 * backtraces without one, "(no frames)").  0, or -1 when out of memory
 * for the labels themselves (out of memory for the callers: the labels
 * without them). */
int mt_row_labels_make(mt_row_labels *l, const mt_view *v, const mt_locator *loc,
                       const mt_row *rows, size_t n);
void mt_row_labels_free(mt_row_labels *l);

/* Row i's text: its location, " <- caller" as many as tell it apart
 * (mt_caller_label_join, ASCII: reports go to files and pipes). */
char *mt_row_label(const mt_row_labels *l, size_t i, char *buf, size_t size);

#endif
