/* shm_control.c -- control channel client (protocol in shm_layout.h).
 *
 * lock: CAS 0 -> our pid; a lock held by a dead pid is stolen.  Request:
 * write cmd/arg, then req_seq = resp_seq + 1 (release).  Answer: resp_seq
 * reaches req_seq (acquire), then status/msg are read. */
#include "shm_control.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm_liveness.h"

#define POLL_NS 2000000L

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void pause_poll(void)
{
    struct timespec ts = {0, POLL_NS};
    nanosleep(&ts, NULL);
}

static mt_errc take_lock(mt_shm_control *c, uint32_t me, long long deadline, mt_err *err)
{
    for (;;) {
        uint32_t holder = 0;
        if (__atomic_compare_exchange_n(&c->lock, &holder, me, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return MT_OK;
        if (holder == me || !mt_pid_exists((int)holder)) {
            if (__atomic_compare_exchange_n(&c->lock, &holder, me, false, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return MT_OK;
            continue;
        }
        if (now_ms() >= deadline)
            return mt_err_set(err, MT_E_TIMEOUT, "control channel busy (held by pid %u)", holder);
        pause_poll();
    }
}

static void copy_reply(const mt_shm_control *c, mt_ctrl_reply *reply)
{
    reply->status = c->status;
    memcpy(reply->msg, c->msg, sizeof reply->msg);
    reply->msg[sizeof reply->msg - 1] = '\0';
}

static mt_errc wait_reply(const mt_segment *seg, const mt_shm_control *c, uint64_t req,
                          long long deadline, mt_ctrl_reply *reply, mt_err *err)
{
    for (;;) {
        if (__atomic_load_n(&c->resp_seq, __ATOMIC_ACQUIRE) >= req) {
            copy_reply(c, reply);
            if (reply->status == MT_CTRL_OK)
                return MT_OK;
            return mt_err_set(err, MT_E_TARGET, "target refused the command (status %d): %.200s",
                              (int)reply->status, reply->msg);
        }
        if (mt_segment_state(seg) != MT_STATE_RUNNING)
            return mt_err_set(err, MT_E_GONE, "process %d exited", (int)seg->id.pid);
        if (now_ms() >= deadline)
            return mt_err_set(err, MT_E_TIMEOUT, "process %d did not answer", (int)seg->id.pid);
        pause_poll();
    }
}

mt_errc mt_control_send(mt_segment *seg, uint32_t cmd, const char *arg, int timeout_ms,
                        mt_ctrl_reply *reply, mt_err *err)
{
    memset(reply, 0, sizeof *reply);
    if (!seg->writable)
        return mt_err_set(err, MT_E_READONLY, "segment opened read-only: cannot send commands");
    mt_shm_control *c = &((mt_shm_header *)seg->base)->control;
    long long deadline = now_ms() + timeout_ms;
    uint32_t me = (uint32_t)getpid();
    mt_errc rc = take_lock(c, me, deadline, err);
    if (rc)
        return rc;
    c->cmd = cmd;
    size_t len = arg ? strnlen(arg, sizeof c->arg - 1) : 0;
    if (len)
        memcpy(c->arg, arg, len);
    c->arg[len] = '\0';
    uint64_t req = __atomic_load_n(&c->resp_seq, __ATOMIC_ACQUIRE) + 1;
    __atomic_store_n(&c->req_seq, req, __ATOMIC_RELEASE);
    rc = wait_reply(seg, c, req, deadline, reply, err);
    uint32_t expect = me;
    __atomic_compare_exchange_n(&c->lock, &expect, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    return rc;
}
