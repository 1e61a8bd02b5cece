/* report.c -- the batch report (see report.h). */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "group_rows.h"
#include "health.h"
#include "leak_score.h"
#include "row_labels.h"
#include "rows.h"

#define B(x) mt_fmt_bytes((x), (char[32]){0}, 32)
#define C(x) mt_fmt_count((x), (char[32]){0}, 32)

static void print_who(FILE *f, const mt_view *v, mt_state st, const mt_export_rec *rec)
{
    bool silent = rec && rec->silent; /* a recording's moment the process did not run */
    const mt_shm_slot *s = &v->snap.slot;
    char when[32] = "?", up[32], cmd[MT_CMDLINE_MAX];
    time_t t = (time_t)(s->unix_ns / 1000000000ull);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%H:%M:%S", &tm);
    snprintf(cmd, sizeof cmd, "%s", mt_view_cmdline(v));
    fprintf(f, "memtop - %s - pid %d %s, up %s, snapshot #%llu%s\n", when, mt_segment_pid(&v->seg),
            mt_export_state_word(st, v->snap.flags, rec),
            mt_fmt_duration(mt_view_uptime_s(v), up, sizeof up), (unsigned long long)s->publish_seq,
            v->snap.flags & MT_FLAG_FORK_CHILD ? " (forked child)" : "");
    fprintf(f, "command: %s\n", mt_fmt_sanitize(cmd));
    if (silent)
        fprintf(f, "stopped: from %.3fs to %.3fs of the recording, %s\n",
                (double)rec->silent_from_ns / 1e9, (double)rec->silent_to_ns / 1e9, MT_SILENT_NOTE);
}

/* A running target that publishes nothing (view.h): say how old its
 * snapshot is, each report, so that a report repeated from it does not
 * read as new. */
static void print_stale(FILE *f, const mt_view *v, const mt_staleness *st)
{
    char why[160];
    if (!st->stale)
        return;
    mt_staleness_text(v, st, why, sizeof why);
    fprintf(f, "NOT PUBLISHING: %s; rates unknown\n", why);
}

static void print_memory(FILE *f, const mt_view *v, const mt_shm_totals *t)
{
    const mt_shm_allocator *m = mt_allocators_main(&v->allocs);
    char name[80] = "";
    if (m) { /* "allocator jemalloc 5.3.0 (static) 12.4 MiB" */
        mt_allocator_name(m, name + 1, sizeof name - 1);
        name[0] = ' ';
    }
    const char *e = mt_est_mark(mt_view_sample_rate(v)); /* "~": estimated */
    /* glibc's figures are taken at a pace: say how old they are */
    char age[48] = "";
    if (mt_view_allocator_age_s(v))
        snprintf(age, sizeof age, " (%" PRIu64 " s ago)", mt_view_allocator_age_s(v));
    /* a recording's RSS is its newest TOTALS', not the cursor's: dated */
    char rss_age[48] = "";
    uint64_t ra = mt_snapshot_totals_age_ns(&v->snap);
    if (ra >= 100000000u && t->rss_bytes != MT_UNKNOWN) /* to a tenth of a second */
        snprintf(rss_age, sizeof rss_age, " (%.1f s ago)", (double)ra / 1e9);
    fprintf(f,
            "heap: %s%s live in %s%s blocks, peak %s%s | allocator%s %s, in use %s%s | RSS %s%s | "
            "memtop %s\n",
            e, B(t->live_bytes), e, C(t->live_count), e, B(t->peak_live_bytes), name,
            B(t->allocator_bytes), B(t->allocator_inuse_bytes), age, B(t->rss_bytes), rss_age,
            mt_fmt_own_memory(t->tracker_bytes, v->segment_bytes, (char[80]){0}, 80));
}

/* "the last 1.0 s", "its whole life, 0.4 s": what the rates are over. */
static const char *rates_window(const mt_rates *r, char *buf, size_t n)
{
    char span[32];
    mt_fmt_window(r->window_s, span, sizeof span);
    int k = snprintf(buf, n, "%s%s", r->whole_life ? "its whole life, " : "the last ", span);
    if (r->stopped_s >= 0.05 && k > 0 && (size_t)k < n) /* a replay across a stop */
        snprintf(buf + k, n - (size_t)k, ", %.1f s of it stopped", r->stopped_s);
    return buf;
}

static void print_rates(FILE *f, const mt_view *v, const mt_shm_totals *t, const mt_staleness *st)
{
    if (st->stale) /* the last rates are not the present ones */
        fprintf(f, "rate: unknown (no snapshot for %llu s)",
                (unsigned long long)(st->silent_ns / 1000000000u));
    else if (st->ended) /* a dead process allocates nothing */
        fprintf(f, "rate: none (process %s)", st->ended);
    else if (v->rates.valid)
        /* a volume, not a change: no '+' (it read as growth) */
        fprintf(
            f, "rate: %.0f allocs/s (%s/s), %.0f frees/s over %s", v->rates.allocs_per_s,
            mt_fmt_bytes((uint64_t)llround(fmax(v->rates.alloc_bytes_per_s, 0)), (char[32]){0}, 32),
            v->rates.frees_per_s, rates_window(&v->rates, (char[80]){0}, 80));
    else
        fputs("rate: n/a", f);
    double pct = t->alloc_count ? 100.0 * (double)t->temporary_count / (double)t->alloc_count : 0;
    /* sampled: the totals of allocations and frees are exact where
     * mt_view_totals_exact says so, the temporary count is estimated (and
     * so is its share); an estimate over an exact count can pass 100 %,
     * which no share can */
    if (pct > 100.0)
        pct = 100.0;
    const char *e = mt_est_mark(mt_view_sample_rate(v)),
               *ec = mt_est_mark(!mt_view_totals_exact(v));
    fprintf(f, " | total %s%s allocs (%s%s), %s%s frees | temporary %s%s (%s%.1f%%)\n", ec,
            C(t->alloc_count), ec, B(t->alloc_bytes), ec, C(t->free_count), e,
            C(t->temporary_count), e, pct);
}

/* Why some blocks are counted in the overflow trace rather than their own:
 * the trace table's bound, traces folded for want of room in the segment. */
static void print_folding(FILE *f, const mt_view *v, const mt_shm_totals *t)
{
    uint32_t max = v->snap.slot.max_traces;
    if (v->snap.flags & MT_FLAG_TRACES_FULL) {
        if (max)
            fprintf(f,
                    " | trace table full (%s traces, MEMTOP_MAX_TRACES): new backtraces "
                    "counted in (overflow)",
                    C(max));
        else
            fputs(" | trace table full: new backtraces counted in (overflow)", f);
    }
    if (t->dropped_traces || (v->snap.flags & MT_FLAG_SEGMENT_FULL))
        fprintf(f, " | segment full: %s trace%s folded into (overflow)", C(t->dropped_traces),
                mt_plural(t->dropped_traces));
}

/* "data: exact", or what makes it not: the exports' health (health.c).  A
 * culled recording is exact only at the end of a finalized file: say so. */
static void print_data(FILE *f, const mt_view *v, const mt_export_rec *rec)
{
    char line[1024];
    mt_health_line(v, rec, line, sizeof line);
    if (line[0])
        fprintf(f, "data: %s\n", line);
    else if (rec && rec->cull_ms)
        fprintf(f,
                "data: exact at the end of this culled recording (its young blocks written "
                "then; before the end, live misses blocks younger than %llu ms that die young)\n",
                (unsigned long long)rec->cull_ms);
    else
        fputs("data: exact\n", f);
}

static void print_health(FILE *f, const mt_view *v, const mt_shm_totals *t,
                         const mt_export_rec *rec)
{
    fprintf(f, "health: unknown frees %llu, untracked %llu, missed frees %llu, dropped traces %llu",
            (unsigned long long)t->unknown_free_count, (unsigned long long)t->untracked_alloc_count,
            (unsigned long long)t->missed_free_count, (unsigned long long)t->dropped_traces);
    print_folding(f, v, t);
    fputc('\n', f);
    print_data(f, v, rec);
    char threads[32] = "?";
    if (t->thread_count != MT_UNKNOWN)
        snprintf(threads, sizeof threads, "%llu", (unsigned long long)t->thread_count);
    fprintf(f, "traces: %llu, threads: %s\n", (unsigned long long)t->trace_count, threads);
}

bool mt_report_live_rec(const mt_view *v, mt_live_rec *out)
{
    uint64_t why[MT_REC_WHY_MAX];
    mt_err err;
    memset(out, 0, sizeof *out);
    return v->attached && v->seg.base &&
           mt_segment_recording_lease(&v->seg, &out->r, why, &out->lease, &err) == MT_OK;
}

/* A recording running in a live target: it fills a disk while it runs,
 * whoever started it, so the report says so, and whether it stops by
 * itself when the viewer that started it is gone. */
static void print_live_recording(FILE *f, const mt_view *v, const mt_export_rec *rec)
{
    mt_live_rec lr;
    if (rec || !mt_report_live_rec(v, &lr) || lr.r.state != MT_REC_STATE_ON)
        return;
    char path[MT_PATH_MAX];
    snprintf(path, sizeof path, "%s", lr.r.path);
    fprintf(f, "recording: %s, %s so far, ", mt_fmt_sanitize(path), B(lr.r.bytes_written));
    if (lr.lease.ms)
        fprintf(f, "held by a viewer (it stops %u.%03u s after that viewer is gone)\n",
                lr.lease.ms / 1000, lr.lease.ms % 1000);
    else
        fputs("held by no viewer (MEMTOP_RECORD, or an older memtop or libmemtop.so): it runs "
              "until stopped\n",
              f);
}

void mt_report_header(FILE *f, const mt_view *v, mt_state st, const mt_export_rec *rec)
{
    const mt_shm_totals *t = &v->snap.slot.totals;
    mt_staleness stale = mt_view_staleness(v);
    print_who(f, v, st, rec);
    print_stale(f, v, &stale);
    print_memory(f, v, t);
    print_rates(f, v, t, &stale);
    print_health(f, v, t, rec);
    print_live_recording(f, v, rec);
}

/* Row r; where: its LOCATION text (row_labels.h), or its group's label. */
static void print_row(FILE *f, const mt_view *v, const mt_row *r, const char *label)
{
    char where[1024];
    snprintf(where, sizeof where, "%s", label);
    mt_leak_parts leak; /* from the segment's checkpoints alone, as -s leak sorts */
    mt_leak_score(&v->snap.slot, r->t, NULL, &leak);
    fprintf(f, "%10s %9s %9s %9s %12s %5.0f  %s\n", B(r->t->live_bytes), C(r->t->live_count),
            C(r->t->alloc_count), C(r->t->temporary_count),
            mt_fmt_rate(r->growth, (char[32]){0}, 32), leak.score, mt_fmt_sanitize(where));
}

/* "the last 55 s" (the window of the GROWTH column), "no window yet";
 * "the last 55 s until it exited" when that is not the present growth. */
static const char *growth_window(const mt_view *v, char *buf, size_t n)
{
    double w = mt_growth_window_s(&v->snap.slot);
    const char *end = mt_view_staleness(v).ended;
    char span[32];
    snprintf(buf, n, "%s%s%s%s", w > 0 ? "the last " : "", mt_fmt_window(w, span, sizeof span),
             end && w > 0 ? " until it " : "", end && w > 0 ? end : "");
    return buf;
}

static const char *const column_of[MT_GROUP_KEYS] = {"LOCATION", "FUNCTION", "FILE", "MODULE"};

void mt_report_rows(FILE *f, const mt_view *v, const mt_locator *loc, mt_sort_key key,
                    mt_group_key g, long top)
{
    size_t n;
    mt_grouped grp;
    bool grouped = g != MT_GROUP_TRACE && (unsigned)g < MT_GROUP_KEYS;
    mt_row *rows;
    if (grouped && mt_grouped_build(&grp, &v->snap, &v->defs, loc, g) != 0) {
        fputs("\n(out of memory grouping the rows)\n", f);
        return;
    }
    rows = grouped ? mt_rows_of(&v->snap.slot, grp.sums, grp.n, key, &n)
                   : mt_rows_build(&v->snap, key, &n);
    size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n;
    bool est = mt_view_sample_rate(v) != 0; /* every column estimated */
    fprintf(f,
            "\n%10s %9s %9s %9s %12s %5s  %s   (sorted by %s, %zu of %zu%s%s, growth/s over %s)\n",
            est ? "~LIVE" : "LIVE", est ? "~BLOCKS" : "BLOCKS", est ? "~ALLOCS" : "ALLOCS",
            est ? "~TEMP" : "TEMP", est ? "~GROWTH" : "GROWTH", est ? "~LEAK" : "LEAK",
            column_of[grouped ? g : MT_GROUP_TRACE], mt_sort_name(key), shown, n,
            grouped ? ", grouped by " : "", grouped ? mt_group_name(g) : "",
            growth_window(v, (char[64]){0}, 64));
    mt_row_labels labels = {0};
    if (!grouped && mt_row_labels_make(&labels, v, loc, rows, shown) != 0)
        fputs("(out of memory naming the rows)\n", f);
    for (size_t i = 0; i < shown && (grouped || i < labels.n); i++) {
        char where[1024];
        print_row(f, v, &rows[i],
                  grouped ? mt_grouped_label(&grp, rows[i].t)
                          : mt_row_label(&labels, i, where, sizeof where));
    }
    mt_row_labels_free(&labels);
    free(rows);
    if (grouped)
        mt_grouped_free(&grp);
}
