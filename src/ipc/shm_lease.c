/* shm_lease.c -- a recording lease, the viewer's side (see shm_lease.h).
 *
 * The beat is a counter only the lease's holder adds to (relaxed: it
 * carries no data, the target only looks for a change).  A recording is
 * named by the target's count of recordings (recording.recordings), read
 * right after the start's answer (the target publishes the status before
 * it answers): a viewer whose recording ended renews no other one. */
#include "shm_lease.h"

#include <string.h>
#include <time.h>

#include "shm_guard.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void add_beat(void *ctx)
{
    mt_shm_header *h = ctx;
    __atomic_fetch_add(&h->rec_lease_beat, 1, __ATOMIC_RELAXED);
}

void mt_lease_beat(const mt_segment *seg)
{
    if (seg->writable)
        mt_segment_guard(seg, add_beat, (void *)mt_segment_header(seg), NULL);
}

/* Takes the lease of the recording that runs now (just started). */
static void take(mt_rec_lease *l, const mt_segment *seg)
{
    mt_shm_recording r;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info info = {0, 0};
    mt_err err;
    memset(l, 0, sizeof *l);
    if (mt_segment_recording_lease(seg, &r, why, &info, &err) != MT_OK ||
        r.state != MT_REC_STATE_ON)
        return; /* ended already, or not known: nothing to hold */
    l->held = info.ms != 0;
    l->recording = r.recordings;
    l->ms = info.ms;
    l->next_ms = now_ms();
}

mt_errc mt_lease_record_start(mt_segment *seg, const char *arg, int timeout_ms,
                              mt_ctrl_reply *reply, mt_rec_lease *l, mt_err *err)
{
    memset(l, 0, sizeof *l);
    mt_errc rc = mt_control_send(seg, MT_CMD_RECORD_START_LEASED, arg, timeout_ms, reply, err);
    bool old = rc == MT_E_TARGET && reply->status == MT_CTRL_UNKNOWN_CMD;
    if (old)
        rc = mt_control_send(seg, MT_CMD_RECORD_START, arg, timeout_ms, reply, err);
    if (rc == MT_OK && !old)
        take(l, seg);
    l->old_target = old;
    return rc;
}

bool mt_lease_renew(mt_rec_lease *l, const mt_segment *seg)
{
    if (!l->held)
        return false;
    long long now = now_ms();
    if (now < l->next_ms)
        return true;
    mt_shm_recording r;
    mt_err err;
    mt_errc rc = mt_segment_recording(seg, &r, &err);
    if (rc == MT_OK && (r.state != MT_REC_STATE_ON || r.recordings != l->recording)) {
        l->held = false;
        return false;
    }
    mt_lease_beat(seg);
    l->next_ms = now + MT_REC_LEASE_RENEW_MS;
    return true;
}
