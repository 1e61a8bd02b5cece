/* rec_stop.h -- before memtop ends a PROG it started (q in the viewer,
 * Ctrl-C or SIGTERM to memtop): stop the recording PROG is making, through
 * the control channel as `r` and `memtop -p PID --record` do, so that the
 * file is finalized.  libmemtop.so installs no signal handlers in its
 * target (the target's own come first), so the signal that ends PROG would
 * leave its recording without its last events and its end. */
#ifndef MEMTOP_REC_STOP_H
#define MEMTOP_REC_STOP_H

#include <stddef.h>

#include "memtop_ipc.h"

#define MT_REC_STOP_WAIT_MS 2000 /* how long a target may take to finalize */

/* If seg's target is recording, ask it to stop and wait up to timeout_ms
 * for its recording status to leave "on".  0: nothing was recording, or
 * the recording is finalized (or the target exited, finalizing it itself);
 * -1 with a one-line message ("FILE: the recording may not be finalized:
 * why") when the target did not answer in time or the recording failed. */
int mt_rec_stop_before_end(mt_segment *seg, int timeout_ms, char *msg, size_t n);

#endif
