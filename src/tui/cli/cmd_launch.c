/* cmd_launch.c -- `memtop --batch|--export ... -- PROG ARGS`: run PROG with
 * libmemtop.so preloaded, report on it while it runs, take the snapshot it
 * publishes at exit, remove its segment, and exit with PROG's status
 * (memtop's own if it failed, or 3 with --strict on data that is not
 * exact: a CI leak check must not pass on a report it cannot trust). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_batch.h"
#include "commands.h"
#include "launch.h"
#include "lib_locate.h"
#include "preload_never.h"
#include "rec_stop.h"
#include "signals.h"
#include "symbols.h"

#define ATTACH_GIVE_UP 100 /* consecutive hard failures (~2 s) */
#define POLL_S 0.02
#define PATH_MAX_MSG 8400

typedef struct launch {
    const mt_opts *o;
    mt_child child;
    mt_view view;
    mt_symbols syms;
    mt_locator loc;
    sigset_t set;
    long reports;
    uint64_t last_seq;    /* the snapshot last reported */
    double last_report_s; /* when (mt_now_s) */
    int failures;
    bool gave_up;
    bool no_segment; /* PROG could not create its segment: said why once */
    bool never;      /* PROG's program will never run libmemtop.so: said once */
    dev_t never_dev; /* for this executable */
    ino_t never_ino;
    int rc; /* memtop's own status */
} launch;

static void note_failure(launch *L, mt_errc rc, const mt_err *err)
{
    if (mt_view_transient(rc)) {
        L->failures = 0;
        return;
    }
    if (++L->failures < ATTACH_GIVE_UP)
        return;
    mt_errorf("%s: %s", L->view.path, err->msg);
    mt_view_detach(&L->view);
    L->gave_up = true;
    L->rc = MT_EXIT_FAIL;
}

static bool have_snapshot(const launch *L)
{
    return L->view.attached && L->view.have_snap;
}

/* ", now /path/prog" when the program pid runs (link: /proc/PID/exe) is
 * not the PROG memtop started (it exec'd another), else "". */
static const char *now_running(const char *argv0, const char *link, char *buf, size_t n)
{
    char prog[4096];
    ssize_t len = readlink(link, prog, sizeof prog - 1);
    prog[len > 0 ? len : 0] = '\0';
    const char *b = strrchr(prog, '/'), *a = strrchr(argv0, '/');
    bool same = strcmp(b ? b + 1 : prog, a ? a + 1 : argv0) == 0;
    snprintf(buf, n, "%s%s", same || !prog[0] ? "" : ", now ", same ? "" : prog);
    return buf;
}

/* PROG's present program will never run libmemtop.so (statically linked,
 * setuid...: preload_never.h): said at once, once per program it execs,
 * rather than waiting for a snapshot that never comes.  PROG runs on
 * (memtop does not end it) and memtop then exits MT_EXIT_FAIL, unless a
 * program PROG execs later is tracked. */
static void say_never(launch *L)
{
    char exe[64], why[300], now[4200];
    struct stat st;
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)L->child.pid);
    if (stat(exe, &st) != 0 || (L->never && st.st_dev == L->never_dev && st.st_ino == L->never_ino))
        return;
    if (!mt_preload_never((int)L->child.pid, why, sizeof why))
        return;
    const char *prog = L->o->prog_argv[0];
    mt_errorf("%s (pid %d%s) does not run libmemtop.so: %s; nothing to report", prog,
              (int)L->child.pid, now_running(prog, exe, now, sizeof now), why);
    L->never = true;
    L->never_dev = st.st_dev;
    L->never_ino = st.st_ino;
}

/* Attach if needed, then read the newest snapshot. */
static void step(launch *L)
{
    if (L->gave_up)
        return;
    mt_err err = {MT_OK, ""};
    mt_errc rc = mt_view_refresh(&L->view, &err); /* attaches first if need be */
    if (rc == MT_OK)
        L->failures = 0;
    else
        note_failure(L, rc, &err);
    char why[400];
    if (rc == MT_E_NOENT && !L->no_segment && !L->view.attached &&
        mt_preload_probe((int)L->child.pid, why, sizeof why, NULL, 0) == MT_PRELOAD_FAILED) {
        /* while PROG runs: once it has exited, its memory cannot be read */
        mt_errorf("%s (pid %d) runs libmemtop.so but has no segment: %s", L->o->prog_argv[0],
                  (int)L->child.pid, why);
        L->no_segment = true;
    }
    bool execd = have_snapshot(L) && (L->view.snap.flags & MT_FLAG_EXECED);
    if (rc == MT_OK && !execd)
        L->never = false; /* the present program is tracked */
    else if ((rc == MT_E_NOENT && !L->view.attached && !L->no_segment) || execd)
        say_never(L); /* no segment yet, or the one of a program PROG exec'd from */
}

/* Whether --batch still wants a report (-n N not reached). */
static bool reports_wanted(const launch *L)
{
    return L->o->batch && (!L->o->iterations || L->reports < L->o->iterations);
}

/* A report for each new snapshot, a delay apart: one reported already is
 * printed again only after two delays, and once PROG counts as not
 * publishing (view.h), when the report says so (a wait that ended just
 * before PROG's next publication printed the same snapshot twice; with -d
 * below PROG's publishing interval, many times). */
static bool report_due(launch *L)
{
    const mt_opts *o = L->o;
    double now = mt_now_s(), since = now - L->last_report_s;
    uint64_t seq = L->view.snap.slot.publish_seq;
    if (!reports_wanted(L) ||
        (L->reports && seq == L->last_seq &&
         (since < 2 * o->delay_s || since * 1e9 < (double)mt_view_stale_after_ns(&L->view))))
        return false;
    L->last_seq = seq;
    L->last_report_s = now;
    return true;
}

/* A signal memtop passes on ends PROG as it ends memtop: PROG's recording
 * is stopped first (rec_stop.h), or its file would not be finalized. */
static void forward(launch *L, int sig, const siginfo_t *info)
{
    char msg[MT_PATH_MAX + 200];
    if (mt_child_forwards(&L->child, info) && L->view.attached &&
        mt_rec_stop_before_end(&L->view.seg, MT_REC_STOP_WAIT_MS, msg, sizeof msg) != 0)
        mt_errorf("%s", msg);
    mt_child_forward(&L->child, sig, info);
}

static void monitor(launch *L)
{
    const mt_opts *o = L->o;
    while (!mt_child_poll(&L->child)) {
        step(L);
        bool have = have_snapshot(L), due = have && report_due(L);
        if (due) {
            mt_batch_report(&L->view, mt_view_state(&L->view), o, &L->loc);
            L->reports++;
        }
        siginfo_t info; /* a report wanted but not due: soon again, for the next snapshot */
        double wait = due                         ? o->delay_s
                      : have && reports_wanted(L) ? o->delay_s / 4
                      : have                      ? o->delay_s
                                                  : POLL_S;
        int sig = mt_sig_wait(&L->set, wait, &info);
        if (sig && sig != SIGCHLD)
            forward(L, sig, &info);
    }
}

static void explain_no_final(const launch *L)
{
    const char *prog = L->o->prog_argv[0];
    unsigned long long seq = (unsigned long long)L->view.snap.slot.publish_seq;
    if (L->child.signo)
        mt_errorf("%s was killed by signal %d before its final snapshot; using snapshot #%llu",
                  prog, L->child.signo, seq);
    else
        mt_errorf("%s exited without a final snapshot; using snapshot #%llu", prog, seq);
}

static void finish(launch *L)
{
    const mt_opts *o = L->o;
    step(L);
    if (!have_snapshot(L)) {
        if (!L->gave_up && !L->no_segment && !L->never)
            mt_errorf("%s exited without a memtop segment (statically linked, setuid, or "
                      "MEMTOP_DISABLE set?)",
                      o->prog_argv[0]);
        if (o->export_path || L->never) /* nothing reported: not a pass */
            L->rc = MT_EXIT_FAIL;
        return;
    }
    if (L->never) /* a report of what PROG ran before the untracked program */
        L->rc = MT_EXIT_FAIL;
    mt_state st = mt_view_state(&L->view);
    if (st != MT_STATE_EXITED)
        explain_no_final(L);
    if (o->batch)
        mt_batch_report(&L->view, st, o, &L->loc);
    if (o->export_path) {
        int rc = mt_batch_export(&L->view, st, o, &L->loc, NULL);
        if (rc != MT_EXIT_OK)
            L->rc = rc; /* MT_EXIT_FAIL, or MT_EXIT_INEXACT with --strict */
    }
}

static int run(launch *L, const char *lib, const sigset_t *old)
{
    char msg[PATH_MAX_MSG];
    int rc = mt_child_spawn(&L->child, L->o->prog_argv, lib, old, NULL, msg, sizeof msg);
    if (rc != 0) {
        mt_errorf("%s", msg);
        return rc == -2 ? MT_EXIT_NOEXEC : MT_EXIT_FAIL;
    }
    mt_view_target(&L->view, mt_shm_dir(), (int)L->child.pid);
    monitor(L);
    finish(L);
    mt_view_detach(&L->view);
    /* The child is a zombie: the name is still its own. */
    mt_shm_unlink_pid(mt_shm_dir(), (int)L->child.pid);
    int status = mt_child_reap(&L->child);
    /* PROG's status, unless memtop itself failed (e.g. no snapshot could be
     * exported): a leak check in CI must not pass on a missing report. */
    return L->rc != MT_EXIT_OK ? L->rc : status;
}

int mt_cmd_launch(const mt_opts *o)
{
    char lib[4096], msg[PATH_MAX_MSG];
    if (mt_locate_lib(lib, sizeof lib, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        return MT_EXIT_FAIL;
    }
    launch L;
    memset(&L, 0, sizeof L);
    L.o = o;
    mt_view_init(&L.view);
    if (mt_symbols_init(&L.syms, !o->no_symbols, getenv("MEMTOP_SKIP_FUNCS")) != 0) {
        mt_errorf("out of memory");
        return MT_EXIT_FAIL;
    }
    L.loc = mt_symbols_locator(&L.syms, &L.view.mods);
    sigset_t old;
    mt_sig_block(&L.set, &old, 1);
    int rc = run(&L, lib, &old);
    mt_sig_restore(&old);
    mt_symbols_free(&L.syms);
    return rc;
}
