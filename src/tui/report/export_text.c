/* export_text.c -- a snapshot for people: the batch header, then every
 * trace with all of its frames (with --top, the top ones and the rest
 * summed as "(other)"); a sampled target's figures marked "~". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "report.h"
#include "row_labels.h"
#include "rows.h"

/* A machine frame and, above it, the functions inlined into it. */
static void put_frame(FILE *f, const mt_locator *loc, unsigned i, uint64_t addr)
{
    mt_frame chain[MT_MAX_CHAIN];
    unsigned k = mt_locate_all(loc, addr, chain, MT_MAX_CHAIN);
    for (unsigned j = 0; j < k; j++) {
        char where[1024];
        mt_frame_short(&chain[j], where, sizeof where);
        if (j == 0)
            fprintf(f, "   %2u  0x%016" PRIx64 "  %s%s\n", i, addr, where,
                    chain[j].inlined ? "  (inlined)" : "");
        else
            fprintf(f, "       %18s  %s%s\n", "", where, chain[j].inlined ? "  (inlined)" : "");
    }
}

/* A trace's figures, each marked "~" when sampled (every per-trace figure
 * is then an estimate, docs/sampling.md). */
static void put_figures(FILE *f, const mt_export_src *x, const mt_row *r)
{
    const mt_shm_trace *t = r->t;
    const char *e = mt_est_mark(mt_view_sample_rate(x->v));
    char a[32], b[32], c[32], d[32];
    fprintf(f, "live %s%s in %s%" PRIu64 " blocks, peak %s%s, growth %s%s\n", e,
            mt_fmt_bytes(t->live_bytes, a, sizeof a), e, t->live_count, e,
            mt_fmt_bytes(t->peak_live_bytes, b, sizeof b), e, mt_fmt_rate(r->growth, c, sizeof c));
    fprintf(f, "   allocs %s%" PRIu64 " (%s%s), frees %s%" PRIu64 ", temporary %s%" PRIu64 "\n", e,
            t->alloc_count, e, mt_fmt_bytes(t->alloc_bytes, d, sizeof d), e, t->free_count, e,
            t->temporary_count);
}

/* A trace; folded > 0: the "(other)" row of that many traces, else
 * labels: the exported rows' locations and row: this one's. */
static void put_trace(FILE *f, const mt_export_src *x, const mt_row *r, size_t rank, size_t folded,
                      const mt_row_labels *labels, size_t row)
{
    const mt_shm_trace *t = r->t;
    char what[64];
    if (folded)
        snprintf(what, sizeof what, "(other: %zu trace%s)", folded, mt_plural(folded));
    else
        snprintf(what, sizeof what, "trace %u", t->id);
    fprintf(f, "\n#%zu %s: ", rank, what);
    put_figures(f, x, r);
    unsigned n = 0;
    const uint64_t *frames = folded ? NULL : mt_defs_frames(&x->v->defs, t->id, &n);
    if (!folded && row < labels->n && (n || t->id == 0)) {
        char where[1024];
        fprintf(f, "   location: %s\n",
                mt_fmt_sanitize(mt_row_label(labels, row, where, sizeof where)));
    }
    mt_locator at = mt_locator_at(x->loc, t->id);
    for (unsigned i = 0; frames && i < n; i++)
        put_frame(f, &at, i, frames[i]);
}

/* How a recording ended, for people (r->end_reason is a JSON word). */
static const char *ended(const mt_export_rec *r)
{
    if (!r->finalized)
        return "not finalized";
    if (!strcmp(r->end_reason, "stopped"))
        return "stopped while the process ran";
    if (!strcmp(r->end_reason, "exited"))
        return "ended with the process's exit";
    if (!strcmp(r->end_reason, "exec"))
        return "ended with the process's exec";
    if (!strcmp(r->end_reason, "write_error"))
        return "stopped by a write error";
    if (!strcmp(r->end_reason, "disk_full"))
        return "stopped: the disk was full";
    if (!strcmp(r->end_reason, "lease_expired"))
        return "stopped when the viewer that started it was gone";
    return "ended for an unknown reason";
}

/* A recording's snapshot: which file, when, and why it may not be exact. */
static void put_recording(FILE *f, const mt_export_rec *r)
{
    if (!r)
        return;
    char file[4096];
    snprintf(file, sizeof file, "%s", r->file);
    fprintf(f, "recording: %s at %.3fs of %.3fs%s; %s\n", mt_fmt_sanitize(file),
            (double)r->cursor_ns / 1e9, (double)r->duration_ns / 1e9,
            r->cursor_ns >= r->duration_ns ? " (the end)" : "", ended(r));
    if (!r->finalized)
        fputs("warning: the recording is not finalized (killed, or still being written): its end "
              "is its last complete frame\n",
              f);
    if (r->truncated)
        fprintf(f, "warning: truncated: %" PRIu64 " bytes after the last complete frame ignored\n",
                r->truncated_bytes);
    else if (r->invalid_tail)
        fprintf(f,
                "warning: %" PRIu64 " bytes after the recording's end are not a frame: ignored\n",
                r->truncated_bytes);
    if (r->events_dropped) {
        char d[MT_DAT_LOST_LINE_MAX];
        fprintf(f, "warning: recording inexact: %s\n",
                mt_dat_lost_line(r->events_dropped, r->dropped_why, d, sizeof d));
    }
    if (r->tick_order)
        fputs(MT_TICK_ORDER_NOTE "\n", f);
    if (r->inexact_start)
        fputs("warning: the recording's initial state is missing: blocks from before it are not "
              "counted\n",
              f);
    if (mt_export_rec_culled_inexact(r))
        fprintf(f,
                "warning: culled recording: live blocks younger than %" PRIu64
                " ms here that die young are not counted live (totals exact)\n",
                r->cull_ms);
}

void mt_export_text(FILE *f, const mt_export_src *x)
{
    mt_report_header(f, x->v, x->state, x->rec);
    put_recording(f, x->rec);
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, x->sort, &n);
    mt_rows_cut cut;
    mt_rows_cut_at(rows, n, x->top, &cut);
    const char *est = mt_view_sample_rate(x->v) ? " (~: estimated from samples)" : "";
    if (cut.folded)
        fprintf(f, "\n%zu trace%s, sorted by %s; the top %zu, then the other %zu summed%s\n", n,
                mt_plural(n), mt_sort_name(x->sort), cut.kept, cut.folded, est);
    else
        fprintf(f, "\n%zu trace%s, sorted by %s%s\n", n, mt_plural(n), mt_sort_name(x->sort), est);
    mt_row_labels labels = {0};
    if (mt_row_labels_make(&labels, x->v, x->loc, rows, cut.kept) != 0)
        fputs("(out of memory naming the traces)\n", f);
    for (size_t i = 0; i < cut.kept; i++)
        put_trace(f, x, &rows[i], i + 1, 0, &labels, i);
    if (cut.folded)
        put_trace(f, x, &cut.other_row, cut.kept + 1, cut.folded, &labels, 0);
    mt_row_labels_free(&labels);
    free(rows);
}
