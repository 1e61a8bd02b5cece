/* replay_summary.h -- `memtop -f FILE.dat --batch`: what a recording says
 * in a few lines (duration, peak and when, leaked at the end, warnings)
 * followed by the usual report tables of the state at the cursor. */
#ifndef MEMTOP_REPLAY_SUMMARY_H
#define MEMTOP_REPLAY_SUMMARY_H

#include <stdio.h>

#include "cli_options.h"
#include "location.h"
#include "replay.h"

/* The warnings a recording deserves (truncated, not finalized, events
 * dropped), one line each through mt_errorf. */
void mt_replay_warn(const mt_replay *r);

/* The summary and tables of v (the state at the replay's cursor). */
void mt_replay_summary(FILE *f, const mt_replay *r, const mt_view *v, const mt_opts *o,
                       const mt_locator *loc);

#endif
