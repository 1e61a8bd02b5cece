/* actions.c -- the viewer's global keys (see actions.h). */
#include "actions.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dat_format.h"
#include "export_job.h"
#include "record_pattern.h"
#include "replay_export.h"

void mt_action_sort(mt_app *a, mt_sort_key key)
{
    a->ui.sort = key;
    mt_app_rows_changed(a);
    if (key == MT_SORT_ALLOCS && a->src.replay) /* ALLOC/s reads "-" there */
        mt_app_status(a, false,
                      "sorted by allocs: their count up to the cursor (a replay has "
                      "no per-row rates)");
    else
        mt_app_status(a, false, "sorted by %s", mt_sort_name(key));
}

static void cycle_group(mt_app *a)
{
    a->ui.group = (mt_group_key)((a->ui.group + 1) % MT_GROUP_KEYS);
    mt_app_rows_changed(a);
    if (mt_app_in_tree(a)) /* the tree is made of the traces' frames: g is the table's */
        mt_app_status(a, false, "the table (t): one row per %s; the call tree is not grouped",
                      mt_group_name(a->ui.group));
    else
        mt_app_status(a, false, "one row per %s", mt_group_name(a->ui.group));
}

static void toggle_baseline(mt_app *a)
{
    const mt_snapshot *s = mt_app_snapshot(a);
    if (mt_table_has_baseline(a->table)) {
        mt_table_clear_baseline(a->table);
        a->ui.baseline_t_ns = 0;
        mt_app_status(a, false, "baseline cleared: figures are totals again");
    } else if (!s) {
        mt_app_status(a, true, "no data yet to mark a baseline on");
        return;
    } else if (mt_table_set_baseline(a->table, s) != 0) {
        mt_app_status(a, true, "out of memory: no baseline");
        return;
    } else {
        a->ui.baseline_t_ns = s->slot.t_ns ? s->slot.t_ns : 1;
        a->ui.baseline = s->slot.totals;
        mt_app_status(a, false, "baseline marked: figures now show changes since this moment");
    }
    mt_app_rows_changed(a);
}

static void toggle_pause(mt_app *a)
{
    a->ui.paused = !a->ui.paused;
    a->dirty = true;
    mt_app_status(a, false, a->ui.paused ? "paused (Space resumes)" : "resumed");
}

/* e: JSON (".json", or ".tree.json" in the tree view); P: a pprof heap
 * profile (".pb.gz") */
static void export_now(mt_app *a, const char *ext)
{
    const mt_view *v = &a->src.view;
    if (!v->have_snap) {
        mt_app_status(a, true, "nothing to export yet");
        return;
    }
    if (a->export.pid) {
        mt_app_status(a, true, "export failed: an export to %s is still being written",
                      a->export.path);
        return;
    }
    char path[4096], msg[512];
    mt_export_dest dest;
    int out = mt_export_create_default(a->src.pid, ext, &dest, path, sizeof path);
    if (out < 0) {
        mt_app_status(a, true, "export failed: cannot create %s: %s", path, strerror(-out));
        return;
    }
    mt_state st = a->src.replay                   ? mt_replay_state(a->src.replay)
                  : a->src.phase == MT_SRC_EXITED ? MT_STATE_EXITED
                  : a->src.phase == MT_SRC_GONE   ? MT_STATE_STALE
                                                  : MT_STATE_RUNNING;
    mt_export_rec rec;
    if (a->src.replay)
        mt_replay_export_rec(a->src.replay, &rec);
    mt_export_how how = {a->ui.sort, !a->o->no_symbols, a->panels.tree.reverse,
                         a->panels.tree.threshold};
    if (mt_export_start(&a->export, v, st, a->src.replay ? &rec : NULL, &how, out, &dest, path, msg,
                        sizeof msg))
        mt_app_status(a, true, "export failed: %s", msg);
    else
        mt_app_status(a, false, "exporting to %s ...", path);
}

#define MT_STOP_CONFIRM_S 3.0

/* Whether r may stop the running recording rec now: the one this viewer
 * started (its lease), or another's that the user asked for twice.  A
 * recording another memtop holds (its viewer or `memtop --record`) or that
 * the process makes of itself (MEMTOP_RECORD) was stopped by one r of any
 * viewer, and its owner learnt nothing or the wrong thing ("the process
 * ended"): the first r now says whose it is and what a second r does. */
static bool may_stop(mt_app *a, const mt_shm_recording *rec, const mt_rec_lease_info *li)
{
    if (a->src.lease.held && a->src.lease.recording == rec->recordings)
        return true;
    if (a->ui.stop_asked_rec == rec->recordings && a->now < a->ui.stop_asked_until)
        return true;
    a->ui.stop_asked_rec = rec->recordings;
    a->ui.stop_asked_until = a->now + MT_STOP_CONFIRM_S;
    mt_app_status(a, true, "%s records into %s: r again within %.0f s stops it",
                  li->ms ? "another memtop" : "the process itself (MEMTOP_RECORD)", rec->path,
                  MT_STOP_CONFIRM_S);
    return false;
}

bool mt_app_can_record(const mt_app *a)
{
    return a->src.phase == MT_SRC_LIVE && a->src.view.attached;
}

/* r: start recording into a new file (R: a culled recording, with --cull's
 * threshold or the default), or stop the running recording (another's
 * after asking: may_stop). */
static void record(mt_app *a, bool culled)
{
    mt_shm_recording rec;
    mt_rec_lease_info li = {0, 0};
    uint64_t why[MT_REC_WHY_MAX];
    mt_err err;
    if (!mt_app_can_record(a)) {
        mt_app_status(a, true, "recording needs a running target");
        return;
    }
    if (mt_segment_recording_lease(&a->src.view.seg, &rec, why, &li, &err) != MT_OK) {
        mt_app_status(a, true, "recording: %s", err.msg);
        return;
    }
    bool on = rec.state == MT_REC_STATE_ON;
    if (on && !may_stop(a, &rec, &li))
        return;
    a->ui.stop_asked_until = 0;
    char path[4096] = "", arg[MT_CTRL_ARG_MAX] = "", msg[512];
    uint64_t cull_ms = a->o->cull_ms ? a->o->cull_ms : MT_DAT_CULL_MS_DEFAULT;
    if (!on) {
        mt_export_default_path(a->src.pid, ".dat", path, sizeof path);
        mt_record_kind kind = {culled ? cull_ms : 0, a->o->thread_order};
        char pattern[sizeof path * 2]; /* the target reads a pattern: '%' as "%%" */
        size_t len = 0;
        if (!mt_rec_pattern_escape(path, pattern, sizeof pattern, &len) ||
            !mt_control_record_arg(arg, sizeof arg, pattern, kind)) {
            mt_app_status(a, true, "recording: path too long: %s", path);
            return;
        }
    }
    if (on) /* the recording the user saw run, not one another viewer starts meanwhile */
        mt_control_stop_arg(arg, sizeof arg, rec.recordings);
    uint32_t cmd = on ? MT_CMD_RECORD_STOP : MT_CMD_RECORD_START;
    if (mt_control_job_start(&a->control, &a->src.view.seg, cmd, arg, msg, sizeof msg) != 0)
        mt_app_status(a, true, "recording: %s", msg);
    else
        mt_app_status(a, false,
                      on       ? "stopping the recording ..."
                      : culled ? "starting a culled recording into %s ..."
                               : "starting to record into %s ...",
                      path);
}

void mt_action_cursor(mt_app *a, double fraction)
{
    if (!a->src.replay)
        return;
    const mt_replay_info *in = mt_replay_get_info(a->src.replay);
    uint64_t lo = in->start_ns, hi = in->duration_ns > lo ? in->duration_ns : lo;
    uint64_t cur = a->ui.seek_pending                ? a->ui.seek_to
                   : mt_replay_at_end(a->src.replay) ? UINT64_MAX
                                                     : mt_replay_cursor(a->src.replay);
    double t = (double)(cur > hi ? hi : cur) + fraction * (double)(hi - lo);
    /* Keys only move the target; the loop seeks once for all of them.  To
     * the nearest nanosecond, the events' unit, and within half of one of
     * an end is that end: a step back and one forth return there (truncated,
     * `[` then `]` landed 1 ns short of the end, without the final state). */
    a->ui.seek_to = t <= (double)lo + 0.5   ? lo
                    : t >= (double)hi - 0.5 ? UINT64_MAX
                                            : (uint64_t)round(t);
    a->ui.seek_pending = true;
    a->dirty = true;
}

bool mt_act_sort(mt_app *a, double key)
{
    mt_action_sort(a, (mt_sort_key)key);
    return true;
}

bool mt_act_sort_menu(mt_app *a, double unused)
{
    (void)unused;
    a->panels.sort.sel = a->ui.sort;
    mt_app_push(a, &a->panels.sort);
    return true;
}

bool mt_act_cursor(mt_app *a, double fraction)
{
    if (!a->src.replay)
        return false; /* not a recording: the key is not this one's */
    mt_action_cursor(a, fraction);
    return true;
}

bool mt_act_quit(mt_app *a, double unused)
{
    (void)unused;
    a->quit = true;
    return true;
}

bool mt_act_help(mt_app *a, double unused)
{
    (void)unused;
    a->panels.help.first = 0;
    mt_app_push(a, &a->panels.help);
    return true;
}

bool mt_act_redraw(mt_app *a, double unused)
{
    (void)unused;
    clearok(curscr, TRUE);
    a->dirty = true;
    return true;
}

/* The actions that take no argument, as bindings. */
#define ACT(name, fn)                                                                              \
    bool name(mt_app *a, double unused)                                                            \
    {                                                                                              \
        (void)unused;                                                                              \
        fn(a);                                                                                     \
        return true;                                                                               \
    }
ACT(mt_act_pause, toggle_pause)
ACT(mt_act_group, cycle_group)
ACT(mt_act_baseline, toggle_baseline)
bool mt_act_record(mt_app *a, double culled)
{
    record(a, culled != 0);
    return true;
}

/* pprof: 0 writes JSON (e): in the call tree view the tree as on screen
 * (FILE.tree.json: its direction and threshold), else the flat export; 1 a
 * pprof profile (P). */
bool mt_act_export(mt_app *a, double pprof)
{
    export_now(a, pprof ? ".pb.gz" : mt_app_in_tree(a) ? ".tree.json" : ".json");
    return true;
}
