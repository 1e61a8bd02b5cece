/* cmd_record.c -- `memtop -p PID --record FILE`: ask a running target to
 * record into FILE over the control channel, report the file's growth on
 * stderr (on a terminal one line, rewritten each second; into a log a line
 * every 10 s), and stop the recording on Ctrl-C / SIGTERM / SIGHUP
 * (or notice that the target ended it by exiting or failing).  FILE "-":
 * the recording goes to standard output as it grows (record_stream.h).
 * The recording is held by this memtop (a lease, shm_lease.h): the wait
 * loop renews it at every tick, so that a memtop killed, hung or stopped
 * (SIGKILL, SIGSTOP) leaves no recording running in the target. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_name.h"
#include "attach.h"
#include "commands.h"
#include "dat_format.h"
#include "format.h"
#include "record_stream.h"
#include "signals.h"

#define CTRL_TIMEOUT_MS 5000
#define STATUS_EVERY_S 1.0      /* on a terminal: one line, rewritten in place */
#define STATUS_LOG_EVERY_S 10.0 /* into a file or a pipe (a log): a line this often */
#define FILE_TICK_S 0.25        /* recording into a file: the lease renewed this often */
#define STREAM_TICK_S 0.1       /* relaying a stream: how often */
#define STREAM_DRAIN_STALL_S 30 /* the end of a stream: give up when stdout takes nothing */

/* The status line on stderr: on a terminal one line rewritten in place
 * (open until something else is said), elsewhere a line each time. */
typedef struct status_line {
    bool tty, open;
} status_line;

/* Ends a status line left open, before any other message. */
static void line_end(status_line *l)
{
    if (l->open)
        fputc('\n', stderr);
    l->open = false;
}

/* The target's recording status and its dropped events by cause (why,
 * MT_REC_WHY_MAX counts), validated (a bad one reads as failed).  False,
 * out and why as they were, when it is not known now (no stable read: the
 * target is writing it; a dead target ends the wait by its state). */
static bool status_of(const mt_segment *seg, mt_shm_recording *out, uint64_t *why,
                      mt_rec_lease_info *lease)
{
    mt_err err;
    mt_shm_recording r;
    uint64_t w[MT_REC_WHY_MAX];
    mt_rec_lease_info li;
    mt_errc rc = mt_segment_recording_lease(seg, &r, w, &li, &err);
    if (rc == MT_E_BUSY)
        return false;
    if (rc != MT_OK) {
        memset(&r, 0, sizeof r);
        r.state = MT_REC_STATE_FAILED;
        snprintf(r.message, sizeof r.message, "%s", err.msg);
    }
    *out = r;
    memcpy(why, w, sizeof w);
    if (lease)
        *lease = li;
    return true;
}

/* The file the target records into, as it named it (its status, checked
 * terminated): `path` is the pattern memtop sent (%p unexpanded, a '%' of
 * the working directory doubled). */
static const char *rec_name(const mt_shm_recording *s, const char *path)
{
    return s->path[0] ? s->path : path;
}

/* The recording's bytes: the file's size (the target's count where memtop
 * cannot see the file: another mount namespace), or those sent of a
 * stream. */
static uint64_t file_bytes(const mt_shm_recording *s, const char *path, const mt_stream *st)
{
    struct stat sb;
    if (st)
        return st->sent;
    return stat(rec_name(s, path), &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size
                                                                    : s->bytes_written;
}

/* ", inexact: 9 events dropped: disk behind 9" after the event count
 * (why: the causes read with s), or "". */
static char *dropped_note(const mt_shm_recording *s, const uint64_t *why, char *buf, size_t n)
{
    char words[MT_DAT_LOST_LINE_MAX];
    buf[0] = '\0';
    if (s->events_dropped)
        snprintf(buf, n, ", inexact: %s", mt_recording_dropped(s, why, words, sizeof words));
    return buf;
}

static void print_status(status_line *l, const uint64_t *why, const char *path,
                         const mt_shm_recording *s, const mt_stream *st)
{
    char size[32], dropped[MT_DAT_LOST_LINE_MAX + 16], behind[48] = "";
    if (st)
        snprintf(behind, sizeof behind, " sent, %" PRIu64 " bytes to send", mt_stream_backlog(st));
    fprintf(stderr, "%smemtop: recording %s: %s%s, %" PRIu64 " events%s%s", l->tty ? "\r" : "",
            st ? "to stdout" : rec_name(s, path),
            mt_fmt_bytes(file_bytes(s, path, st), size, sizeof size), behind, s->events_written,
            dropped_note(s, why, dropped, sizeof dropped), l->tty ? "\033[K" : "\n");
    l->open = l->tty;
}

static int start(mt_view *v, const char *path, mt_record_kind kind, mt_rec_lease *lease)
{
    mt_ctrl_reply reply;
    mt_err err;
    char arg[MT_CTRL_ARG_MAX];
    if (!mt_control_record_arg(arg, sizeof arg, path, kind)) {
        mt_errorf("%s: path too long for the control channel", path);
        return -1;
    }
    mt_errc rc = mt_lease_record_start(&v->seg, arg, CTRL_TIMEOUT_MS, &reply, lease, &err);
    if (rc == MT_OK && lease->old_target)
        fprintf(stderr,
                "memtop: process %d's libmemtop.so is older than recording leases: if this memtop "
                "is killed, the recording goes on until it is stopped\n",
                mt_segment_pid(&v->seg));
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

/* A stream's relay step: 0 goes on, 1 must stop (said why on stderr, on a
 * line of its own). */
static int relay(mt_stream *st, status_line *l)
{
    char msg[256];
    int rc = mt_stream_pump(st, false, msg, sizeof msg);
    if (rc)
        line_end(l);
    if (rc > 0)
        mt_errorf("standard output is %" PRIu64 " bytes behind (at most %" PRIu64
                  ", MEMTOP_STREAM_BACKLOG): stopping the recording",
                  mt_stream_backlog(st), st->backlog_max);
    else if (rc < 0)
        mt_errorf("streaming the recording: %s: stopping it", msg);
    return rc != 0;
}

/* Until a signal or a stream that must stop (1), the target's end or
 * failure of the recording (0).  *lost: the lease this memtop held was let
 * go because its recording is no longer the one running (ended by the
 * target while this memtop was stopped, and maybe another started since:
 * that one is not ours to report or stop). */
static int wait_loop(mt_view *v, const char *path, mt_shm_recording *s, uint64_t *why,
                     mt_stream *st, mt_rec_lease *lease, bool *lost)
{
    *lost = false;
    memset(s, 0, sizeof *s); /* until the status is known: on (start said so) */
    memset(why, 0, MT_REC_WHY_MAX * sizeof *why);
    s->state = MT_REC_STATE_ON;
    sigset_t set, old;
    mt_sig_block(&set, &old, 0);
    siginfo_t info;
    double tick = st ? STREAM_TICK_S : FILE_TICK_S;
    status_line line = {isatty(STDERR_FILENO) == 1, false};
    int sig = 0, ticks = 0;
    int per_status = (int)((line.tty ? STATUS_EVERY_S : STATUS_LOG_EVERY_S) / tick);
    for (;; ticks++) {
        bool known = status_of(&v->seg, s, why, NULL);
        if (s->state != MT_REC_STATE_ON || mt_segment_state(&v->seg) != MT_STATE_RUNNING)
            break;
        if (lease->held && !mt_lease_renew(lease, &v->seg)) {
            *lost = true;
            break;
        }
        if (st && relay(st, &line)) {
            sig = -1;
            break;
        }
        if (ticks % per_status == 0 && known)
            print_status(&line, why, path, s, st);
        if ((sig = mt_sig_wait(&set, tick, &info)) != 0)
            break;
    }
    line_end(&line); /* what follows (the end, an error) on a line of its own */
    mt_sig_restore(&old);
    return sig != 0;
}

/* The rest of a finished stream, as long as standard output takes it. */
static int drain(mt_stream *st)
{
    char msg[256];
    uint64_t last = st->sent;
    for (int idle = 0; idle < STREAM_DRAIN_STALL_S; idle++) {
        if (mt_stream_pump(st, true, msg, sizeof msg) < 0) {
            mt_errorf("streaming the recording: %s", msg);
            return -1;
        }
        if (!mt_stream_backlog(st))
            return 0;
        if (st->sent != last)
            idle = -1, last = st->sent;
    }
    mt_errorf("standard output took nothing for %d s: %" PRIu64 " bytes of the recording not sent",
              STREAM_DRAIN_STALL_S, mt_stream_backlog(st));
    return -1;
}

/* Stops this memtop's recording (lease->recording, its number; 0: not
 * known, whatever runs), never one another viewer started since. */
static int stop(mt_view *v, const char *path, const mt_rec_lease *lease)
{
    mt_ctrl_reply reply;
    mt_err err;
    char arg[MT_CTRL_ARG_MAX];
    mt_control_stop_arg(arg, sizeof arg, lease->recording); /* always fits */
    mt_errc rc = mt_control_send(&v->seg, MT_CMD_RECORD_STOP, arg, CTRL_TIMEOUT_MS, &reply, &err);
    if (rc == MT_E_GONE)
        return 0; /* it finalized the file as it exited */
    if (rc) {
        mt_errorf("%s: stopping the recording: %s", path,
                  rc == MT_E_TARGET && reply.msg[0] ? reply.msg : err.msg);
        return -1;
    }
    return 0;
}

/* The recording this memtop held ended without it (wait_loop's *lost):
 * say so, and nothing of the recording that may run now. */
static int lost_lease(mt_view *v, const char *path, const mt_rec_lease *lease, mt_stream *st)
{
    fprintf(stderr,
            "memtop: process %d ended this memtop's recording %s: it was not renewed for "
            "%u.%03u s (was this memtop stopped?); the file is finalized\n",
            mt_segment_pid(&v->seg), st ? "(to stdout)" : path, lease->ms / 1000, lease->ms % 1000);
    if (st)
        drain(st);
    return MT_EXIT_FAIL;
}

static int finish(mt_view *v, const char *path, bool stopped, mt_stream *st)
{
    mt_shm_recording s;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info lease = {0, 0};
    bool known = false;
    for (int i = 0; i < 100 && !known; i++) /* each try ~10 ms at most: ~1 s */
        known = status_of(&v->seg, &s, why, &lease);
    if (!known) {
        mt_errorf("%s: the recording's status is not known (no stable read of it)", path);
        return MT_EXIT_FAIL;
    }
    if (s.state == MT_REC_STATE_FAILED) {
        mt_errorf("%s: the recording failed: %s", path,
                  s.message[0] ? s.message : strerror(s.error));
        return MT_EXIT_FAIL;
    }
    bool lapsed = !stopped && lease.end_reason == MT_DAT_END_LEASE;
    if (lapsed) /* this memtop was stopped (SIGSTOP) or too busy to renew for the bound */
        fprintf(stderr,
                "memtop: process %d stopped the recording: this memtop did not renew it for "
                "%u.%03u s (was it stopped?); the file is finalized\n",
                mt_segment_pid(&v->seg), lease.ms / 1000, lease.ms % 1000);
    else if (!stopped && lease.end_reason == MT_DAT_END_STOP) /* another viewer's r */
        fprintf(stderr,
                "memtop: another memtop stopped the recording of process %d; the file is "
                "finalized\n",
                mt_segment_pid(&v->seg));
    else if (!stopped)
        fprintf(stderr, "memtop: process %d ended; the recording is complete\n",
                mt_segment_pid(&v->seg));
    if (st && drain(st) != 0)
        return MT_EXIT_FAIL;
    char size[32], dropped[MT_DAT_LOST_LINE_MAX + 16];
    uint64_t bytes = file_bytes(&s, path, st);
    fprintf(st ? stderr : stdout, "%srecorded %s: %" PRIu64 " bytes (%s), %" PRIu64 " events%s\n",
            st ? "memtop: " : "", st ? "to stdout" : rec_name(&s, path), bytes,
            mt_fmt_bytes(bytes, size, sizeof size), s.events_written,
            dropped_note(&s, why, dropped, sizeof dropped));
    fflush(stdout);
    return lapsed ? MT_EXIT_FAIL : MT_EXIT_OK;
}

/* Starts the recording into path, or into a stream's file (then opened). */
static int begin(mt_view *v, char *path, size_t n, mt_record_kind kind, mt_stream *st,
                 mt_rec_lease *lease)
{
    char msg[600];
    if (st && mt_stream_prepare(st, v->seg.owner, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        return -1;
    }
    if (st && strlen(st->path) < n) /* it always fits: both are MT_PATH_MAX */
        memcpy(path, st->path, strlen(st->path) + 1);
    if (start(v, path, kind, lease) != 0)
        return -1;
    if (st && mt_stream_open(st, v->seg.owner, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        stop(v, path, lease);
        return -1;
    }
    return 0;
}

int mt_cmd_record(const mt_opts *o)
{
    char path[MT_PATH_MAX];
    bool streaming = strcmp(o->record_path, "-") == 0;
    if (!streaming && mt_record_name_abs(o->record_path, path, sizeof path) != 0) {
        mt_errorf("%s: path too long", o->record_path);
        return MT_EXIT_FAIL;
    }
    if (!streaming && mt_record_name_check("--record", o->record_path, path, "") != 0)
        return MT_EXIT_FAIL;
    mt_view v;
    mt_view_init(&v);
    char msg[600];
    if (mt_attach_pid(&v, mt_shm_dir(), o->pid, false, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        return MT_EXIT_FAIL;
    }
    int rc = MT_EXIT_FAIL;
    mt_stream stream, *st = streaming ? &stream : NULL;
    mt_record_kind kind = {o->cull_ms, o->thread_order};
    mt_rec_lease lease = {false, false, 0, 0, 0};
    /* Blocked from before the start: a Ctrl-C while the target starts the
     * recording is taken by wait_loop, which stops it (it once killed
     * memtop there and left the recording to run out its lease). */
    sigset_t sigs, old;
    mt_sig_block(&sigs, &old, 0);
    if (begin(&v, path, sizeof path, kind, st, &lease) == 0) {
        mt_shm_recording s;
        uint64_t why[MT_REC_WHY_MAX];
        bool lost;
        bool signalled = wait_loop(&v, path, &s, why, st, &lease, &lost);
        bool need_stop = !lost && (signalled || s.state == MT_REC_STATE_ON);
        if (lost)
            rc = lost_lease(&v, path, &lease, st);
        else if (!need_stop || stop(&v, path, &lease) == 0)
            rc = finish(&v, path, signalled, st);
    }
    if (st)
        mt_stream_close(st);
    mt_view_detach(&v);
    mt_sig_restore(&old); /* a signal still pending (begin failed) acts now */
    return rc;
}
