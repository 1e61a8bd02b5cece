/* detail_panel.c -- Enter on a row: everything about one trace (or the
 * largest trace of a group): its counters, the parts of its leak score,
 * the ages of its live blocks, its history since memtop attached, and the
 * whole symbolized backtrace with inlined frames.  Names that are still
 * being resolved show as module+offset and fill in as they arrive. */
#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "app.h"
#include "columns.h"
#include "format.h"
#include "graph.h"
#include "rows.h"
#include "stack_start.h"
#include "text_lines.h"

#define B(x) mt_fmt_bytes((x), (char[32]){0}, 32)
#define HISTORY_MAX 512

static const char *const age_names[MT_AGE_BUCKETS] = {"<1s", "<10s", "<1m", "<10m",
                                                      "<1h", "<6h",  "<1d", ">=1d"};

static const mt_table_row *find_row(mt_app *a)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    for (size_t i = 0; i < n; i++) {
        bool same = mt_app_group(a) == MT_GROUP_TRACE
                        ? rows[i].trace_id == a->panels.detail.trace
                        : rows[i].label && strcmp(rows[i].label, a->panels.detail.label) == 0;
        if (same) {
            mt_table_leak(a->table, i); /* fills rows[i].leak */
            return &rows[i];
        }
    }
    return NULL;
}

static const mt_shm_trace *find_trace(const mt_snapshot *s, uint32_t id)
{
    for (uint64_t i = 0; s && s->traces && i < s->slot.ntraces; i++)
        if (s->traces[i].id == id)
            return &s->traces[i];
    return NULL;
}

static void add_counters(mt_app *a, mt_text_lines *l, const mt_table_row *r)
{
    const mt_theme *t = &a->theme;
    bool d = mt_table_has_baseline(a->table);
    const char *since = d ? " (since the baseline)" : "";
    char c1[32], c2[32];
    const char *est = mt_est_mark(mt_view_sample_rate(&a->src.view));
    mt_lines_add(l, t->title, "Counters%s%s", since, est[0] ? " (~: estimated from samples)" : "");
    char live[48], blocks[48];
    mt_column_text(MT_COL_LIVE, r, d, true, live, sizeof live);
    mt_column_text(MT_COL_BLOCKS, r, d, true, blocks, sizeof blocks);
    mt_lines_add(l, A_NORMAL, "  live        %s%s in %s%s blocks", est, live, est, blocks);
    mt_lines_add(l, A_NORMAL, "  allocated   %s%s in %s%s allocations", est,
                 B((uint64_t)r->alloc_bytes), est, mt_fmt_count((uint64_t)r->alloc_count, c1, 32));
    mt_lines_add(l, A_NORMAL,
                 "  freed       %s%s frees, %s%s temporary (%s%.0f%% of the allocations)", est,
                 mt_fmt_count((uint64_t)r->free_count, c1, 32), est,
                 mt_fmt_count((uint64_t)r->temporary_count, c2, 32), est, 100.0 * r->temp_share);
    const mt_snapshot *s = mt_app_snapshot(a);
    double w = s ? mt_growth_window_s(&s->slot) : 0;
    /* the table's ALLOC/s rule: no rate without two snapshots (a replay,
     * the first refresh) or from a process that ended: "-", never "0.0" */
    char aps[48] = "-";
    if (a->ui.rates_known && !a->ui.stale.ended)
        snprintf(aps, sizeof aps, "%s%.1f", est, r->allocs_ps);
    mt_lines_add(l, A_NORMAL, "  rates       %s%s live growth over %s%s, %s allocations/s", est,
                 mt_fmt_rate(r->growth_bps, c1, 32), w > 0 ? "the last " : "",
                 mt_fmt_window(w, c2, 32), aps);
}

static void add_leak(mt_app *a, mt_text_lines *l, const mt_table_row *r)
{
    const mt_theme *t = &a->theme;
    mt_lines_add(l, t->title, "Leak suspicion %.0f / 100  (docs/leak-score.md)", r->leak.score);
    char rate[32];
    mt_lines_add_wrapped(
        l, A_NORMAL, 4,
        "  sustained growth %.2f   magnitude %.2f (%s%s kept)   aging %.2f   "
        "retention (few frees, not scored) %.2f",
        r->leak.growth, r->leak.magnitude, mt_est_mark(mt_view_sample_rate(&a->src.view)),
        mt_fmt_rate(r->leak.rate, rate, sizeof rate), r->leak.aging, r->leak.retention);
}

static void add_ages(mt_app *a, mt_text_lines *l, const mt_shm_trace *tr, const mt_snapshot *s)
{
    const mt_theme *t = &a->theme;
    uint64_t total = 0;
    for (unsigned i = 0; i < MT_AGE_BUCKETS; i++)
        total += tr->age_bytes[i];
    char oldest[32] = "none";
    if (tr->oldest_birth_ns != MT_UNKNOWN && s->slot.age_scan_ns >= tr->oldest_birth_ns)
        mt_fmt_duration((s->slot.age_scan_ns - tr->oldest_birth_ns) / 1000000000ull, oldest, 32);
    const char *est = mt_est_mark(mt_view_sample_rate(&a->src.view));
    mt_lines_add(l, t->title, "Ages of live blocks (%sbytes), oldest %s", est, oldest);
    for (unsigned i = 0; i < MT_AGE_BUCKETS; i++) {
        if (!tr->age_bytes[i])
            continue;
        char bar[256] = "";
        int cells = total ? (int)(40.0 * (double)tr->age_bytes[i] / (double)total + 0.5) : 0;
        for (int k = 0; k < cells && strlen(bar) + 4 < sizeof bar; k++)
            strcat(bar, t->bar);
        char b[40];
        snprintf(b, sizeof b, "%s%s", est, B(tr->age_bytes[i]));
        mt_lines_add(l, A_NORMAL, "  %-5s %11s %s", age_names[i], b, bar);
    }
    mt_lines_add(l, A_NORMAL, "  peak live   %s%s", est, B(tr->peak_live_bytes));
}

/* Live bytes at the segment's checkpoints: history from before memtop
 * attached (minutes back), as one line.  Early in a process's life the
 * windows share their oldest point: each moment is said once, and none
 * that reads "0s ago" (that is "now"). */
static void add_checkpoints(mt_app *a, mt_text_lines *l, const mt_shm_trace *tr,
                            const mt_snapshot *s)
{
    char line[MT_LINE_BYTES] = "  earlier:", ago[32], said[32] = "";
    const char *est = mt_est_mark(mt_view_sample_rate(&a->src.view));
    size_t k = strlen(line);
    for (int i = MT_CKPTS - 1; i >= 0; i--) {
        uint64_t at = s->slot.ckpt_ns[i];
        if (!at || at > s->slot.t_ns || k >= sizeof line)
            continue;
        uint64_t secs = (s->slot.t_ns - at) / 1000000000ull;
        mt_fmt_duration(secs, ago, sizeof ago);
        if (!secs || strcmp(ago, said) == 0)
            continue;
        snprintf(said, sizeof said, "%s", ago);
        k += (size_t)snprintf(line + k, sizeof line - k, " %s ago %s%s,", ago, est,
                              B(tr->ckpt_live_bytes[i]));
    }
    if (k < sizeof line)
        snprintf(line + k, sizeof line - k, " now %s%s", est, B(tr->live_bytes));
    mt_lines_add_wrapped(l, A_NORMAL, 4, "%s", line);
}

/* The row's live bytes at the last refreshes: the trace's, or for a group
 * the sum of its members'. */
static void add_history(mt_app *a, mt_text_lines *l, const mt_table_row *r)
{
    const mt_theme *t = &a->theme;
    double vals[HISTORY_MAX];
    uint64_t ts[HISTORY_MAX];
    size_t nrows;
    const mt_table_row *rows = mt_table_rows(a->table, &nrows);
    size_t n = mt_app_group(a) == MT_GROUP_TRACE
                   ? mt_table_history(a->table, r->trace_id, vals, ts, HISTORY_MAX)
                   : mt_table_row_history(a->table, (size_t)(r - rows), vals, ts, HISTORY_MAX);
    mt_lines_add(l, t->title,
                 a->src.replay ? "Live bytes at the cursor's last positions (%zu samples)"
                               : "Live bytes since memtop attached (%zu samples)",
                 n);
    if (n < 2) {
        mt_lines_add(l, t->dim, "  (a graph appears after a few refreshes)");
        return;
    }
    char lines[MT_GRAPH_MAX_H][MT_GRAPH_LINE_BYTES];
    mt_graph_style st = {t->utf8, COLS - 14 < 200 ? COLS - 14 : 200, 3, -1};
    double max = mt_graph_render(vals, n, &st, lines);
    char top[40];
    snprintf(top, sizeof top, "%s%s", mt_est_mark(mt_view_sample_rate(&a->src.view)),
             B((uint64_t)max));
    for (int r = 0; r < st.height; r++)
        mt_lines_add(l, t->graph, "%-11s %s", r == 0 ? top : "", lines[r]);
}

static void add_frame_lines(mt_app *a, mt_text_lines *l, uint32_t id, unsigned idx, uint64_t addr)
{
    const mt_theme *t = &a->theme;
    mt_frame f[MT_MAX_CHAIN];
    bool final = true;
    unsigned n = mt_symworker_frames(a->names.w, addr, id, f, MT_MAX_CHAIN, &final);
    for (unsigned i = 0; i < n; i++) {
        char where[600];
        mt_frame_short(&f[i], where, sizeof where);
        const char *mod = f[i].module ? strrchr(f[i].module, '/') : NULL;
        mod = mod ? mod + 1 : f[i].module ? f[i].module : "?";
        attr_t at = !final ? t->dim : f[i].function ? A_NORMAL : t->warn;
        if (i == 0)
            mt_lines_add(l, at, "  #%-3u %s   [%s+0x%llx]%s", idx, where, mod,
                         (unsigned long long)f[i].offset, final ? "" : " resolving...");
        else /* the chain's frame before was inlined into this one */
            mt_lines_add(l, at, "        inlined into %s", where);
    }
}

/* A backtrace that ends in a named function no stack starts in was cut
 * (stack_start.h): said under it, once its outermost frame is symbolized. */
static void add_cut_note(mt_app *a, mt_text_lines *l, uint32_t id, uint64_t outermost)
{
    mt_frame f[MT_MAX_CHAIN];
    bool final = true;
    unsigned n = mt_symworker_frames(a->names.w, outermost, id, f, MT_MAX_CHAIN, &final);
    const char *fn = n ? f[n - 1].function : NULL; /* the machine frame's own function */
    if (!final || !fn || mt_stack_start(fn))
        return;
    mt_lines_add(l, a->theme.warn,
                 "  (the walk ended in %s, not at the program's or a thread's start: callers "
                 "without unwind tables or frame pointers are missing)",
                 fn);
}

static void add_backtrace(mt_app *a, mt_text_lines *l, uint32_t id)
{
    const mt_theme *t = &a->theme;
    unsigned n = 0;
    const uint64_t *frames = mt_defs_frames(&a->src.view.defs, id, &n);
    const mt_def_info *di = id < a->src.view.defs.count ? &a->src.view.defs.items[id] : NULL;
    mt_lines_add(l, t->title, "Backtrace of trace #%u, innermost first (%u frame%s%s)", id, n,
                 mt_plural(n),
                 di && (di->flags & MT_DEF_TRUNCATED) ? ", truncated at MEMTOP_DEPTH" : "");
    for (unsigned i = 0; frames && i < n; i++)
        add_frame_lines(a, l, id, i, frames[i]);
    if (frames && n && !(di && (di->flags & MT_DEF_TRUNCATED)))
        add_cut_note(a, l, id, frames[n - 1]);
}

static void build(mt_app *a, mt_text_lines *l)
{
    const mt_theme *t = &a->theme;
    l->count = 0;
    const mt_table_row *r = find_row(a);
    if (!r) {
        mt_lines_add(l, t->warn,
                     "This row is not in the table any more (filtered out, or no longer "
                     "allocating). Esc returns.");
        return;
    }
    const mt_snapshot *s = mt_app_snapshot(a);
    if (mt_app_group(a) == MT_GROUP_TRACE)
        mt_lines_add(l, t->value, "%s", r->label ? r->label : "?");
    else
        mt_lines_add(l, t->value,
                     "%s %s: %u trace%s; the backtrace and ages below are of its "
                     "largest, #%u",
                     mt_group_name(mt_app_group(a)), r->label ? r->label : "?", r->ntraces,
                     mt_plural(r->ntraces), r->trace_id);
    mt_lines_add(l, A_NORMAL, "%s", "");
    add_counters(a, l, r);
    add_leak(a, l, r);
    const mt_shm_trace *tr = find_trace(s, r->trace_id);
    if (tr)
        add_ages(a, l, tr, s);
    add_history(a, l, r);
    if (tr && mt_app_group(a) == MT_GROUP_TRACE)
        add_checkpoints(a, l, tr, s);
    add_backtrace(a, l, r->trace_id);
}

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    build(a, &a->page);
    mt_lines_draw(&a->theme, &a->page, y, h, &self->first);
}

static mt_key_result key(mt_app *a, mt_panel *self, int ch)
{
    long page = LINES / 2;
    switch (ch) {
    case 27:
    case KEY_LEFT:
    case KEY_BACKSPACE:
    case '\n':
    case '\r':
    case KEY_ENTER:
        return MT_KEY_CLOSE;
    case KEY_UP:
    case 'k':
        self->first--;
        break;
    case KEY_DOWN:
    case 'j':
        self->first++;
        break;
    case KEY_PPAGE:
        self->first -= page;
        break;
    case KEY_NPAGE:
        self->first += page;
        break;
    case KEY_HOME:
        self->first = 0;
        break;
    case KEY_END:
        self->first = MT_LINES_MAX;
        break;
    default:
        return MT_KEY_UNHANDLED;
    }
    a->dirty = true;
    return MT_KEY_HANDLED;
}

static const mt_fkey fkeys[] = {
    {"Esc", "Back"},  {"F1", "Help"},  {"F2", "Base"}, {"F5", "Pause"},
    {"F7", "Export"}, {"F10", "Quit"}, {NULL, NULL},
};

const mt_panel_class mt_detail_class = {"detail", true, draw, key, fkeys};
