/* control_job.c -- control commands off the UI thread (see control_job.h). */
#include "control_job.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "shm_guard.h"

#define ANSWER_TIMEOUT_MS 5000

static void *run(void *arg)
{
    mt_control_job *j = arg;
    memset(&j->lease, 0, sizeof j->lease);
    if (j->cmd == MT_CMD_RECORD_START)
        j->rc =
            mt_lease_record_start(j->seg, j->arg, ANSWER_TIMEOUT_MS, &j->reply, &j->lease, &j->err);
    else
        j->rc = mt_control_send(j->seg, j->cmd, j->arg[0] ? j->arg : NULL, ANSWER_TIMEOUT_MS,
                                &j->reply, &j->err);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int mt_control_job_start(mt_control_job *j, mt_segment *seg, uint32_t cmd, const char *arg,
                         char *msg, size_t n)
{
    if (j->running) {
        snprintf(msg, n, "the target has not answered the last command yet");
        return -1;
    }
    j->seg = seg;
    j->cmd = cmd;
    snprintf(j->arg, sizeof j->arg, "%s", arg ? arg : "");
    j->done = 0;
    memset(&j->reply, 0, sizeof j->reply);
    /* The thread must not take the viewer's signals (they are collected
     * through a signalfd by the screen manager). */
    sigset_t all, old;
    mt_guard_thread_mask(&all); /* faults stay deliverable: the SIGBUS guard */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&j->thread, NULL, run, j);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(msg, n, "cannot start a thread: %s", strerror(e));
        return -1;
    }
    j->running = true;
    return 0;
}

/* msg gets the target's answer, cut to n bytes if longer. */
static mt_job_state collect(mt_control_job *j, char *msg, size_t n)
{
    int cut = n ? (int)n - 1 : 0;
    pthread_join(j->thread, NULL);
    j->running = false;
    if (j->rc == MT_OK) {
        snprintf(msg, n, "%.*s", cut, j->reply.msg);
        return MT_JOB_DONE;
    }
    if (j->rc == MT_E_TARGET)
        snprintf(msg, n, "%.*s", cut, j->reply.msg[0] ? j->reply.msg : "the target refused");
    else
        snprintf(msg, n, "%.*s", cut, j->err.msg);
    return MT_JOB_FAILED;
}

mt_job_state mt_control_job_poll(mt_control_job *j, char *msg, size_t n)
{
    if (!j->running)
        return MT_JOB_IDLE;
    if (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
        return MT_JOB_RUNNING;
    return collect(j, msg, n);
}

bool mt_control_job_finish(mt_control_job *j)
{
    char msg[64];
    return j->running && collect(j, msg, sizeof msg) == MT_JOB_DONE &&
           j->cmd == MT_CMD_RECORD_START;
}
