/* source.c -- the viewer's live data source (see source.h). */
#include "source.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "memtop_ipc.h"
#include "preload_never.h"
#include "rec_stop.h"

#define GIVE_UP_FAILURES 100 /* consecutive hard refresh failures */

void mt_source_init(mt_source *s)
{
    memset(s, 0, sizeof *s);
    mt_view_init(&s->view);
}

int mt_source_attach(mt_source *s, int pid, char *msg, size_t n)
{
    s->pid = pid;
    if (mt_attach_pid(&s->view, mt_shm_dir(), pid, true, msg, n) != 0)
        return -1;
    s->version++; /* attaching read a first snapshot */
    mt_state st = mt_view_state(&s->view);
    s->phase = st == MT_STATE_EXITED  ? MT_SRC_EXITED
               : st == MT_STATE_STALE ? MT_SRC_GONE
                                      : MT_SRC_LIVE;
    return 0;
}

int mt_source_launch(mt_source *s, char **argv, const char *lib, const char *out_path, char *msg,
                     size_t n)
{
    char def[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(def, sizeof def, "%s/memtop-%%p.out", tmp && *tmp ? tmp : "/tmp");
    mt_spawn_io io = {out_path ? out_path : def, out_path == NULL, true};
    sigset_t mask;
    sigemptyset(&mask);
    int rc = mt_child_spawn(&s->child, argv, lib, &mask, &io, msg, n);
    if (rc != 0)
        return rc;
    s->launched = true;
    s->pid = (int)s->child.pid;
    s->phase = MT_SRC_WAITING;
    mt_spawn_out_path(&io, s->pid, s->out_path, sizeof s->out_path);
    mt_view_target(&s->view, mt_shm_dir(), s->pid);
    return 0;
}

/* True if the target published since our snapshot, or if its segment
 * shrank under the load (the refresh then says so). */
static bool published_since(const mt_view *v)
{
    uint64_t n;
    const mt_shm_header *h = mt_segment_header(&v->seg);
    return mt_segment_load64(&v->seg, &h->publish_count, &n, NULL) != MT_OK ||
           n != v->snap.slot.publish_seq;
}

bool mt_source_ready(const mt_source *s)
{
    if (!s->view.attached)
        return true; /* try to attach */
    return !s->view.have_snap || published_since(&s->view) || mt_segment_replaced(&s->view.seg);
}

static void hard_failure(mt_source *s, const mt_err *err)
{
    if (++s->failures < GIVE_UP_FAILURES)
        return;
    snprintf(s->error, sizeof s->error, "%s: %s", s->view.path, err->msg);
}

/* PROG runs libmemtop.so but could not create its segment, or its
 * present program never will run it (statically linked, setuid...:
 * preload_never.h): say why on the status line (preload_probe.h), while
 * it runs (after, its memory is gone).  Asked again while there is no
 * error: after an exec into another program. */
static void no_segment(mt_source *s)
{
    char why[400];
    if (mt_preload_probe(s->pid, why, sizeof why, NULL, 0) == MT_PRELOAD_FAILED)
        snprintf(s->error, sizeof s->error, "pid %d has no segment: %s", s->pid, why);
    else if (mt_preload_never(s->pid, why, sizeof why))
        snprintf(s->error, sizeof s->error, "pid %d does not run libmemtop.so: %s", s->pid, why);
}

/* Where the target stands after a refresh. */
static bool update_phase(mt_source *s)
{
    mt_src_phase before = s->phase;
    bool child_gone = s->launched && mt_child_poll(&s->child);
    if (s->view.have_snap) {
        mt_state st = mt_view_state(&s->view);
        if (st == MT_STATE_EXITED)
            s->phase = MT_SRC_EXITED;
        else if (st == MT_STATE_STALE || child_gone)
            s->phase = MT_SRC_GONE;
        else
            s->phase = MT_SRC_LIVE;
    } else if (child_gone) {
        s->phase = MT_SRC_GONE;
    }
    return s->phase != before;
}

int mt_source_open_replay(mt_source *s, const char *path, char *msg, size_t n)
{
    mt_err err = {MT_OK, ""};
    if (!(s->replay = mt_replay_open(path, &err))) {
        snprintf(msg, n, "%s", err.msg);
        return -1;
    }
    s->pid = mt_replay_get_info(s->replay)->pid;
    s->phase = MT_SRC_REPLAY;
    if (!mt_source_seek(s, UINT64_MAX, msg, n)) {
        mt_replay_close(s->replay);
        s->replay = NULL;
        return -1;
    }
    return 0;
}

bool mt_source_seek(mt_source *s, uint64_t t_ns, char *msg, size_t n)
{
    mt_err err = {MT_OK, ""};
    if (mt_replay_seek(s->replay, t_ns, &s->view, &err) != MT_OK) {
        /* the file changed under us (cut, overwritten): say which, and
         * what is shown now (mt_replay_seek went back to the start) */
        snprintf(msg, n, "cannot read %s: %s; shown at its start",
                 mt_replay_get_info(s->replay)->path, err.msg);
        s->version++;
        return false;
    }
    s->version++;
    return true;
}

bool mt_source_poll(mt_source *s)
{
    if (s->replay)
        return false; /* a recording changes only when its cursor moves */
    /* The final state stays on screen; but the state a process left before
     * an exec is final only if the new program does not load libmemtop.so:
     * keep watching for its segment (mt_source_ready). */
    bool execd = s->view.have_snap && (s->view.snap.flags & MT_FLAG_EXECED);
    if ((s->phase == MT_SRC_EXITED && !execd) || (s->phase == MT_SRC_GONE && s->view.have_snap))
        return false;
    bool changed = false;
    if (mt_source_ready(s)) {
        uint64_t before = s->view.have_snap ? s->view.snap.slot.publish_seq : 0;
        mt_err err = {MT_OK, ""};
        /* Attaches first if need be (launch mode, or after an exec). */
        uint64_t ino = s->view.attached ? (uint64_t)s->view.seg.ino : 0;
        mt_errc rc = mt_view_refresh(&s->view, &err);
        if (s->view.attached && (uint64_t)s->view.seg.ino != ino) {
            s->image++;            /* trace ids and names start again */
            s->lease.held = false; /* its recordings, counted from 0 again, are not ours */
        }
        if (rc == MT_OK) {
            s->failures = 0;
            s->error[0] = 0;
            changed = s->view.snap.slot.publish_seq != before;
            s->version += changed;
        } else if (!mt_view_transient(rc)) {
            hard_failure(s, &err);
        }
    } else { /* nothing new: the header's uptime and state still move */
        mt_view_refresh_live(&s->view);
    }
    /* no segment yet, or the one of a program PROG exec'd from */
    execd = s->view.have_snap && (s->view.snap.flags & MT_FLAG_EXECED);
    if (s->launched && !s->error[0] && (!s->view.attached || execd))
        no_segment(s);
    return update_phase(s) || changed;
}

static void sleep_s(double secs)
{
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
}

/* PROG and its children: PROG leads its own process group (unless it
 * left it, so it is also signalled by pid). */
static void signal_prog(const mt_source *s, int sig)
{
    kill(-s->child.pid, sig);
    kill(s->child.pid, sig);
}

/* PROG's recording first (rec_stop.h; a hung PROG: noted), then
 * SIGTERM, then SIGKILL if PROG is still there after grace_s. */
static void end_child(mt_source *s, double grace_s)
{
    if (s->view.attached)
        mt_rec_stop_before_end(&s->view.seg, MT_REC_STOP_WAIT_MS, s->note, sizeof s->note);
    signal_prog(s, SIGTERM);
    for (double waited = 0; waited < grace_s; waited += 0.02) {
        if (mt_child_poll(&s->child))
            return;
        sleep_s(0.02);
    }
    signal_prog(s, SIGKILL);
}

/* A recording this viewer started (`r`) does not outlive it: stopped
 * (finalized) as memtop quits, not left to end at its lease's bound. */
static void stop_held(mt_source *s)
{
    s->lease.next_ms = 0; /* renew now: it checks the recording is still ours */
    if (s->lease.held && s->view.attached && mt_lease_renew(&s->lease, &s->view.seg))
        mt_rec_stop_before_end(&s->view.seg, MT_REC_STOP_WAIT_MS, s->note, sizeof s->note);
    s->lease.held = false;
}

int mt_source_close(mt_source *s, double grace_s)
{
    int status = -1;
    if (s->replay) {
        mt_replay_view_free(&s->view);
        mt_replay_close(s->replay);
        s->replay = NULL;
        mt_view_init(&s->view);
        return status;
    }
    if (!s->launched)
        stop_held(s);
    if (s->launched) {
        bool ran_to_end = mt_child_poll(&s->child);
        if (!ran_to_end)
            end_child(s, grace_s);
        /* The child is a zombie until reaped: its segment name is still ours. */
        mt_shm_unlink_pid(mt_shm_dir(), s->pid);
        int st = mt_child_reap(&s->child);
        if (ran_to_end)
            status = st;
    }
    mt_view_detach(&s->view);
    return status;
}
