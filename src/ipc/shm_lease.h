/* shm_lease.h -- the viewer's side of a recording lease
 * (docs/shm-protocol.md, "Recording lease"): a recording this viewer
 * starts is held by it, and ends (END reason "lease") when the viewer
 * stops renewing it, so that a viewer killed, hung or stopped never leaves
 * a recording running in its target.  The viewer renews from its main
 * loop (not from a thread of its own: a viewer whose loop hangs is a
 * viewer gone). */
#ifndef MEMTOP_SHM_LEASE_H
#define MEMTOP_SHM_LEASE_H

#include "shm_control.h"
#include "shm_recording.h"

typedef struct mt_rec_lease {
    bool held;          /* this viewer started the running recording and renews it */
    bool old_target;    /* the target knows no leases: its recording is not held */
    uint64_t recording; /* the target's recording.recordings of the held one */
    uint32_t ms;        /* its bound (header.rec_lease_ms) */
    long long next_ms;  /* when to renew next (CLOCK_MONOTONIC ms) */
} mt_rec_lease;

/* Starts a recording (arg as mt_control_record_arg made it) held by this
 * viewer (MT_CMD_RECORD_START_LEASED); a target older than leases answers
 * "unknown command": then an unheld one (MT_CMD_RECORD_START), and
 * l->old_target says so.  On MT_OK, l holds the recording that runs. */
mt_errc mt_lease_record_start(mt_segment *seg, const char *arg, int timeout_ms,
                              mt_ctrl_reply *reply, mt_rec_lease *l, mt_err *err);

/* Renews the lease when it is due (every MT_REC_LEASE_RENEW_MS; call it
 * more often, it costs one clock read when not due).  Returns false, and
 * lets go of the lease, once the held recording is no longer on (stopped,
 * failed, ended by the target; a status that cannot be read now keeps it:
 * the beat goes on).  False too when nothing is held. */
bool mt_lease_renew(mt_rec_lease *l, const mt_segment *seg);

/* One renewal, now (an atomic add on header.rec_lease_beat, under the
 * guard: a segment that shrank is left alone). */
void mt_lease_beat(const mt_segment *seg);

#endif
