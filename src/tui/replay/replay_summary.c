/* replay_summary.c -- the batch summary of a recording (see
 * replay_summary.h). */
#include "replay_summary.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "dat_format.h"
#include "format.h"
#include "replay_export.h"
#include "report.h"
#include "wrapper_shape.h"

#define B(x) mt_fmt_bytes((x), (char[32]){0}, 32)
#define C(x) mt_fmt_count((x), (char[32]){0}, 32)

static const char *end_name(const mt_replay_info *in)
{
    if (mt_replay_disk_full(in))
        return "stopped: disk full";
    switch (in->end_reason) {
    case MT_DAT_END_STOP:
        return "stopped";
    case MT_DAT_END_EXIT:
        return "process exited";
    case MT_DAT_END_EXEC:
        return "process called exec";
    case MT_DAT_END_ERROR:
        return "write error";
    case MT_DAT_END_LEASE:
        return "stopped: the viewer that started it was gone (lease not renewed)";
    default:
        return "unknown end";
    }
}

static const char *errno_name(uint32_t e)
{
    const char *name = e <= INT32_MAX ? strerrorname_np((int)e) : NULL;
    return name ? name : "unknown errno";
}

void mt_replay_warn(const mt_replay *r)
{
    const mt_replay_info *in = mt_replay_get_info(r);
    if (in->truncated && in->invalid_tail)
        mt_errorf("%s: truncated: %" PRIu64 " trailing bytes are not a valid frame: ignored",
                  in->path, in->dropped_bytes);
    else if (in->invalid_tail)
        mt_errorf("%s: %" PRIu64 " bytes after the recording's end are not a frame: ignored",
                  in->path, in->dropped_bytes);
    else if (in->truncated)
        mt_errorf("%s: truncated: %" PRIu64 " bytes after the last complete frame dropped",
                  in->path, in->dropped_bytes);
    if (!in->finalized)
        mt_errorf("%s: not finalized (the process was killed or is still recording): "
                  "showing up to its last event",
                  in->path);
    if (mt_replay_disk_full(in))
        mt_errorf("%s: the recording stopped when the disk was full (%s, %s): showing up to its "
                  "last complete frame",
                  in->path, strerror((int)in->end_error), errno_name(in->end_error));
    else if (in->finalized && in->end_reason == MT_DAT_END_ERROR)
        mt_errorf("%s: the recording stopped on a write error (%s, %s)", in->path,
                  strerror((int)in->end_error), errno_name(in->end_error));
    char d[MT_DAT_LOST_LINE_MAX];
    if (mt_replay_dropped(in))
        mt_errorf("%s: recording inexact: %s", in->path, mt_replay_dropped_text(in, d, sizeof d));
    if (in->final_mismatches)
        mt_errorf("%s: the replayed counters of %" PRIu64 " traces differ from the recording's "
                  "final state (its end shows the final state)",
                  in->path, in->final_mismatches);
}

/* Seconds with millisecond precision, from ns. */
static double secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

/* A culled recording: what it left out, and what that means at a cursor. */
static void print_culled(FILE *f, const mt_replay_info *in)
{
    if (!in->culled)
        return;
    char thr[32];
    mt_replay_cull_secs(in, thr, sizeof thr);
    fprintf(f,
            "culled recording: %s blocks freed within %s counted per trace, not written "
            "(%s young blocks written early); totals per trace exact, live at a cursor "
            "misses the blocks younger than %s then that die young\n",
            C(in->culled_blocks), thr, C(in->written_early), thr);
}

static void print_head(FILE *f, const mt_replay *r, const mt_view *v)
{
    const mt_replay_info *in = mt_replay_get_info(r);
    char cmd[MT_CMDLINE_MAX], path[4096];
    snprintf(cmd, sizeof cmd, "%s", in->cmdline[0] ? in->cmdline : in->exe);
    snprintf(path, sizeof path, "%s", in->path);
    fprintf(f, "recording: %s (%s), pid %d: %s\n", mt_fmt_sanitize(path), B(in->file_bytes),
            (int)in->pid, mt_fmt_sanitize(cmd));
    uint64_t rate = mt_view_sample_rate(v);
    const char *e = mt_est_mark(rate); /* "~": estimated from sampled events */
    if (rate)
        fprintf(f, "%s: the events are samples, the figures marked ~ estimates\n",
                mt_fmt_sampling(rate, (char[48]){0}, 48));
    /* a culled block's allocation and free are counted, not written: the
     * events' counts alone read as a program that hardly allocated */
    uint64_t culled = in->culled ? in->culled_blocks : 0;
    char parts[160] = "";
    if (culled)
        snprintf(parts, sizeof parts, " (%s and %s written, %s blocks culled)", C(in->allocs),
                 C(in->frees), C(culled));
    fprintf(f, "duration: %.3fs (%.3fs to %.3fs), %s %sallocations, %s %sfrees%s, %s\n",
            secs(in->duration_ns - in->start_ns), secs(in->start_ns), secs(in->duration_ns),
            C(in->allocs + culled), rate ? "sampled " : "", C(in->frees + culled),
            rate ? "sampled " : "", parts, in->finalized ? end_name(in) : "not finalized");
    fprintf(f, "peak: %s%s live %s %.3fs", e, B(in->peak_live_bytes), in->peak_t_by ? "by" : "at",
            secs(in->peak_t_ns));
    if (in->peak_t_by)
        fputs(" (the target's own figure, seen by then; the replayed events peak lower)", f);
    if (in->process_peak_before)
        fprintf(f, " (process peak %s before the recording began)", B(in->process_peak_before));
    fputc('\n', f);
    const mt_shm_totals *t = &v->snap.slot.totals;
    bool end = mt_replay_at_end(r);
    const char *why = mt_replay_not_leaked_why(r);
    fprintf(f, "%s %.3fs: %s%s live in %s%s blocks", end ? "at the end," : "at",
            secs(v->snap.slot.t_ns), e, B(t->live_bytes), e, C(t->live_count));
    if (end && why)
        fprintf(f, " (live at the end, not leaked: %s)", why);
    fputs(end && !why ? " (leaked)\n" : "\n", f);
    if (in->truncated || !in->finalized)
        fprintf(f,
                "warning: the recording was cut short%s; its end is its last complete "
                "frame\n",
                in->truncated ? " (truncated)" : "");
    char d[MT_DAT_LOST_LINE_MAX];
    if (mt_replay_dropped(in))
        fprintf(f, "warning: recording inexact: %s\n", mt_replay_dropped_text(in, d, sizeof d));
    if (in->tick_order)
        fputs(MT_TICK_ORDER_NOTE "\n", f);
    print_culled(f, in);
}

static void table(FILE *f, const char *title, const mt_view *v, const mt_locator *loc,
                  mt_sort_key key, mt_group_key g, long top)
{
    fprintf(f, "\n%s", title);
    mt_report_rows(f, v, loc, key, g, top);
}

/* The report's tables of the state at the cursor. */
static void tables(FILE *f, const mt_replay *r, const mt_view *v, const mt_locator *loc,
                   const mt_opts *o)
{
    long top = o->top;
    const char *why = mt_replay_not_leaked_why(r);
    char title[160];
    if (!mt_replay_at_end(r))
        snprintf(title, sizeof title, "live at the cursor:");
    else if (why)
        snprintf(title, sizeof title, "live at the end (%s):", why);
    else
        snprintf(title, sizeof title, "leaked at the end:");
    table(f, title, v, loc, MT_SORT_LIVE, o->group, top);
    table(f, "most temporary allocations:", v, loc, MT_SORT_TEMPORARY, o->group, top);
    table(f, "top allocators:", v, loc, MT_SORT_ALLOCS, o->group, top);
    if (o->sort != MT_SORT_LIVE && o->sort != MT_SORT_TEMPORARY && o->sort != MT_SORT_ALLOCS)
        table(f, "by the chosen order:", v, loc, o->sort, o->group, top);
}

void mt_replay_summary(FILE *f, const mt_replay *r, const mt_view *v, const mt_opts *o,
                       const mt_locator *base)
{
    mt_addr_set wrappers; /* the shape rule's, over the recording's traces */
    mt_locator shaped = mt_wrapper_locator(base, &v->defs, &v->snap, &wrappers), *loc = &shaped;
    print_head(f, r, v);
    fputc('\n', f);
    mt_export_rec rec; /* the data line says what the recording lacks */
    mt_replay_export_rec(r, &rec);
    mt_state st = mt_replay_state(r);
    mt_report_header(f, v, st, &rec);
    if (o->tree) { /* as the live --batch --tree: the tree instead of the tables */
        mt_export_src src = {v, st, loc, o->sort, &rec, 0, o->reverse, (double)o->threshold};
        mt_export_tree_text(f, &src);
    } else {
        tables(f, r, v, loc, o);
    }
    fputc('\n', f);
    fflush(f);
    mt_addr_set_free(&wrappers);
}
