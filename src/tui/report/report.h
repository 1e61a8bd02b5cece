/* report.h -- the text report of one snapshot, as `memtop --batch` prints
 * it every interval: a header of process-wide figures, then the top rows. */
#ifndef MEMTOP_REPORT_H
#define MEMTOP_REPORT_H

#include <stdio.h>

#include "cli_options.h"
#include "export.h"
#include "location.h"
#include "view.h"

/* Process-wide figures: who, uptime, heap, allocator, RSS, rates, health.
 * rec: the recording the snapshot comes from (its dropped events, missing
 * initial state and culling go in the data line, as in the exports), or
 * NULL for a live target. */
void mt_report_header(FILE *f, const mt_view *v, mt_state st, const mt_export_rec *rec);

/* A live target's recording status (shm_recording.h) and its lease, for
 * --batch and the text and JSON exports.  False for a replay (its view is
 * no segment) or when the status cannot be read now. */
typedef struct mt_live_rec {
    mt_shm_recording r;
    mt_rec_lease_info lease; /* lease.ms != 0: held by a viewer */
} mt_live_rec;
bool mt_report_live_rec(const mt_view *v, mt_live_rec *out);

/* The table: top `top` rows (0 = all) sorted by key, one per trace or, g
 * not MT_GROUP_TRACE, per function, file or module of the traces' locations. */
void mt_report_rows(FILE *f, const mt_view *v, const mt_locator *loc, mt_sort_key key,
                    mt_group_key g, long top);

#endif
