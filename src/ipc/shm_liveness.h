/* shm_liveness.h -- is the process behind a segment still the one that
 * created it?  A pid alone is not enough: pids are reused, so the start
 * time (field 22 of /proc/<pid>/stat) recorded in the header must match. */
#ifndef MEMTOP_SHM_LIVENESS_H
#define MEMTOP_SHM_LIVENESS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm_segment.h"

typedef enum mt_state {
    MT_STATE_RUNNING, /* the creating process is alive */
    MT_STATE_EXITED,  /* final snapshot published (MT_FLAG_EXITED) */
    MT_STATE_STALE,   /* process gone (or pid reused) without a final snapshot */
} mt_state;

/* Start time and state letter of pid from /proc; -1 if there is no such
 * process.  state may be NULL. */
int mt_proc_start_ticks(int pid, uint64_t *ticks, char *state);

/* True if a process with this pid exists (zombies included). */
bool mt_pid_exists(int pid);

mt_state mt_segment_state(const mt_segment *seg);
/* The same for header flags read earlier (with a snapshot): a state and a
 * label (mt_state_label) computed from one read of the flags agree. */
mt_state mt_segment_state_flags(const mt_segment *seg, uint32_t flags);
const char *mt_state_name(mt_state st);
/* Whether a snapshot (state st, header flags) is the state a process
 * published before it exec'd (MT_FLAG_EXECED). */
bool mt_state_execd(mt_state st, uint32_t flags);
/* The state as a user reads it: "exec'd" for the final snapshot a process
 * published before it exec'd into a program without libmemtop.so
 * (MT_FLAG_EXECED: it runs on, untracked), else mt_state_name(st).
 * flags: the header flags of the snapshot shown. */
const char *mt_state_label(mt_state st, uint32_t flags);

#endif
