/* rec_stop.c -- stopping a target's recording before memtop ends it (see
 * rec_stop.h). */
#include "rec_stop.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define POLL_MS 10

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The recording's status; false when it is not known now (the target is
 * writing it, or the segment is not one of libmemtop.so's). */
static bool status_of(const mt_segment *seg, mt_shm_recording *r)
{
    mt_err err;
    return mt_segment_recording(seg, r, &err) == MT_OK;
}

/* Until the status leaves "on", the target ends, or the deadline: 0 when
 * the recording is finalized (or its target exited), else -1. */
static int wait_stopped(const mt_segment *seg, long long deadline, mt_shm_recording *r)
{
    for (;;) {
        if (status_of(seg, r) && r->state != MT_REC_STATE_ON)
            return r->state == MT_REC_STATE_FAILED ? -1 : 0;
        if (mt_segment_state(seg) != MT_STATE_RUNNING)
            return 0; /* it exited: it finalized the file as it did */
        if (now_ms() >= deadline)
            return -1;
        pause_ms(POLL_MS);
    }
}

int mt_rec_stop_before_end(mt_segment *seg, int timeout_ms, char *msg, size_t n)
{
    msg[0] = '\0';
    mt_shm_recording r;
    memset(&r, 0, sizeof r);
    long long deadline = now_ms() + timeout_ms;
    bool known = false;
    while (!(known = status_of(seg, &r)) && now_ms() < deadline)
        pause_ms(POLL_MS);
    if (known && r.state != MT_REC_STATE_ON)
        return 0;
    mt_ctrl_reply reply;
    mt_err err = {MT_OK, ""};
    char arg[MT_CTRL_ARG_MAX]; /* the one seen running, not one started since */
    mt_control_stop_arg(arg, sizeof arg, known ? r.recordings : 0);
    mt_errc rc = mt_control_send(seg, MT_CMD_RECORD_STOP, arg, timeout_ms, &reply, &err);
    if (rc == MT_E_GONE || wait_stopped(seg, deadline, &r) == 0)
        return 0;
    const char *why = r.state == MT_REC_STATE_FAILED ? (r.message[0] ? r.message : "it failed")
                      : rc != MT_OK                  ? err.msg
                                                     : "its status still says recording";
    snprintf(msg, n, "%s: the recording may not be finalized: %s", r.path[0] ? r.path : "the file",
             why);
    return -1;
}
