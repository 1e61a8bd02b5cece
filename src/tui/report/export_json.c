/* export_json.c -- the JSON snapshot (shape documented in issue 2 and
 * docs/): every number an exact integer except time_unix, uptime_s,
 * tracking_s, snapshot_age_s and growth_bytes_per_s; frames innermost first; unknown values null.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "export.h"
#include "format.h"
#include "health.h"
#include "json_escape.h"
#include "report.h"
#include "row_labels.h"
#include "rows.h"

static void put_u64(FILE *f, const char *key, uint64_t v, bool comma)
{
    fprintf(f, "\"%s\": %" PRIu64 "%s", key, v, comma ? ", " : "");
}

/* MT_UNKNOWN -> null */
static void put_opt(FILE *f, const char *key, uint64_t v, bool comma)
{
    if (v == MT_UNKNOWN)
        fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
    else
        put_u64(f, key, v, comma);
}

/* A fixed-point number whatever LC_NUMERIC says (JSON wants a '.'). */
static void put_double(FILE *f, const char *key, double v)
{
    char num[64];
    fprintf(f, "\"%s\": %s, ", key, mt_fmt_fixed(v, 3, num, sizeof num));
}

/* Exact decimal seconds from nanoseconds. */
static void put_secs(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, "\"%s\": %" PRIu64 ".%09" PRIu64 ",\n", key, ns / 1000000000u, ns % 1000000000u);
}

/* "sampling": null for an exact target; else the rate and which figures
 * are exact and which estimated (docs/sampling.md): the counts of
 * allocations and frees are exact unless mt_view_totals_exact says not (a
 * sampled recording where it holds no exact counts).  The tests are
 * mt_view_sample_rate and mt_view_totals_exact, as everywhere. */
static void put_sampling(FILE *f, const mt_view *v)
{
    uint64_t rate = mt_view_sample_rate(v);
    if (!rate) {
        fputs("\"sampling\": null,\n", f);
        return;
    }
    const char *counts = "\"totals.alloc_count\", \"totals.alloc_bytes\", \"totals.free_count\"";
    bool exact = mt_view_totals_exact(v);
    fprintf(f,
            "\"sampling\": {\"rate_bytes\": %" PRIu64 ", \"exact\": [%s], \"estimated\": [%s%s"
            "\"totals.live_bytes\", \"totals.live_count\", \"totals.peak_live_bytes\", "
            "\"totals.free_bytes\", \"totals.temporary_count\", \"totals.temporary_bytes\", "
            "\"traces\"]},\n",
            rate, exact ? counts : "", exact ? "" : counts, exact ? "" : ", ");
}

/* How old a segment's snapshot is, whether its running target publishes
 * nothing (view.h: "stale") and why, as /proc says.  Not in a recording's
 * export: it keeps what was recorded (and the bytes older readers wrote). */
static void put_staleness(FILE *f, const mt_view *v)
{
    if (!v->attached || !v->have_snap)
        return;
    mt_staleness st = mt_view_staleness(v);
    put_secs(f, "snapshot_age_s", st.age_ns);
    /* "publishing", not "stale": the state "stale" is a process gone
     * without its final snapshot (shm_liveness.c).  Neither a stopped nor
     * an exited nor a gone process publishes: its growth_bytes_per_s are
     * of its last window. */
    fprintf(f, "\"publishing\": %s,\n\"not_publishing\": ", st.ended ? "false" : "true");
    if (st.ended)
        mt_json_string(f, mt_staleness_why(&st));
    else
        fputs("null", f);
    fputs(",\n", f);
}

static void put_head(FILE *f, const mt_export_src *x)
{
    const mt_identity *id = &x->v->seg.id;
    const mt_snapshot *s = &x->v->snap;
    fprintf(f, "{\n\"memtop_snapshot\": 1,\n\"pid\": %d,\n\"ppid\": %d,\n\"exe\": ",
            mt_segment_pid(&x->v->seg), (int)id->ppid);
    mt_json_string(f, id->exe);
    /* A live target's own command line and uptime, as the viewer shows
     * them (proc_live.h); a recording's or a gone process's from the
     * header.  tracking_s: the time alloc_* and free_* cover. */
    fputs(",\n\"cmdline\": ", f);
    mt_json_string(f, x->v->live.valid && x->v->live.cmdline[0] ? x->v->live.cmdline : id->cmdline);
    bool execd = mt_state_execd(x->state, s->flags);
    fprintf(f, ",\n\"state\": \"%s\",\n\"exited\": %s,\n\"execd\": %s,\n\"fork_child\": %s,\n",
            mt_state_label(x->state, s->flags), /* a stop: recording.stopped, not the state */
            x->state == MT_STATE_EXITED && !execd ? "true" : "false", execd ? "true" : "false",
            s->flags & MT_FLAG_FORK_CHILD ? "true" : "false");
    put_secs(f, "time_unix", s->slot.unix_ns);
    put_secs(f, "uptime_s", mt_view_uptime_ns(x->v));
    put_secs(f, "tracking_s", s->slot.t_ns);
    put_staleness(f, x->v);
    fprintf(f, "\"publish_seq\": %" PRIu64 ",\n\"segment_full\": %s,\n", s->slot.publish_seq,
            s->flags & MT_FLAG_SEGMENT_FULL ? "true" : "false");
    /* the window of every growth_bytes_per_s (the present rate, rows.h) */
    char win[64];
    fprintf(f, "\"growth_window_s\": %s,\n",
            mt_fmt_fixed(mt_growth_window_s(&s->slot), 3, win, sizeof win));
    fprintf(f, "\"settings\": {\"depth\": %u, \"temporary_ms\": %" PRIu64 ", \"interval_ms\": %u, ",
            id->max_depth, id->temporary_ns / 1000000u, id->publish_interval_ms);
    /* MEMTOP_MAX_TRACES: unknown (null) from older targets and recordings */
    put_opt(f, "max_traces", s->slot.max_traces ? s->slot.max_traces : MT_UNKNOWN, false);
    fputs("},\n", f);
    put_sampling(f, x->v);
}

/* A recording's snapshot: where it comes from and how far to trust it. */
static void put_recording(FILE *f, const mt_export_rec *r)
{
    if (!r)
        return;
    fputs("\"recording\": {\"file\": ", f);
    mt_json_string(f, r->file);
    fprintf(f, ", \"cursor_s\": %" PRIu64 ".%09" PRIu64 ", \"duration_s\": %" PRIu64 ".%09" PRIu64,
            r->cursor_ns / 1000000000u, r->cursor_ns % 1000000000u, r->duration_ns / 1000000000u,
            r->duration_ns % 1000000000u);
    fprintf(f, ", \"at_end\": %s, \"finalized\": %s, \"end_reason\": ",
            r->cursor_ns >= r->duration_ns ? "true" : "false", r->finalized ? "true" : "false");
    mt_json_string(f, r->end_reason);
    fprintf(f,
            ", \"truncated\": %s, \"invalid_tail\": %s, \"truncated_bytes\": %" PRIu64
            ", \"events_dropped\": %" PRIu64 ", \"inexact_start\": %s, \"cull_s\": ",
            r->truncated ? "true" : "false", r->invalid_tail ? "true" : "false", r->truncated_bytes,
            r->events_dropped, r->inexact_start ? "true" : "false");
    if (r->cull_ms)
        fprintf(f, "%" PRIu64 ".%03" PRIu64, r->cull_ms / 1000u, r->cull_ms % 1000u);
    else
        fputs("null", f);
    fprintf(f, ", \"order\": \"%s\"", r->tick_order ? "tick" : "thread");
    /* the cursor inside a stretch without any record: the process was stopped */
    if (r->silent)
        fprintf(f,
                ", \"stopped\": {\"from_s\": %" PRIu64 ".%09" PRIu64 ", \"to_s\": %" PRIu64
                ".%09" PRIu64 "}",
                r->silent_from_ns / 1000000000u, r->silent_from_ns % 1000000000u,
                r->silent_to_ns / 1000000000u, r->silent_to_ns % 1000000000u);
    else
        fputs(", \"stopped\": null", f);
    /* Every cause, 0 or not: a fixed set of keys (they sum to events_dropped). */
    fputs(", \"dropped_by_cause\": {", f);
    for (unsigned i = 0; i < MT_DAT_LOST_WHY_N; i++)
        fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", mt_dat_lost_key(i), r->dropped_why[i]);
    fputs("}},\n", f);
}

/* The counters a trace and the totals both have, under the same names
 * (mt_shm_trace and mt_shm_totals name their fields alike). */
#define PUT_COUNTERS(f, c)                                                                         \
    do {                                                                                           \
        put_u64(f, "live_bytes", (c)->live_bytes, true);                                           \
        put_u64(f, "live_count", (c)->live_count, true);                                           \
        put_u64(f, "alloc_count", (c)->alloc_count, true);                                         \
        put_u64(f, "alloc_bytes", (c)->alloc_bytes, true);                                         \
        put_u64(f, "free_count", (c)->free_count, true);                                           \
        put_u64(f, "free_bytes", (c)->free_bytes, true);                                           \
        put_u64(f, "temporary_count", (c)->temporary_count, true);                                 \
        put_u64(f, "temporary_bytes", (c)->temporary_bytes, true);                                 \
        put_u64(f, "peak_live_bytes", (c)->peak_live_bytes, true);                                 \
    } while (0)

/* The allocators the target found, and whether memtop sees each. */
static void put_allocators(FILE *f, const mt_shm_allocators *al)
{
    if (!al->seq) {
        /* a target that did not say, or a recording */
        fputs("\"allocators\": null, \"allocators_not_listed\": null", f);
        return;
    }
    fputs("\"allocators\": [", f);
    for (uint32_t i = 0; i < al->count; i++) {
        const mt_shm_allocator *a = &al->a[i];
        fprintf(f, "%s{\"kind\": \"%s\", \"prefix\": ", i ? ", " : "",
                mt_allocator_kind_name(a->kind));
        mt_json_string(f, a->prefix);
        fputs(", \"version\": ", f);
        mt_json_string(f, a->version[0] ? a->version : NULL);
        fputs(", \"module\": ", f);
        mt_json_string(f, a->module);
        fprintf(f, ", \"static\": %s, \"hooked\": %s, \"exact\": %s, \"note\": ",
                a->flags & MT_ALLOC_STATIC ? "true" : "false",
                a->flags & MT_ALLOC_HOOKED ? "true" : "false",
                a->flags & MT_ALLOC_INEXACT ? "false" : "true");
        mt_json_string(f, a->note[0] ? a->note : NULL);
        fputs(", \"how\": ", f);
        mt_json_string(f, mt_allocator_how(a));
        fputs(", ", f);
        put_opt(f, "allocated", a->allocated, true);
        put_opt(f, "active", a->active, true);
        put_opt(f, "resident", a->resident, true);
        put_opt(f, "mapped", a->mapped, true);
        put_opt(f, "allocated_before_hooks", a->before_hooks, false);
        fputs("}", f);
    }
    fprintf(f, "], \"allocators_not_listed\": %u", al->more);
}

static void put_totals(FILE *f, const mt_export_src *x)
{
    const mt_shm_totals *t = &x->v->snap.slot.totals;
    fputs("\"totals\": {", f);
    PUT_COUNTERS(f, t);
    put_u64(f, "unknown_free_count", t->unknown_free_count, true);
    put_opt(f, "allocator_bytes", t->allocator_bytes, true);
    put_opt(f, "allocator_inuse_bytes", t->allocator_inuse_bytes, true);
    /* how old the two above are: glibc's are taken at a pace (shm-protocol.md) */
    uint64_t age = mt_snapshot_allocator_age_ns(&x->v->snap);
    put_opt(f, "allocator_age_ms", age == MT_UNKNOWN ? age : age / 1000000u, true);
    put_opt(f, "rss_bytes", t->rss_bytes, true);
    /* how old it is: a recording's is its newest TOTALS' (0 live) */
    put_opt(f, "rss_age_ms",
            t->rss_bytes == MT_UNKNOWN ? MT_UNKNOWN
                                       : mt_snapshot_totals_age_ns(&x->v->snap) / 1000000u,
            true);
    put_opt(f, "tracker_bytes", t->tracker_bytes, true);
    put_opt(f, "segment_bytes", x->v->segment_bytes, true); /* not in a recording: null */
    put_u64(f, "trace_count", t->trace_count, true);
    put_opt(f, "thread_count", t->thread_count, false);
    fputs("},\n\"health\": {", f);
    put_u64(f, "unknown_free_count", t->unknown_free_count, true);
    put_u64(f, "untracked_alloc_count", t->untracked_alloc_count, true);
    put_u64(f, "missed_free_count", t->missed_free_count, true);
    put_u64(f, "dropped_traces", t->dropped_traces, true);
    char line[2048];
    mt_health_line(x->v, x->rec, line, sizeof line);
    fprintf(f, "\"trace_table_full\": %s, ",
            x->v->snap.flags & MT_FLAG_TRACES_FULL ? "true" : "false");
    fprintf(f, "\"exact\": %s, \"not_exact\": ", line[0] ? "false" : "true");
    mt_json_string(f, line[0] ? line : NULL);
    fputs(",\n", f);
    put_allocators(f, &x->v->allocs);
    fputs("},\n", f);
}

static void put_one_frame(FILE *f, const mt_frame *fr)
{
    fprintf(f, "{\"address\": \"0x%" PRIx64 "\", \"module\": ", fr->address);
    mt_json_string(f, fr->module);
    if (fr->module)
        fprintf(f, ", \"offset\": \"0x%" PRIx64 "\", \"function\": ", fr->offset);
    else
        fputs(", \"offset\": null, \"function\": ", f);
    mt_json_string(f, fr->function);
    fputs(", \"file\": ", f);
    mt_json_string(f, fr->file);
    if (fr->line)
        fprintf(f, ", \"line\": %u", fr->line);
    else
        fputs(", \"line\": null", f);
    fprintf(f, ", \"inlined\": %s, \"unresolved\": ", fr->inlined ? "true" : "false");
    mt_json_string(f, fr->unresolved);
    fputs("}", f);
}

/* One object per source frame: inlined functions first, each with the
 * address of the machine frame they belong to. */
static void put_frame(FILE *f, const mt_locator *loc, uint64_t addr, bool comma)
{
    mt_frame chain[MT_MAX_CHAIN];
    unsigned n = mt_locate_all(loc, addr, chain, MT_MAX_CHAIN);
    for (unsigned i = 0; i < n; i++) {
        put_one_frame(f, &chain[i]);
        fputs(i + 1 < n || comma ? ",\n" : "", f);
    }
}

/* Ages of the trace's live blocks, as of the slot's last age scan: the
 * oldest one and live bytes per age bucket (<1s <10s <1m <10m <1h <6h <1d
 * and older). null when no scan has seen a live block of the trace. */
static void put_ages(FILE *f, const mt_shm_slot *slot, const mt_shm_trace *t)
{
    if (slot->age_scan_ns == 0 || t->oldest_birth_ns == MT_UNKNOWN ||
        t->oldest_birth_ns > slot->age_scan_ns)
        fputs("\"oldest_live_age_s\": null, ", f);
    else
        put_double(f, "oldest_live_age_s", (double)(slot->age_scan_ns - t->oldest_birth_ns) / 1e9);
    fputs("\"live_bytes_by_age\": [", f);
    for (unsigned i = 0; i < MT_AGE_BUCKETS; i++)
        fprintf(f, "%" PRIu64 "%s", t->age_bytes[i], i + 1 < MT_AGE_BUCKETS ? ", " : "], ");
}

/* The frame text views show for the trace (see mt_trace_location). */
static void put_location(FILE *f, const mt_locator *loc, const uint64_t *frames, unsigned n)
{
    if (!frames || !n) {
        fputs("null", f);
        return;
    }
    mt_frame fr;
    char where[1024];
    mt_trace_location(loc, frames, n, &fr);
    mt_json_string(f, mt_frame_short(&fr, where, sizeof where));
}

/* "location_callers": the callers that tell the trace's location apart
 * from another exported trace's equal one (row_labels.h), innermost first;
 * [] when no other shares it. */
static void put_callers(FILE *f, const mt_row_labels *labels, size_t row)
{
    char callers[MT_CALLER_DEPTH][MT_CALLER_MAX];
    const mt_caller_row *c = row < labels->n ? &labels->rows[row] : NULL;
    mt_locator at = c ? mt_locator_at(labels->loc, c->id) : *labels->loc;
    unsigned k = c && c->depth ? mt_trace_callers(&at, c->frames, c->n, callers, c->depth) : 0;
    fputs(",\n \"location_callers\": [", f);
    for (unsigned i = 0; i < k; i++) {
        mt_json_string(f, callers[i]);
        fputs(i + 1 < k ? ", " : "", f);
    }
    fputs("]", f);
}

static void put_trace(FILE *f, const mt_export_src *x, const mt_row *r, const mt_row_labels *labels,
                      size_t row)
{
    const mt_shm_trace *t = r->t;
    fputs("{", f);
    put_u64(f, "id", t->id, true);
    PUT_COUNTERS(f, t);
    put_double(f, "growth_bytes_per_s", r->growth);
    put_ages(f, &x->v->snap.slot, t);
    unsigned n;
    const uint64_t *frames = mt_defs_frames(&x->v->defs, t->id, &n);
    bool truncated = frames && (x->v->defs.items[t->id].flags & MT_DEF_TRUNCATED);
    fprintf(f, "\"truncated\": %s,\n \"location\": ", truncated ? "true" : "false");
    mt_locator at = mt_locator_at(x->loc, t->id);
    if (t->id == 0 && !n)
        fputs("\"(overflow)\"", f); /* backtraces without a trace of their own */
    else
        put_location(f, &at, frames, n);
    put_callers(f, labels, row);
    fputs(",\n \"frames\": [", f);
    for (unsigned i = 0; frames && i < n; i++)
        put_frame(f, &at, frames[i], i + 1 < n);
    fputs("]}", f);
}

/* The rows left out by --top, summed: "id": null, "other_traces": how many. */
static void put_other(FILE *f, const mt_export_src *x, const mt_rows_cut *cut)
{
    fprintf(f, "{\"id\": null, \"other_traces\": %zu, ", cut->folded);
    PUT_COUNTERS(f, &cut->other);
    put_double(f, "growth_bytes_per_s", cut->other_row.growth);
    put_ages(f, &x->v->snap.slot, &cut->other);
    fputs("\"truncated\": false,\n \"location\": \"(other)\",\n \"location_callers\": [],\n "
          "\"frames\": []}",
          f);
}

static const char *rec_state_name(uint32_t state)
{
    switch (state) {
    case MT_REC_STATE_ON:
        return "on";
    case MT_REC_STATE_STOPPED:
        return "stopped";
    case MT_REC_STATE_FAILED:
        return "failed";
    default:
        return "off";
    }
}

/* A live target's own recording (not in a recording's export: "recording"
 * says where that snapshot comes from): "live_recording": {"state", "path",
 * "bytes", "events", "held_by_viewer", "lease_s"}, null when its status
 * cannot be read now.  held_by_viewer: it stops lease_s after the viewer
 * that started it is gone; false for MEMTOP_RECORD and older viewers'. */
static void put_live_recording(FILE *f, const mt_export_src *x)
{
    mt_live_rec lr;
    if (x->rec)
        return;
    fputs("\"live_recording\": ", f);
    if (!mt_report_live_rec(x->v, &lr)) {
        fputs("null,\n", f);
        return;
    }
    fprintf(f, "{\"state\": \"%s\", \"path\": ", rec_state_name(lr.r.state));
    if (lr.r.path[0])
        mt_json_string(f, lr.r.path);
    else
        fputs("null", f);
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"events\": %" PRIu64 ", \"held_by_viewer\": %s, ",
            lr.r.bytes_written, lr.r.events_written, lr.lease.ms ? "true" : "false");
    if (lr.lease.ms)
        fprintf(f, "\"lease_s\": %u.%03u},\n", lr.lease.ms / 1000, lr.lease.ms % 1000);
    else
        fputs("\"lease_s\": null},\n", f);
}

void mt_export_json(FILE *f, const mt_export_src *x)
{
    put_head(f, x);
    put_recording(f, x->rec);
    put_live_recording(f, x);
    put_totals(f, x);
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, MT_SORT_LIVE, &n);
    mt_rows_cut cut;
    mt_rows_cut_at(rows, n, x->top, &cut);
    fprintf(f, "\"traces_total\": %zu,\n\"traces_exported\": %zu,\n\"traces\": [\n", n, cut.kept);
    mt_row_labels labels = {0};
    mt_row_labels_make(&labels, x->v, x->loc, rows, cut.kept); /* no callers if out of memory */
    for (size_t i = 0; i < cut.kept; i++) {
        put_trace(f, x, &rows[i], &labels, i);
        fputs(i + 1 < cut.kept || cut.folded ? ",\n" : "\n", f);
    }
    if (cut.folded) {
        put_other(f, x, &cut);
        fputs("\n", f);
    }
    fputs("]\n}\n", f);
    mt_row_labels_free(&labels);
    free(rows);
}
