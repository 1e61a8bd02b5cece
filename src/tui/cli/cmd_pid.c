/* cmd_pid.c -- `memtop -p PID --batch|--export`: watch or export a process
 * that is already running with libmemtop.so. */
#include <stdio.h>
#include <stdlib.h>

#include "attach.h"
#include "cmd_batch.h"
#include "commands.h"
#include "signals.h"
#include "symbols.h"

#define PUBLISH_TIMEOUT_MS 2000

/* A stale segment's snapshot is shown or exported: say what it is (never
 * the segment of a pid that is another process's now: mt_attach_pid). */
static void say_stale(const mt_view *v)
{
    mt_errorf("process %d ended without publishing its final state: its last snapshot",
              mt_segment_pid(&v->seg));
}

/* One report; false when this was the last one. */
static bool report(mt_view *v, const mt_opts *o, const mt_locator *loc, long *reports)
{
    mt_state st = mt_view_state(v);
    mt_batch_report(v, st, o, loc);
    if (st == MT_STATE_STALE)
        say_stale(v);
    ++*reports;
    /* An exec'd state is final only if no tracked program takes over the
     * pid: go on while the process lives (its segment may be replaced). */
    bool execd = mt_state_execd(st, v->snap.flags) && mt_pid_exists(mt_segment_pid(&v->seg));
    return (st == MT_STATE_RUNNING || execd) && (!o->iterations || *reports < o->iterations);
}

/* Reports until -n is reached, the target ends, or a signal arrives.  A
 * segment being replaced (the target exec'd) is waited for. */
static int batch_loop(mt_view *v, const mt_opts *o, const mt_locator *loc)
{
    sigset_t set, old;
    mt_sig_block(&set, &old, 0);
    int rc = MT_EXIT_OK;
    long reports = 0;
    bool have = true; /* mt_attach_pid read a first snapshot */
    siginfo_t info;
    while ((!have || report(v, o, loc, &reports)) && !mt_sig_wait(&set, o->delay_s, &info)) {
        mt_err err;
        mt_errc e = mt_view_refresh(v, &err);
        have = e == MT_OK;
        if (e && !mt_view_transient(e)) {
            mt_errorf("%s: %s", v->path, err.msg);
            rc = MT_EXIT_FAIL;
            break;
        }
        if (!have && !v->attached && !mt_pid_exists(o->pid)) {
            mt_errorf("process %d exited", o->pid);
            break;
        }
    }
    mt_sig_restore(&old);
    return rc;
}

/* Ask a running target to publish now, so the export is fresh. */
static void freshen(mt_view *v)
{
    if (mt_view_state(v) != MT_STATE_RUNNING)
        return;
    mt_view_refresh_live(v);
    if (v->live.valid && (v->live.state == 'T' || v->live.state == 't')) {
        /* stopped or traced: it cannot answer, and waiting would only age
         * the snapshot by the timeout */
        mt_staleness st = mt_view_staleness(v);
        mt_errorf("process %d is %s: it cannot publish; exporting its latest snapshot (#%llu, "
                  "%llu s old)",
                  mt_segment_pid(&v->seg), mt_staleness_why(&st),
                  (unsigned long long)v->snap.slot.publish_seq,
                  (unsigned long long)(st.age_ns / 1000000000u));
        return;
    }
    mt_ctrl_reply reply;
    mt_err err;
    if (mt_control_send(&v->seg, MT_CMD_PUBLISH_NOW, NULL, PUBLISH_TIMEOUT_MS, &reply, &err)) {
        mt_staleness st = mt_view_staleness(v);
        char why[160] = "";
        if (st.stale) /* "snapshot #199 is 12 s old, ...: process stopped (state T)" */
            mt_staleness_text(v, &st, why, sizeof why);
        mt_errorf("%s; exporting the latest snapshot (#%llu)%s%s", err.msg,
                  (unsigned long long)v->snap.slot.publish_seq, why[0] ? ": " : "", why);
        return;
    }
    if (mt_view_refresh(v, &err) != MT_OK)
        mt_errorf("%s; exporting the previous snapshot", err.msg);
}

int mt_cmd_pid(const mt_opts *o)
{
    mt_view v;
    mt_view_init(&v);
    char msg[600];
    if (mt_attach_pid(&v, mt_shm_dir(), o->pid, true, msg, sizeof msg) != 0) {
        mt_errorf("%s", msg);
        return MT_EXIT_FAIL;
    }
    mt_symbols syms;
    if (mt_symbols_init(&syms, !o->no_symbols, getenv("MEMTOP_SKIP_FUNCS")) != 0) {
        mt_errorf("out of memory");
        mt_view_detach(&v);
        return MT_EXIT_FAIL;
    }
    mt_locator loc = mt_symbols_locator(&syms, &v.mods);
    int rc = o->batch ? batch_loop(&v, o, &loc) : MT_EXIT_OK;
    if (rc == MT_EXIT_OK && o->export_path) {
        if (v.attached && v.have_snap)
            freshen(&v);
        if (v.attached && v.have_snap) { /* freshen may have re-attached */
            if (!o->batch && mt_view_state(&v) == MT_STATE_STALE)
                say_stale(&v);
            rc = mt_batch_export(&v, mt_view_state(&v), o, &loc, NULL);
        } else {
            mt_errorf("%s: no snapshot to export", v.path);
            rc = MT_EXIT_FAIL;
        }
    }
    mt_view_detach(&v);
    mt_symbols_free(&syms);
    return rc;
}
