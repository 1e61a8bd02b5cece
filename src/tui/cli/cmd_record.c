/* cmd_record.c -- `memtop -p PID --record FILE`: ask a running target to
 * record into FILE over the control channel, report the file's growth once
 * a second on stderr, and stop the recording on Ctrl-C / SIGTERM / SIGHUP
 * (or notice that the target ended it by exiting or failing). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abs_path.h"
#include "attach.h"
#include "commands.h"
#include "format.h"
#include "signals.h"

#define CTRL_TIMEOUT_MS 5000
#define STATUS_EVERY_S 1.0

/* The target's recording status, validated (a bad one reads as failed). */
static void status_of(const mt_segment *seg, mt_shm_recording *out)
{
    mt_err err;
    if (mt_segment_recording(seg, out, &err) != MT_OK) {
        memset(out, 0, sizeof *out);
        out->state = MT_REC_STATE_FAILED;
        snprintf(out->message, sizeof out->message, "%s", err.msg);
    }
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void print_status(const char *path, const mt_shm_recording *s)
{
    char size[32], dropped[64];
    fprintf(stderr, "memtop: recording %s: %s, %" PRIu64 " events%s\n", path,
            mt_fmt_bytes(file_bytes(path), size, sizeof size), s->events_written,
            mt_fmt_dropped(s->events_dropped, dropped, sizeof dropped));
}

static int start(mt_view *v, const char *path)
{
    mt_ctrl_reply reply;
    mt_err err;
    mt_errc rc = mt_control_send(&v->seg, MT_CMD_RECORD_START, path, CTRL_TIMEOUT_MS, &reply, &err);
    if (rc == MT_E_TARGET) {
        mt_errorf("%s: cannot record: %s", path, reply.msg[0] ? reply.msg : "refused");
        return -1;
    }
    if (rc) {
        mt_errorf("process %d: cannot start recording: %s", mt_segment_pid(&v->seg), err.msg);
        return -1;
    }
    return 0;
}

/* Until a signal (1), the target's end or failure of the recording (0). */
static int wait_loop(mt_view *v, const char *path, mt_shm_recording *s)
{
    sigset_t set, old;
    mt_sig_block(&set, &old, 0);
    siginfo_t info;
    int sig = 0;
    for (;;) {
        status_of(&v->seg, s);
        if (s->state != MT_REC_STATE_ON || mt_segment_state(&v->seg) != MT_STATE_RUNNING)
            break;
        print_status(path, s);
        if ((sig = mt_sig_wait(&set, STATUS_EVERY_S, &info)) != 0)
            break;
    }
    mt_sig_restore(&old);
    return sig != 0;
}

static int stop(mt_view *v, const char *path)
{
    mt_ctrl_reply reply;
    mt_err err;
    mt_errc rc = mt_control_send(&v->seg, MT_CMD_RECORD_STOP, NULL, CTRL_TIMEOUT_MS, &reply, &err);
    if (rc == MT_E_GONE)
        return 0; /* it finalized the file as it exited */
    if (rc) {
        mt_errorf("%s: stopping the recording: %s", path,
                  rc == MT_E_TARGET && reply.msg[0] ? reply.msg : err.msg);
        return -1;
    }
    return 0;
}

static int finish(mt_view *v, const char *path, bool stopped)
{
    mt_shm_recording s;
    status_of(&v->seg, &s);
    if (s.state == MT_REC_STATE_FAILED) {
        mt_errorf("%s: the recording failed: %s", path,
                  s.message[0] ? s.message : strerror(s.error));
        return MT_EXIT_FAIL;
    }
    if (!stopped)
        fprintf(stderr, "memtop: process %d ended; the recording is complete\n",
                mt_segment_pid(&v->seg));
    char size[32], dropped[64];
    uint64_t bytes = file_bytes(path);
    printf("recorded %s: %" PRIu64 " bytes (%s), %" PRIu64 " events%s\n", path, bytes,
           mt_fmt_bytes(bytes, size, sizeof size), s.events_written,
           mt_fmt_dropped(s.events_dropped, dropped, sizeof dropped));
    fflush(stdout);
    return MT_EXIT_OK;
}

int mt_cmd_record(const mt_opts *o)
{
    char path[MT_PATH_MAX];
    if (mt_abs_path(o->record_path, path, sizeof path) != 0) {
        mt_errorf("%s: path too long", o->record_path);
        return MT_EXIT_FAIL;
    }
    mt_view v;
    mt_view_init(&v);
    char msg[600];
    if (mt_attach_pid(&v, mt_shm_dir(), o->pid, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        return MT_EXIT_FAIL;
    }
    int rc = MT_EXIT_FAIL;
    if (start(&v, path) == 0) {
        mt_shm_recording s;
        bool signalled = wait_loop(&v, path, &s);
        bool need_stop = signalled || s.state == MT_REC_STATE_ON;
        if (!need_stop || stop(&v, path) == 0)
            rc = finish(&v, path, signalled);
    }
    mt_view_detach(&v);
    return rc;
}
