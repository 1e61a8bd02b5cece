/* table_panel.c -- the main screen: one row per trace (or function, file,
 * module), the columns of columns.h, and the keys that move, sort, group,
 * search and open the detail view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "caller_labels.h"
#include "columns.h"
#include "draw.h"
#include "format.h"
#include "table_keys.h"

static void draw_heading(mt_app *a, int y)
{
    const mt_theme *t = &a->theme;
    bool delta = mt_table_has_baseline(a->table);
    mt_draw_fill(y, 0, COLS, t->heading);
    int x = 0;
    for (int c = 0; c < MT_COLS; c++) {
        const mt_column *col = &mt_columns[c];
        char h[32];
        /* "~LIVE": the columns are estimates when sampled (the exact
         * process totals are in the header), "~TEMP%" a share of two;
         * LEAK, a score, has no room for the mark */
        mt_column_heading(col->heading, col->width, mt_view_sample_rate(&a->src.view) != 0,
                          delta && col->has_delta ? t->delta : NULL, h, sizeof h);
        attr_t at = col->sort == a->ui.sort ? t->heading | A_BOLD | A_UNDERLINE : t->heading;
        mt_draw_right(t, y, x + col->width, col->width, at, h);
        x += col->width + 1;
    }
    char loc[96];
    snprintf(loc, sizeof loc, " %s",
             a->ui.group == MT_GROUP_TRACE ? "LOCATION (innermost frame that is not plumbing)"
                                           : mt_group_name(a->ui.group));
    for (char *p = loc; *p; p++)
        if (*p >= 'a' && *p <= 'z' && a->ui.group != MT_GROUP_TRACE)
            *p = (char)(*p - 'a' + 'A');
    mt_draw_text(t, y, x, COLS - x, t->heading, loc);
}

/* The callers of a row on screen, from the background symbolizer. */
static unsigned worker_callers(void *ctx, const mt_caller_row *r, char (*out)[MT_CALLER_MAX],
                               unsigned max)
{
    mt_names *names = ctx;
    return mt_symworker_callers(names->w, r->id, r->frames, r->n, out, max);
}

/* A label with callers still wider than `width`: its head (the location
 * the rows share, before the first arrow) cut, with the theme's ellipsis,
 * so that the callers that tell the rows apart stay whole ("make_l~ <-
 * ... <- start_a": with --ascii, whose arrows are wider, the end would
 * have been cut: "make_label <- ... <- sta~" twice).  Left as it is when
 * the callers alone do not fit. */
static void fit_head(const mt_theme *t, char *buf, size_t n, int width)
{
    char *tail = strstr(buf, mt_caller_arrow(t->utf8));
    int room = tail ? width - mt_text_width(tail) - mt_text_width(t->ellipsis) : 0;
    if (room < 1)
        return;
    char head[1024];
    size_t keep = 0; /* bytes of the head that fit in room columns (whole characters) */
    for (size_t i = 1; buf + i <= tail && i < sizeof head; i++) {
        if (buf + i < tail && (buf[i] & 0xc0) == 0x80)
            continue; /* inside a character */
        memcpy(head, buf, i);
        head[i] = '\0';
        if (mt_text_width(head) > room)
            break;
        keep = i;
    }
    char out[1024];
    snprintf(out, sizeof out, "%.*s%s%s", (int)keep, buf, t->ellipsis, tail);
    snprintf(buf, n, "%s", out);
}

/* The row's LOCATION, for `width` columns; c: its callers' depth among the
 * rows on screen (shown_callers), or NULL.  Callers that would be cut lose
 * their frames' file:line first, then every caller but the one that tells
 * the row apart, then the head of the shared location: at 80 columns rows
 * sharing a location read alike ("dictAddRaw (redis-check-r…" five times). */
static void row_location(mt_app *a, const mt_table_row *r, const mt_caller_row *c, int width,
                         char *buf, size_t n)
{
    if (c && c->depth) {
        mt_caller_label_join_by(worker_callers, &a->names, c, a->theme.utf8, buf, n);
        if (mt_text_width(buf) > width)
            mt_caller_label_compact(buf);
        if (mt_text_width(buf) > width) /* the caller that tells it apart, alone */
            mt_caller_label_teller_by(worker_callers, &a->names, c, a->theme.utf8, buf, n);
        if (mt_text_width(buf) > width)
            fit_head(&a->theme, buf, n, width);
    } else if (a->ui.group == MT_GROUP_TRACE || r->ntraces <= 1)
        snprintf(buf, n, "%s", r->label ? r->label : "?");
    else
        snprintf(buf, n, "%s  (%u trace%s)", r->label ? r->label : "?", r->ntraces,
                 mt_plural(r->ntraces));
}

static void draw_row(mt_app *a, int y, const mt_table_row *r, const mt_caller_row *c, bool selected)
{
    const mt_theme *t = &a->theme;
    bool delta = mt_table_has_baseline(a->table);
    attr_t base = selected ? t->selected : A_NORMAL;
    mt_draw_fill(y, 0, COLS, base);
    int x = 0;
    for (int c = 0; c < MT_COLS; c++) {
        char buf[48];
        mt_column_text(c, r, delta, a->ui.rates_known && !a->ui.stale.ended, buf, sizeof buf);
        attr_t at = base;
        if (!selected && c == MT_COL_LEAK && r->leak.score >= 60)
            at = t->bad;
        else if (!selected && c == MT_COL_GROWTH && r->growth_bps > 0.5)
            at = t->warn;
        mt_draw_right(t, y, x + mt_columns[c].width, mt_columns[c].width, at, buf);
        x += mt_columns[c].width + 1;
    }
    char loc[1024];
    row_location(a, r, c, COLS - x - 1, loc, sizeof loc);
    mt_draw_text(t, y, x + 1, COLS - x - 1, base, loc);
}

/* The rows on screen (rows[first..first+count)) that share a location with
 * another row on screen, told apart by their callers (caller_labels.h),
 * into c[0..count); NULL when grouped or out of memory (the labels are
 * then the plain ones).  Callers come from the background symbolizer and
 * are refined as it answers; only colliding rows ask for them. */
static mt_caller_row *shown_callers(mt_app *a, const mt_table_row *rows, long first, int count)
{
    if (a->ui.group != MT_GROUP_TRACE || count <= 1)
        return NULL;
    mt_caller_row *c = calloc((size_t)count, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < count; i++) {
        const mt_table_row *r = &rows[first + i];
        c[i].id = r->trace_id;
        c[i].label = r->label ? r->label : "?";
        c[i].frames = mt_defs_frames(a->names.defs, r->trace_id, &c[i].n);
        if (!c[i].frames)
            c[i].n = 0;
    }
    if (mt_caller_labels_by(worker_callers, &a->names, c, (size_t)count) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

/* With a baseline, the rows are the traces that changed since it: a trace
 * that did not is hidden, not missing. */
static void draw_empty(mt_app *a, int y)
{
    const mt_theme *t = &a->theme;
    bool base = mt_table_has_baseline(a->table);
    if (a->ui.filter[0])
        mt_draw_fmt(t, y, 2, COLS - 2, t->dim, "no rows match \"%s\"%s (Esc in search clears it)",
                    a->ui.filter, base ? " among those that changed since the baseline (b)" : "");
    else if (base && mt_app_snapshot(a))
        mt_draw_text(t, y, 2, COLS - 2, t->dim,
                     "nothing allocated or freed since the baseline (b clears it)");
    else if (mt_app_snapshot(a))
        mt_draw_text(t, y, 2, COLS - 2, t->dim, "no allocations seen yet");
    else
        mt_draw_text(t, y, 2, COLS - 2, t->dim, "waiting for data...");
}

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(a->table, &n);
    draw_heading(a, y);
    int visible = h - 1;
    mt_panel_clamp(self, (long)n, visible);
    /* Names for the rows on screen first: asked last, they are the newest
     * requests, which the symbolizer serves first. */
    for (int i = visible - 1; i >= 0; i--)
        if (self->first + i < (long)n)
            mt_names_prioritize(&a->names, rows[self->first + i].trace_id);
    long shown = (long)n - self->first < visible ? (long)n - self->first : visible;
    mt_caller_row *callers = shown > 0 ? shown_callers(a, rows, self->first, (int)shown) : NULL;
    for (int i = 0; i < visible; i++) {
        long k = self->first + i;
        mt_draw_fill(y + 1 + i, 0, COLS, A_NORMAL);
        if (k < (long)n) {
            mt_table_leak(a->table, (size_t)k); /* computed for the rows shown only */
            draw_row(a, y + 1 + i, &rows[k], callers ? &callers[i] : NULL, k == self->sel);
        }
    }
    free(callers);
    if (!n && visible > 0)
        draw_empty(a, y + 1);
}

/* No fkeys: the function bar is the key table's (keymap.c). */
const mt_panel_class mt_table_class = {"table", true, draw, mt_table_key, NULL};
