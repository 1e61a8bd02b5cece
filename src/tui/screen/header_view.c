/* header_view.c -- the process header (see header_view.h). */
#include "header_view.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "format.h"
#include "dat_format.h"
#include "graph.h"

#define B(x) mt_fmt_bytes((x), (char[32]){0}, 32)
#define TEXT_ROWS 4
#define GRAPH_POINTS 4096 /* a recording's timeline has up to this many */

int mt_header_height(const mt_app *a, int lines)
{
    (void)a;
    int graph = lines >= 30 ? 3 : lines >= 20 ? 2 : lines >= 14 ? 1 : 0;
    return TEXT_ROWS + graph;
}

/* Seconds with a decimal below 100 s, else a duration. */
static const char *secs(uint64_t ns, char *buf, size_t n)
{
    if (ns < 100000000000ull)
        snprintf(buf, n, "%.1fs", (double)ns / 1e9);
    else
        mt_fmt_duration(ns / 1000000000ull, buf, n);
    return buf;
}

/* "REPLAY 1.2s of 3.0s" (time since the recording began), at the end
 * whether live means leaked, and at every position whether the file was
 * cut short. */
static const char *replay_text(const mt_app *a, char *buf, size_t n)
{
    const mt_replay_info *in = mt_replay_get_info(a->src.replay);
    bool end = mt_replay_at_end(a->src.replay);
    uint64_t lo = in->start_ns, hi = in->duration_ns > lo ? in->duration_ns : lo;
    uint64_t cur = end ? hi : mt_replay_cursor(a->src.replay);
    char at[32], len[32];
    const char *how = !end                                      ? ""
                      : mt_replay_not_leaked_why(a->src.replay) ? ": end"
                                                                : ": end, live = leaked";
    const char *file = in->truncated                        ? " (file truncated)"
                       : !in->finalized                     ? " (not finalized)"
                       : mt_replay_disk_full(in)            ? " (disk full)"
                       : in->end_reason == MT_DAT_END_ERROR ? " (write error)"
                                                            : "";
    int k = snprintf(buf, n, "REPLAY %s of %s%s%s", secs(cur > lo ? cur - lo : 0, at, sizeof at),
                     secs(hi - lo, len, sizeof len), how, file);
    uint64_t from, to; /* no record at all there: the process did not run */
    if (k > 0 && (size_t)k < n && mt_replay_silent(a->src.replay, &from, &to))
        snprintf(buf + k, n - (size_t)k, ": STOPPED (no records %s to %s)",
                 secs(from > lo ? from - lo : 0, at, sizeof at),
                 secs(to > lo ? to - lo : 0, len, sizeof len));
    return buf;
}

/* A running target that publishes nothing (view.h): "STOPPED (T):
 * snapshot 12s old", "TRACED (t): ...", "NOT PUBLISHING: ..." for a hung
 * one (not "STALE": GONE's segments are the stale ones, --list). */
static const char *stale_text(const mt_app *a, attr_t *attr, char *buf, size_t n)
{
    const mt_staleness *st = &a->ui.stale;
    char age[32];
    mt_fmt_duration(st->age_ns / 1000000000u, age, sizeof age);
    snprintf(buf, n, "%s: snapshot %s old", mt_staleness_label(st), age);
    *attr = a->theme.bad;
    return buf;
}

static const char *phase_text(const mt_app *a, attr_t *attr, char *buf, size_t n)
{
    const mt_theme *t = &a->theme;
    *attr = t->good;
    if (a->ui.paused) {
        *attr = t->warn;
        return "PAUSED";
    }
    switch (a->src.phase) {
    case MT_SRC_WAITING:
        *attr = t->warn;
        return "STARTING";
    case MT_SRC_EXITED:
        *attr = t->bad;
        return a->src.view.snap.flags & MT_FLAG_EXECED
                   ? "EXEC'D: the state before exec; the new program is not tracked"
                   : "EXITED: live = leaked at exit";
    case MT_SRC_GONE:
        *attr = t->bad;
        if (a->src.launched && a->src.child.exited && a->src.child.signo) {
            /* PROG, memtop's child: how it ended is known (--batch says it) */
            snprintf(buf, n, "GONE: killed by signal %d (SIG%s), no final snapshot",
                     a->src.child.signo,
                     sigabbrev_np(a->src.child.signo) ? sigabbrev_np(a->src.child.signo) : "?");
            return buf;
        }
        return "GONE without a final snapshot";
    case MT_SRC_REPLAY:
        *attr = t->warn;
        return replay_text(a, buf, n);
    default:
        return a->ui.stale.stale ? stale_text(a, attr, buf, n) : "RUNNING";
    }
}

/* Row 0: pid, command, uptime, state. */
static void draw_who(mt_app *a, const mt_snapshot *s)
{
    const mt_theme *t = &a->theme;
    const mt_view *v = &a->src.view;
    char up[32] = "-";
    if (s)
        mt_fmt_duration(mt_view_uptime_s(v), up, sizeof up);
    attr_t pa;
    char pbuf[160];
    const char *phase = phase_text(a, &pa, pbuf, sizeof pbuf);
    int x = mt_draw_text(t, 0, 0, COLS, t->title, "memtop ");
    x += mt_draw_fmt(t, 0, x, COLS - x, t->value, "pid %d ", a->src.pid);
    if (s && (s->flags & MT_FLAG_FORK_CHILD)) /* as --list and --batch tell a worker */
        x += mt_draw_fmt(t, 0, x, COLS - x, t->dim, "(fork of %d) ", (int)v->seg.id.ppid);
    int pw = mt_text_width(phase) + 2;
    int upw = (int)strlen(up) + 5;
    const char *cmd = mt_view_cmdline(v);
    if (!v->attached && !v->have_snap && a->o->prog_argv)
        cmd = a->o->prog_argv[0];
    x += mt_draw_text(t, 0, x, COLS - x - pw - upw, A_NORMAL, cmd);
    x += mt_draw_fmt(t, 0, x + 1, COLS - x - 1, t->label, " up %s ", up) + 1;
    mt_draw_text(t, 0, x + 1, COLS - x - 1, pa | A_BOLD, phase);
}

static void field(const mt_theme *t, int y, int *x, const char *label, attr_t va, const char *val)
{
    if (*x > 0)
        *x += mt_draw_fmt(t, y, *x, COLS - *x, t->dim, " %s ", t->sep);
    *x += mt_draw_text(t, y, *x, COLS - *x, t->label, label);
    *x += mt_draw_text(t, y, *x, COLS - *x, va, val);
}

/* Row 1: heap, allocator, RSS and what that means for fragmentation, and
 * what memtop itself costs the target. */
static void draw_memory(mt_app *a, const mt_shm_totals *to)
{
    const mt_theme *t = &a->theme;
    char buf[128];
    int x = 0;
    const char *est = mt_est_mark(mt_view_sample_rate(&a->src.view));
    snprintf(buf, sizeof buf, "%s%s in %s%s blocks", est, B(to->live_bytes), est,
             mt_fmt_count(to->live_count, (char[32]){0}, 32));
    field(t, 1, &x, "Heap ", t->value, buf);
    if (a->ui.baseline_t_ns) { /* what changed since the baseline */
        const mt_shm_totals *b = &a->ui.baseline;
        double d = (double)to->live_bytes - (double)b->live_bytes;
        char sign = d < 0 ? '-' : '+';
        const char *ec = mt_est_mark(!mt_view_totals_exact(&a->src.view));
        snprintf(buf, sizeof buf, " (%s%s%c%s, %s%s allocs since)", est, a->theme.delta, sign,
                 B((uint64_t)(d < 0 ? -d : d)), ec,
                 mt_fmt_count(to->alloc_count - b->alloc_count, (char[32]){0}, 32));
        x += mt_draw_text(t, 1, x, COLS - x, t->warn, buf);
    }
    if (to->allocator_bytes != MT_UNKNOWN && to->allocator_bytes) {
        /* glibc's figures are taken at a pace: an old one against today's
         * live bytes is no share of anything, so it stands alone, dated */
        double frag =
            mt_fmt_allocator_share(to->allocator_bytes, to->live_bytes,
                                   mt_view_allocator_age_s(&a->src.view), buf, sizeof buf);
        const mt_shm_allocator *m = mt_allocators_main(&a->src.view.allocs);
        char label[96] = "Allocator ";
        if (m) { /* "Allocator jemalloc 5.3.0 (static): 12.4 MiB, 9% not live" */
            size_t k = strlen(label);
            mt_allocator_name(m, label + k, sizeof label - k - 2);
            strcat(label, ": ");
        }
        field(t, 1, &x, label, frag >= 50 ? t->warn : t->value, buf);
    } else {
        field(t, 1, &x, "Allocator ", t->dim, "unknown");
    }
    /* a recording's RSS is its newest TOTALS', not the cursor's: dated */
    uint64_t ra = mt_snapshot_totals_age_ns(&a->src.view.snap);
    if (ra >= 100000000u && to->rss_bytes != MT_UNKNOWN) /* to a tenth of a second */
        snprintf(buf, sizeof buf, "%s (%.1fs ago)", B(to->rss_bytes), (double)ra / 1e9);
    else
        snprintf(buf, sizeof buf, "%s", B(to->rss_bytes));
    field(t, 1, &x, "RSS ", t->value, buf);
    snprintf(buf, sizeof buf, "%s%s", est, B(to->peak_live_bytes));
    field(t, 1, &x, "peak ", A_NORMAL, buf);
    /* last: cut first on a narrow terminal */
    field(t, 1, &x, "memtop ", t->dim,
          mt_fmt_own_memory(to->tracker_bytes, a->src.view.segment_bytes, buf, sizeof buf));
}

/* Live-bytes growth per second over the last minute (or the whole run
 * when it is younger), from the timeline; *window_s says over how long. */
static double minute_growth(const mt_snapshot *s, uint64_t *window_s)
{
    *window_s = 0;
    if (!s->timeline || s->slot.ntimeline < 2)
        return 0;
    const mt_shm_point *last = &s->timeline[s->slot.ntimeline - 1], *p = &s->timeline[0];
    for (uint32_t i = s->slot.ntimeline - 1; i-- > 0;) {
        p = &s->timeline[i];
        if (last->t_ns - p->t_ns >= 60000000000ull)
            break;
    }
    if (last->t_ns <= p->t_ns)
        return 0;
    *window_s = (last->t_ns - p->t_ns + 500000000ull) / 1000000000ull;
    return ((double)last->live_bytes - (double)p->live_bytes) /
           ((double)(last->t_ns - p->t_ns) / 1e9);
}

static void health_text(const mt_shm_totals *to, uint32_t flags, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    if (to->unknown_free_count)
        k += (size_t)snprintf(buf + k, n - k, "%llu unknown frees ",
                              (unsigned long long)to->unknown_free_count);
    if (to->untracked_alloc_count && k < n)
        k += (size_t)snprintf(buf + k, n - k, "%llu untracked ",
                              (unsigned long long)to->untracked_alloc_count);
    if (to->missed_free_count && k < n)
        k += (size_t)snprintf(buf + k, n - k, "%llu missed frees ",
                              (unsigned long long)to->missed_free_count);
    if ((flags & MT_FLAG_TRACES_FULL) && k < n)
        k += (size_t)snprintf(buf + k, n - k, "trace table full ");
    if ((to->dropped_traces || (flags & MT_FLAG_SEGMENT_FULL)) && k < n)
        snprintf(buf + k, n - k, "%llu trace%s folded ", (unsigned long long)to->dropped_traces,
                 mt_plural(to->dropped_traces));
}

/* Row 2: rates, growth, health. */
static void draw_rates(mt_app *a, const mt_snapshot *s)
{
    const mt_theme *t = &a->theme;
    const mt_view *v = &a->src.view;
    char buf[480];
    int x = 0;
    if (a->ui.stale.stale) /* the last rates are not the present ones */
        snprintf(buf, sizeof buf, "unknown (no snapshot for %s)",
                 mt_fmt_duration(a->ui.stale.silent_ns / 1000000000u, (char[32]){0}, 32));
    else if (a->ui.stale.ended) /* a dead process allocates nothing */
        snprintf(buf, sizeof buf, "none (process %s)", a->ui.stale.ended);
    else if (v->rates.valid)
        snprintf(buf, sizeof buf, "%s/s allocs, %s/s frees%s",
                 mt_fmt_count((uint64_t)(v->rates.allocs_per_s + 0.5), (char[32]){0}, 32),
                 mt_fmt_count((uint64_t)(v->rates.frees_per_s + 0.5), (char[32]){0}, 32),
                 v->rates.whole_life          ? " (whole life)"
                 : v->rates.stopped_s >= 0.05 ? " (averaged over a stop)"
                                              : "");
    else
        snprintf(buf, sizeof buf, "n/a");
    field(t, 2, &x, "Rate ", t->value, buf);
    uint64_t win;
    double g = minute_growth(s, &win);
    char label[48], w[32];
    /* of the last window before the process stopped or ended */
    const char *end = a->ui.stale.ended;
    snprintf(label, sizeof label, "Growth %s%s%s ",
             win >= 55 ? "1m" : mt_fmt_duration(win, w, sizeof w), end ? " until it " : "",
             end ? end : "");
    snprintf(buf, sizeof buf, "%s", mt_est_mark(mt_view_sample_rate(v)));
    mt_fmt_rate(g, buf + strlen(buf), sizeof buf - strlen(buf));
    field(t, 2, &x, label, g > 0 ? t->warn : t->value, buf);
    /* The allocators memtop cannot see come first: they make every figure
     * doubtful, the counters only some. */
    size_t k0 = 0;
    if (mt_view_sample_rate(v)) { /* estimates: never "exact" */
        mt_fmt_sampling(mt_view_sample_rate(v), buf, sizeof buf);
        k0 = strlen(buf);
        k0 += (size_t)snprintf(buf + k0, sizeof buf - k0, " ");
    }
    if (mt_allocators_inexact(&v->allocs)) {
        k0 += (size_t)snprintf(buf + k0, sizeof buf - k0, "NOT exact: ");
        mt_allocators_inexact_text(&v->allocs, buf + k0, sizeof buf - k0);
        k0 = strlen(buf);
        k0 += (size_t)snprintf(buf + k0, sizeof buf - k0, " ");
    }
    health_text(&s->slot.totals, s->flags, buf + k0, sizeof buf - k0);
    if (a->src.replay) { /* and what the recording lost */
        size_t k = strlen(buf);
        mt_replay_inexact_text(a->src.replay, buf + k, sizeof buf - k);
    }
    field(t, 2, &x, "Data ", buf[0] ? t->warn : t->good, buf[0] ? buf : "exact");
}

/* The target's recording: off, into a file (growing), stopped or failed. */
/* -f: which file, how many events, and whether any were lost. */
static void draw_replay_file(mt_app *a, int *x)
{
    const mt_theme *t = &a->theme;
    const mt_replay_info *in = mt_replay_get_info(a->src.replay);
    char buf[600];
    char thr[32];
    snprintf(buf, sizeof buf, "%s, %s events%s%s%s", in->path,
             mt_fmt_count(in->events, (char[32]){0}, 32), in->tick_order ? ", tick order" : "",
             in->culled ? ", culled <" : "",
             in->culled ? mt_replay_cull_secs(in, thr, sizeof thr) : "");
    field(t, 3, x, "File ", A_NORMAL, buf);
    if (mt_replay_dropped(in)) {
        char d[256];
        snprintf(buf, sizeof buf, "inexact: %s", mt_replay_dropped_text(in, d, sizeof d));
        field(t, 3, x, "", t->bad, buf);
    }
}

static void draw_recording(mt_app *a, int *x)
{
    const mt_theme *t = &a->theme;
    mt_shm_recording rec;
    if (a->src.replay) {
        draw_replay_file(a, x);
        return;
    }
    mt_err err;
    char line[600];
    uint64_t why[MT_REC_WHY_MAX];
    mt_errc rc = a->src.view.attached ? mt_segment_recording_why(&a->src.view.seg, &rec, why, &err)
                                      : MT_E_GONE;
    if (rc == MT_E_BUSY) { /* no stable read: say so rather than show a torn set */
        field(t, 3, x, "Rec ", t->warn, "status not known (being written)");
        return;
    }
    if (rc != MT_OK || rec.state == MT_REC_STATE_OFF) {
        field(t, 3, x, "Rec ", t->dim, "off (r)");
        return;
    }
    if (rec.state == MT_REC_STATE_ON && a->src.phase == MT_SRC_GONE) {
        /* killed while recording: its status stays "on" for ever; the file
         * holds what was flushed, readable, not finalized; the size is the
         * last the target published (up to an interval behind the file) */
        char size[32];
        snprintf(line, sizeof line, "recorded %s (at least %s, not finalized: the process died)",
                 mt_recording_is_stream(rec.path) ? "a stream (--record -)" : rec.path,
                 mt_fmt_bytes(rec.bytes_written, size, sizeof size));
        field(t, 3, x, "", t->warn, line);
        return;
    }
    mt_recording_line(&rec, why, line, sizeof line);
    attr_t at = rec.state == MT_REC_STATE_ON       ? t->bad
                : rec.state == MT_REC_STATE_FAILED ? t->warn
                                                   : A_NORMAL;
    char label[16];
    snprintf(label, sizeof label, "%s ", t->rec);
    field(t, 3, x, rec.state == MT_REC_STATE_ON ? label : "", at, line);
}

/* Row 3: baseline, launch output, recording, names still resolving. */
static void draw_notes(mt_app *a)
{
    const mt_theme *t = &a->theme;
    char buf[600];
    int x = 0;
    if (a->ui.baseline_t_ns) {
        uint64_t now = a->src.view.snap.slot.t_ns;
        char ago[32];
        mt_fmt_duration(now > a->ui.baseline_t_ns ? (now - a->ui.baseline_t_ns) / 1000000000ull : 0,
                        ago, sizeof ago);
        snprintf(buf, sizeof buf, "figures are changes over the last %s (b: clear)", ago);
        field(t, 3, &x, "Baseline ", t->warn, buf);
    }
    draw_recording(a, &x);
    if (a->src.launched)
        field(t, 3, &x, "Output ", A_NORMAL, a->src.out_path);
    size_t pending = a->names.w ? mt_symworker_pending(a->names.w) : 0;
    if (pending) {
        snprintf(buf, sizeof buf, "%zu address%s", pending, pending == 1 ? "" : "es");
        field(t, 3, &x, "Resolving ", t->dim, buf);
    }
}

static void draw_graph(mt_app *a, const mt_snapshot *s, int y, int h)
{
    const mt_theme *t = &a->theme;
    static_assert(MT_TIMELINE_POINTS <= GRAPH_POINTS, "the timeline fits");
    double vals[GRAPH_POINTS];
    const mt_shm_point *pts = s->timeline;
    size_t npts = s->timeline ? s->slot.ntimeline : 0, n = 0;
    double marker = -1;
    if (a->src.replay) { /* the whole recording, with the cursor marked */
        pts = mt_replay_timeline(a->src.replay, &npts);
        const mt_replay_info *in = mt_replay_get_info(a->src.replay);
        uint64_t lo = in->start_ns, hi = in->duration_ns;
        uint64_t cur = mt_replay_at_end(a->src.replay) ? hi : mt_replay_cursor(a->src.replay);
        marker = hi > lo && cur >= lo ? (double)(cur - lo) / (double)(hi - lo) : 1.0;
    }
    for (size_t i = 0; pts && i < npts && n < GRAPH_POINTS; i++)
        vals[n++] = (double)pts[i].live_bytes;
    int label_w = 12;
    mt_graph_style st = {t->utf8, COLS - label_w, h, marker};
    if (st.width < 8)
        return;
    char lines[MT_GRAPH_MAX_H][MT_GRAPH_LINE_BYTES];
    double max = mt_graph_render(vals, n, &st, lines);
    for (int r = 0; r < h && r < MT_GRAPH_MAX_H; r++) {
        mvhline(y + r, 0, ' ', COLS);
        attrset(t->graph);
        mvaddstr(y + r, label_w, lines[r]);
        attrset(A_NORMAL);
    }
    if (h > 1)
        mt_draw_text(t, y, 0, label_w - 1, t->label, "Heap life");
    mt_draw_text(t, y + (h > 1 ? 1 : 0), 0, label_w - 1, t->dim, B((uint64_t)max));
}

int mt_header_draw(mt_app *a)
{
    int h = mt_header_height(a, LINES);
    for (int r = 0; r < h; r++)
        mt_draw_fill(r, 0, COLS, A_NORMAL);
    const mt_snapshot *s = mt_app_snapshot(a);
    draw_who(a, s);
    if (!s) {
        mt_draw_text(&a->theme, 1, 0, COLS, a->theme.dim,
                     "waiting for the target's first snapshot...");
        return h;
    }
    draw_memory(a, &s->slot.totals);
    draw_rates(a, s);
    draw_notes(a);
    if (h > TEXT_ROWS)
        draw_graph(a, s, TEXT_ROWS, h - TEXT_ROWS);
    return h;
}
