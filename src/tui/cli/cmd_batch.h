/* cmd_batch.h -- one batch report and one export, shared by the -p and the
 * launch commands. */
#ifndef MEMTOP_CMD_BATCH_H
#define MEMTOP_CMD_BATCH_H

#include "cli_options.h"
#include "export.h"
#include "location.h"
#include "view.h"

/* Header and rows of v's snapshot on stdout, then a blank line; flushed. */
void mt_batch_report(const mt_view *v, mt_state st, const mt_opts *o, const mt_locator *loc);

/* Write o->export_path; prints the error and returns MT_EXIT_FAIL on
 * failure, a one-line summary on stderr and MT_EXIT_OK on success.  rec:
 * the recording v's snapshot comes from, or NULL (a live target). */
int mt_batch_export(const mt_view *v, mt_state st, const mt_opts *o, const mt_locator *loc,
                    const mt_export_rec *rec);

#endif
