/* control_job.h -- one control-channel command (start or stop a recording)
 * sent from a helper thread, so that a target that is slow to answer (or
 * stopped) never freezes the screen: the viewer polls for the answer.
 * While a job runs, the viewer does not refresh its mapping of the
 * segment (the thread uses it). */
#ifndef MEMTOP_CONTROL_JOB_H
#define MEMTOP_CONTROL_JOB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "export_job.h"
#include "memtop_ipc.h"

typedef struct mt_control_job {
    pthread_t thread;
    bool running;
    int done; /* atomic: set with release by the thread when the answer is in */
    mt_segment *seg;
    uint32_t cmd;
    char arg[MT_CTRL_ARG_MAX];
    mt_errc rc;
    mt_ctrl_reply reply;
    mt_err err;
    mt_rec_lease lease; /* a START's: the recording it started, held by this viewer */
} mt_control_job;

/* Send cmd/arg to seg in the background (MT_CMD_RECORD_START: a recording
 * held by this viewer, mt_lease_record_start; j->lease once DONE).  0, or -1 (a job is running, or
 * no thread) with a message. */
int mt_control_job_start(mt_control_job *j, mt_segment *seg, uint32_t cmd, const char *arg,
                         char *msg, size_t n);

/* RUNNING, or DONE / FAILED once with the answer (or the error) in msg,
 * then IDLE. */
mt_job_state mt_control_job_poll(mt_control_job *j, char *msg, size_t n);

/* Wait for a running job (at quit).  True if it was a START that
 * succeeded: j->lease holds the recording it started, which the viewer
 * must stop as it quits (`r` then `q` at once once left it running until
 * its lease ran out). */
bool mt_control_job_finish(mt_control_job *j);

#endif
