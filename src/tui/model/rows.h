/* rows.h -- the traces of a snapshot in report order, and each trace's
 * growth rate (the leak signal). */
#ifndef MEMTOP_ROWS_H
#define MEMTOP_ROWS_H

#include <stddef.h>

#include "cli_options.h"
#include "memtop_ipc.h"

typedef struct mt_row {
    const mt_shm_trace *t;
    double growth; /* live bytes per second */
    double key;    /* sort value */
} mt_row;

/* The present growth rate: live bytes per second of trace t over the
 * window of mt_growth_window_s (0 without one).  Since checkpoint 1 of the
 * segment (taken 30-36 s ago; right after start, at the first publish), else
 * checkpoint 0 (the previous publish: targets built before checkpoint 1 was
 * a ring publish it 30-60 s old, and none in their first 30 s). */
double mt_trace_growth(const mt_shm_slot *slot, const mt_shm_trace *t);
/* The seconds mt_trace_growth measures over in slot; 0: none. */
double mt_growth_window_s(const mt_shm_slot *slot);

/* Every trace of snap, sorted by key (descending), then live bytes, then id.
 * NULL (and *n = 0) when there are none or memory is short; free() it. */
mt_row *mt_rows_build(const mt_snapshot *snap, mt_sort_key key, size_t *n);
/* The same over traces[0..count) (a snapshot's, or summed groups) of slot. */
mt_row *mt_rows_of(const mt_shm_slot *slot, const mt_shm_trace *traces, size_t count,
                   mt_sort_key key, size_t *n);

/* o += t: counters, checkpoints and ages summed, peaks summed (an upper
 * bound of the sum's peak), the older birth kept. */
void mt_trace_add(mt_shm_trace *o, const mt_shm_trace *t);

/* The first rows of an export bounded to top rows (0: all), and the rest
 * folded into one "(other)" row, so that the rows still sum to the totals. */
typedef struct mt_rows_cut {
    size_t kept;        /* rows[0..kept) are written as they are */
    size_t folded;      /* rows[kept..n) are summed into other */
    mt_shm_trace other; /* counters, checkpoints and ages summed; id 0 */
    mt_row other_row;   /* other, with the summed growth */
} mt_rows_cut;

void mt_rows_cut_at(const mt_row *rows, size_t n, long top, mt_rows_cut *cut);

#endif
