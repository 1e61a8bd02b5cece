/* shm_control.c -- control channel client (protocol in shm_layout.h).
 *
 * lock: CAS 0 -> our pid; a lock held by a dead pid is stolen.  Request:
 * write cmd/arg, then req_seq = resp_seq + 1 (release).  Answer: resp_seq
 * reaches req_seq (acquire), then status/msg are read.  Every access to the
 * control area, reads and writes, runs under the guard (shm_guard.h): a
 * file that shrinks ends the exchange with MT_E_TRUNCATED, not a SIGBUS. */
#include "shm_control.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm_guard.h"
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

typedef struct lock_cas {
    mt_shm_control *c;
    uint32_t expect, desired;
    uint32_t seen; /* the lock word found (== expect if won) */
    bool won;
} lock_cas;

static void cas_take(void *ctx)
{
    lock_cas *l = ctx;
    l->seen = l->expect;
    l->won = __atomic_compare_exchange_n(&l->c->lock, &l->seen, l->desired, false, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED);
}

static void cas_release(void *ctx)
{
    lock_cas *l = ctx;
    l->seen = l->expect;
    l->won = __atomic_compare_exchange_n(&l->c->lock, &l->seen, l->desired, false, __ATOMIC_RELEASE,
                                         __ATOMIC_RELAXED);
}

static mt_errc take_lock(const mt_segment *seg, mt_shm_control *c, uint32_t me, long long deadline,
                         mt_err *err)
{
    lock_cas l = {c, 0, me, 0, false};
    for (;;) {
        mt_errc rc = mt_segment_guard(seg, cas_take, &l, err);
        if (rc || l.won)
            return rc;
        if (l.seen == me || !mt_pid_exists((int)l.seen)) {
            l.expect = l.seen; /* ours already, or its holder is dead: steal it */
            continue;
        }
        if (now_ms() >= deadline)
            return mt_err_set(err, MT_E_TIMEOUT, "control channel busy (held by pid %u)", l.seen);
        l.expect = 0;
        pause_poll();
    }
}

static void release_lock(const mt_segment *seg, mt_shm_control *c, uint32_t me)
{
    lock_cas l = {c, me, 0, 0, false};
    mt_segment_guard(seg, cas_release, &l, NULL); /* nothing to do if the file shrank */
}

typedef struct request {
    mt_shm_control *c;
    uint32_t cmd;
    const char *arg;
    size_t len;
    uint64_t seq; /* the req_seq posted */
} request;

static void post(void *ctx)
{
    request *q = ctx;
    q->c->cmd = q->cmd;
    if (q->len)
        memcpy(q->c->arg, q->arg, q->len);
    q->c->arg[q->len] = '\0';
    q->seq = __atomic_load_n(&q->c->resp_seq, __ATOMIC_ACQUIRE) + 1;
    __atomic_store_n(&q->c->req_seq, q->seq, __ATOMIC_RELEASE);
}

static mt_errc copy_reply(const mt_segment *seg, const mt_shm_control *c, mt_ctrl_reply *reply,
                          mt_err *err)
{
    mt_errc rc = mt_segment_copy(seg, &reply->status, &c->status, sizeof reply->status, err);
    if (!rc)
        rc = mt_segment_copy(seg, reply->msg, c->msg, sizeof reply->msg, err);
    reply->msg[sizeof reply->msg - 1] = '\0';
    return rc;
}

static mt_errc wait_reply(const mt_segment *seg, const mt_shm_control *c, uint64_t req,
                          long long deadline, mt_ctrl_reply *reply, mt_err *err)
{
    for (;;) {
        uint64_t resp;
        mt_errc rc = mt_segment_load64(seg, &c->resp_seq, &resp, err);
        if (rc)
            return rc;
        if (resp >= req) {
            rc = copy_reply(seg, c, reply, err);
            if (rc || reply->status == MT_CTRL_OK)
                return rc;
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
    mt_errc rc = take_lock(seg, c, me, deadline, err);
    if (rc)
        return rc;
    request q = {c, cmd, arg, arg ? strnlen(arg, sizeof c->arg - 1) : 0, 0};
    rc = mt_segment_guard(seg, post, &q, err);
    if (!rc)
        rc = wait_reply(seg, c, q.seq, deadline, reply, err);
    release_lock(seg, c, me);
    return rc;
}

bool mt_control_record_arg(char *out, size_t n, const char *path, mt_record_kind kind)
{
    if (n > MT_CTRL_ARG_MAX)
        n = MT_CTRL_ARG_MAX;
    const char *order = kind.thread_order ? MT_CTRL_THREAD_ORDER " " : "";
    uint64_t ms = kind.cull_ms;
    int k = ms ? snprintf(out, n, "%scull=%llu.%03llu %s", order, (unsigned long long)(ms / 1000),
                          (unsigned long long)(ms % 1000), path)
               : snprintf(out, n, "%s%s", order, path);
    return k >= 0 && (size_t)k < n;
}

bool mt_control_stop_arg(char *out, size_t n, uint64_t recording)
{
    int k = recording
                ? snprintf(out, n, MT_CTRL_STOP_RECORDING "%llu", (unsigned long long)recording)
                : snprintf(out, n, "%s", "");
    return k >= 0 && (size_t)k < n;
}
