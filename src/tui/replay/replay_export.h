/* replay_export.h -- what the exports of a recording's snapshot say about
 * the recording (export.h's mt_export_rec): the file, the cursor, how it
 * ended, and what makes it inexact. */
#ifndef MEMTOP_REPLAY_EXPORT_H
#define MEMTOP_REPLAY_EXPORT_H

#include "export.h"
#include "replay.h"

/* out describes r at its cursor; out->file points into r. */
void mt_replay_export_rec(const mt_replay *r, mt_export_rec *out);

#endif
