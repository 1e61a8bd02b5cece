/* replay.c -- opening a recording and moving its cursor (see replay.h).
 *
 * A pass reads from a restart position and applies the events with
 * lo < t <= hi (replay_state.h), until a TOTALS record more than
 * MT_REPLAY_WINDOW_NS after hi shows that no event of the range can
 * follow.  It remembers the last restart position before the first event
 * it had to leave out, so the next forward pass continues there with
 * lo = hi: nothing is applied twice.  Backwards, a pass starts from the
 * newest checkpoint at or before the cursor. */
#include "dat_stdin.h"
#include "replay_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_SPACING_NS 1000000000ull /* first spacing; doubles as they thin */

static mt_errc nomem(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory replaying the recording");
}

static void finish_info(mt_replay *r)
{
    const mt_dat_info *di = mt_dat_get_info(r->rd);
    mt_replay_info *in = &r->info;
    in->path = r->path;
    in->pid = r->proc.pid;
    in->ppid = r->proc.ppid;
    in->exe = r->proc.exe;
    in->cmdline = r->proc.cmdline;
    in->start_unix_ns = r->proc.start_unix_ns;
    in->start_ns = r->proc.record_start;
    /* A recording cut before its first timed record ends where it began,
     * never before (its last event's time is then 0). */
    in->duration_ns = r->st.s.t_ns > in->start_ns ? r->st.s.t_ns : in->start_ns;
    in->invalid_tail = di->invalid_tail;
    /* Bytes that are not a frame after a finalized recording's END are
     * junk appended to a complete file, not a cut: nothing is missing. */
    in->truncated = di->truncated && !(in->finalized && di->invalid_tail);
    in->dropped_bytes = di->dropped_bytes;
    in->file_bytes = di->file_bytes;
    in->checkpoints = r->ckpts.n;
    in->skipped_records = mt_dat_records_skipped(r->rd);
    r->at_end = true;
    r->cursor = UINT64_MAX;
}

/* A file with something to show: a PROCESS record, and for a recording
 * begun mid-run, its initial state (the heap when it began, written before
 * any event) whole or events after it.  One cut inside that state holds a
 * part of the heap and nothing else: every figure would be a fraction of
 * the heap read as all of it ("0 B live"). */
static mt_errc check_content(const mt_replay *r, mt_err *err)
{
    const mt_dat_info *di = mt_dat_get_info(r->rd);
    unsigned long long dropped = di->dropped_bytes;
    if (!r->proc.exe[0] && !r->proc.pid)
        return di->truncated ? mt_err_set(err, MT_E_TRUNCATED,
                                          "truncated recording: no complete frame (%llu bytes "
                                          "dropped)",
                                          dropped)
                             : mt_err_set(err, MT_E_EMPTY, "empty recording: no PROCESS record");
    if (di->truncated && (r->proc.flags & MT_DAT_PROC_MID_RUN) && !r->initial_complete &&
        !r->st.s.events)
        return mt_err_set(err, MT_E_TRUNCATED,
                          "truncated recording: cut inside its initial state (the heap when the "
                          "recording began; still being written, or lost with the rest): nothing "
                          "to show (%llu bytes dropped)",
                          dropped);
    return MT_OK;
}

mt_replay *mt_replay_open(const char *path, mt_err *err)
{
    mt_replay *r = calloc(1, sizeof *r);
    if (!r) {
        nomem(err);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", mt_dat_path_name(path));
    mt_defs_init(&r->defs);
    mt_modules_init(&r->mods);
    mt_rstate_init(&r->st);
    mt_rckpts_init(&r->ckpts, CKPT_SPACING_NS);
    mt_rtl_init(&r->tl);
    r->rd = mt_dat_open(path, err);
    if (!r->rd || mt_replay_read_all(r, err) != MT_OK || check_content(r, err) != MT_OK) {
        mt_replay_close(r);
        return NULL;
    }
    finish_info(r);
    return r;
}

void mt_replay_close(mt_replay *r)
{
    if (!r)
        return;
    if (r->rd)
        mt_dat_close(r->rd);
    mt_defs_free(&r->defs);
    mt_modules_free(&r->mods);
    mt_rstate_free(&r->st);
    mt_rckpts_free(&r->ckpts);
    mt_rsilence_free(&r->silence);
    free(r->final);
    free(r);
}

const mt_replay_info *mt_replay_get_info(const mt_replay *r)
{
    return &r->info;
}

const mt_shm_point *mt_replay_timeline(const mt_replay *r, size_t *n)
{
    *n = r->tl.n;
    return r->tl.pts;
}

/* Accepted past the exact end: what rounds to the duration as it is
 * printed (to the millisecond) is the end. */
#define AT_SLACK_S 0.0005

int mt_replay_at(const mt_replay *r, double at_s, uint64_t *t_ns, char *msg, size_t n)
{
    const mt_replay_info *in = &r->info;
    uint64_t span = in->duration_ns - in->start_ns; /* end >= start: finish_info */
    if (!(at_s >= 0 && at_s < (double)span / 1e9 + AT_SLACK_S)) {
        snprintf(msg, n,
                 at_s < 1e9 ? "--at %.3f is past the end of the recording (%.3f s)"
                            : "--at %.3g is past the end of the recording (%.3f s)",
                 at_s, (double)span / 1e9);
        return -1;
    }
    double ns = at_s * 1e9 + 0.5; /* rounded; compared in double: never wraps */
    *t_ns = ns >= (double)span ? in->duration_ns : in->start_ns + (uint64_t)ns;
    return 0;
}

uint64_t mt_replay_cursor(const mt_replay *r)
{
    return r->cursor < r->info.duration_ns ? r->cursor : r->info.duration_ns;
}

bool mt_replay_at_end(const mt_replay *r)
{
    return r->cursor >= r->info.duration_ns;
}

mt_state mt_replay_state(const mt_replay *r)
{
    if (!mt_replay_at_end(r))
        return MT_STATE_RUNNING;
    /* exec ends the image like exit does: what is live then was never
     * freed (mt_replay_flags marks it exec'd). */
    if (r->info.finalized &&
        (r->info.end_reason == MT_DAT_END_EXIT || r->info.end_reason == MT_DAT_END_EXEC))
        return MT_STATE_EXITED;
    return r->info.finalized ? MT_STATE_RUNNING : MT_STATE_STALE;
}

bool mt_replay_silent(const mt_replay *r, uint64_t *from_ns, uint64_t *to_ns)
{
    return !mt_replay_at_end(r) && mt_rsilence_at(&r->silence, mt_replay_cursor(r), from_ns, to_ns);
}

uint32_t mt_replay_flags(const mt_replay *r)
{
    if (mt_replay_state(r) != MT_STATE_EXITED)
        return 0;
    return MT_FLAG_EXITED | (r->info.end_reason == MT_DAT_END_EXEC ? MT_FLAG_EXECED : 0u);
}

bool mt_replay_disk_full(const mt_replay_info *in)
{
    return in->finalized && in->end_reason == MT_DAT_END_ERROR &&
           (in->end_error == ENOSPC || in->end_error == EDQUOT);
}

const char *mt_replay_not_leaked_why(const mt_replay *r)
{
    if (!r->info.finalized)
        return "the file is not finalized";
    switch (r->info.end_reason) {
    case MT_DAT_END_EXIT:
    case MT_DAT_END_EXEC:
        return NULL;
    case MT_DAT_END_STOP:
    case MT_DAT_END_LEASE:
        return "the recording was stopped while the process ran";
    case MT_DAT_END_ERROR:
        return mt_replay_disk_full(&r->info)
                   ? "the recording ended when the disk was full, while the process ran"
                   : "the recording ended on a write error while the process ran";
    default:
        return "the recording's end reason is unknown";
    }
}

uint64_t mt_replay_dropped(const mt_replay_info *in)
{
    return in->dropped_events > in->lost_events ? in->dropped_events : in->lost_events;
}

const char *mt_replay_dropped_text(const mt_replay_info *in, char *buf, size_t n)
{
    uint64_t lost = mt_replay_dropped(in);
    if (!lost) {
        buf[0] = '\0';
        return buf;
    }
    return mt_dat_lost_line(lost, in->lost_why, buf, n);
}

const char *mt_replay_inexact_text(const mt_replay *r, char *buf, size_t n)
{
    const mt_replay_info *in = &r->info;
    int k = 0;
    buf[0] = '\0';
    if (mt_replay_dropped(in)) {
        char d[MT_DAT_LOST_LINE_MAX];
        k = snprintf(buf, n, "%s ", mt_replay_dropped_text(in, d, sizeof d));
    }
    if (in->inexact_start && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, "start inexact ");
    if (in->culled && k >= 0 && (size_t)k < n) {
        char thr[32];
        snprintf(buf + k, n - (size_t)k, "culled <%s: live misses young blocks ",
                 mt_replay_cull_secs(in, thr, sizeof thr));
    }
    return buf;
}

const char *mt_replay_cull_secs(const mt_replay_info *in, char *buf, size_t n)
{
    if (in->cull_ms % 1000)
        snprintf(buf, n, "%.3f s", (double)in->cull_ms / 1000.0);
    else
        snprintf(buf, n, "%llu s", (unsigned long long)(in->cull_ms / 1000));
    return buf;
}

/* Apply events with f->lo < t <= f->hi from `from` on (see the top). */
/* The rest of the EVENTS2 record in progress, in batches (replay_impl.h);
 * *skipped when an event was after f->hi. */
static mt_errc pass_batches(mt_replay *r, const mt_rfilter *f, bool *skipped, mt_err *err)
{
    mt_dat_hev b[MT_REPLAY_BATCH];
    size_t n;
    mt_errc rc;
    while ((rc = mt_dat_next_batch(r->rd, b, MT_REPLAY_BATCH, &n, err)) == MT_OK && n) {
        if ((rc = mt_replay_apply_batch(r, b, n, f, false, NULL, err)) != MT_OK)
            return rc;
        for (size_t i = 0; i < n; i++)
            *skipped = *skipped || b[i].t_ns > f->hi;
    }
    return rc;
}

static mt_errc pass(mt_replay *r, const mt_dat_pos *from, const mt_rfilter *f, mt_err *err)
{
    mt_errc rc = mt_dat_seek(r->rd, from, err);
    r->resume = *from;
    bool skipped = false;
    uint64_t win = mt_replay_window_ns(&r->proc);
    uint64_t stop = f->hi > UINT64_MAX - win ? UINT64_MAX : f->hi + win;
    while (!rc && (rc = mt_replay_next(r, err)) == MT_OK) {
        const mt_dat_event *ev = &r->ev;
        bool timed = ev->kind != MT_DAT_PROCESS && ev->kind != MT_DAT_MODULE &&
                     ev->kind != MT_DAT_UNLOAD && ev->kind != MT_DAT_DEF &&
                     ev->kind != MT_DAT_STATE_BEGIN && ev->kind != MT_DAT_STATE_END;
        skipped = skipped || (timed && ev->t_ns > f->hi);
        if (mt_rstate_apply(&r->st, ev, f) != 0)
            return nomem(err);
        if (ev->kind == MT_DAT_ALLOC || ev->kind == MT_DAT_FREE)
            rc = pass_batches(r, f, &skipped, err);
        mt_dat_pos pos;
        if (!skipped && mt_dat_tell(r->rd, &pos))
            r->resume = pos;
        if (ev->kind == MT_DAT_TOTALS && ev->t_ns > stop)
            break;
    }
    r->at_end = rc == MT_E_EMPTY && !skipped;
    return rc == MT_E_EMPTY ? MT_OK : rc;
}

static mt_errc rewind_to(mt_replay *r, const mt_rckpt *k, uint64_t hi, mt_err *err)
{
    if (mt_rckpt_restore(k, &r->st) != 0)
        return nomem(err);
    mt_rfilter f = {false, 0, hi};
    return pass(r, &k->pos, &f, err);
}

mt_errc mt_replay_seek(mt_replay *r, uint64_t t_ns, mt_view *out, mt_err *err)
{
    if (t_ns >= r->info.duration_ns)
        t_ns = UINT64_MAX;
    mt_errc rc = MT_OK;
    if (t_ns != r->cursor && !(r->at_end && t_ns >= r->cursor)) {
        const mt_rckpt *k = mt_rckpts_find(&r->ckpts, t_ns);
        if (t_ns < r->cursor || (k && k->s.t_ns > r->cursor)) {
            rc = rewind_to(r, k, t_ns, err);
        } else {
            mt_rfilter f = {true, r->cursor, t_ns};
            mt_dat_pos from = r->resume;
            rc = pass(r, &from, &f, err);
        }
    }
    if (rc) { /* back to the start, and out shows it: the view and the cursor agree */
        rewind_to(r, &r->ckpts.items[0], 0, NULL);
        r->cursor = 0;
        (void)mt_replay_fill(r, out, NULL);
        return rc;
    }
    r->cursor = t_ns;
    return mt_replay_fill(r, out, err);
}
