/* attach.h -- attaching to a running process by pid, with the errors a
 * user needs: no such process, not running with libmemtop.so, permission
 * denied, stale, corrupt or foreign segment. */
#ifndef MEMTOP_ATTACH_H
#define MEMTOP_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "view.h"

/* Attach v to pid's segment in dir (mt_view_attach_pid: a file of another
 * user than the process's is refused) and read a first snapshot, waiting up
 * to about two seconds for a segment that is still being set up or, in a
 * process that maps libmemtop.so, yet to be created.  A stale segment (its
 * process ended without a final snapshot: SIGKILL, an OOM kill) is kept,
 * with its last snapshot, when stale_ok (to be shown as such) and its pid
 * is no other process's yet, else refused.  0, or -1 with a one-line
 * message in msg. */
int mt_attach_pid(mt_view *v, const char *dir, int pid, bool stale_ok, char *msg, size_t n);

#endif
