/* export_tree.c -- the call tree of one snapshot (calltree.h) as JSON
 * (--export FILE.tree.json) and as text (--batch --tree).  Every trace of
 * the snapshot is in it, as in the flat JSON export, so the roots sum to
 * the same totals.  Names are function names (inlined functions nodes of
 * their own, "inlined": true), else module+offset.  Figures are exact
 * integers except growth_bytes_per_s and leak_score (a sampled target's
 * estimates: the JSON's "exact" false, the text's headings "~LIVE"...). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "calltree_path.h"
#include "export.h"
#include "format.h"
#include "health.h"
#include "json_escape.h"
#include "leak_score.h"
#include "rows.h"

static mt_ct_fig fig_of(const mt_shm_slot *slot, const mt_row *r)
{
    mt_leak_parts lp;
    mt_leak_score(slot, r->t, NULL, &lp);
    return (mt_ct_fig){
        .live_bytes = (double)r->t->live_bytes,
        .live_count = (double)r->t->live_count,
        .alloc_count = (double)r->t->alloc_count,
        .temporary_count = (double)r->t->temporary_count,
        .growth_bps = r->growth,
        .leak = lp.score,
    };
}

/* The tree of x's snapshot, or NULL (memory). */
static mt_calltree *tree_of(const mt_export_src *x)
{
    const mt_snapshot *snap = &x->v->snap;
    size_t n;
    mt_row *rows = mt_rows_build(snap, x->sort, &n);
    mt_calltree *ct = mt_calltree_new();
    mt_ct_pathbuf *pb = malloc(sizeof *pb);
    int rc = ct && pb && (rows || !n) ? 0 : -1;
    if (!rc)
        mt_calltree_begin(ct, x->reverse);
    for (size_t i = 0; !rc && i < n; i++) {
        unsigned nf;
        const uint64_t *frames = mt_defs_frames(&x->v->defs, rows[i].t->id, &nf);
        const mt_ct_frame *path;
        mt_locator at = mt_locator_at(x->loc, rows[i].t->id);
        unsigned len = mt_ct_path_make(pb, frames, frames ? nf : 0, mt_ct_locate_chain, &at,
                                       x->loc->skip, &path);
        mt_ct_frame overflow = {"(overflow)", false};
        if (!len && rows[i].t->id == 0)
            path = &overflow, len = 1; /* backtraces without a trace of their own */
        mt_ct_fig f = fig_of(&snap->slot, &rows[i]);
        rc = mt_calltree_add(ct, rows[i].t->id, path, len, &f);
    }
    if (!rc)
        rc = mt_calltree_finish(ct, x->sort, x->threshold);
    free(rows);
    free(pb);
    if (rc) {
        mt_calltree_free(ct);
        return NULL;
    }
    return ct;
}

/* A JSON number: exact integers as integers, else 3 decimals ('.' whatever
 * the locale). */
static void put_num(FILE *f, const char *sep, const char *key, double v, bool integer)
{
    char num[64];
    mt_fmt_fixed(v, integer ? 0 : 3, num, sizeof num);
    fprintf(f, "%s\"%s\": %s", sep, key, num);
}

static void put_fig(FILE *f, const mt_ct_fig *g, bool all)
{
    put_num(f, "", "live_bytes", g->live_bytes, true);
    put_num(f, ", ", "live_count", g->live_count, true);
    put_num(f, ", ", "alloc_count", g->alloc_count, true);
    put_num(f, ", ", "temporary_count", g->temporary_count, true);
    if (!all)
        return;
    put_num(f, ", ", "growth_bytes_per_s", g->growth_bps, false);
    put_num(f, ", ", "leak_score", g->leak, false);
}

static void put_nodes(FILE *f, const mt_calltree *ct, uint32_t first, unsigned indent)
{
    fputc('[', f);
    for (uint32_t i = first; i != MT_CT_NONE;) {
        const mt_ct_node *nd = mt_calltree_node(ct, i);
        fprintf(f, "\n%*s{\"name\": ", (int)indent, "");
        mt_json_string(f, mt_calltree_name(ct, nd));
        fprintf(f, ", \"inlined\": %s, \"other\": %s, \"traces\": %u, \"top_trace\": %u, ",
                nd->inlined ? "true" : "false", nd->other ? "true" : "false", nd->ntraces,
                nd->top_trace);
        put_fig(f, &nd->incl, true);
        fputs(", \"own\": {", f);
        put_fig(f, &nd->own, false);
        fputs("}, \"children\": ", f);
        put_nodes(f, ct, nd->first_child, indent + 1);
        fputc('}', f);
        i = nd->next_sibling;
        if (i != MT_CT_NONE)
            fputc(',', f);
    }
    fputc(']', f);
}

void mt_export_tree_json(FILE *f, const mt_export_src *x)
{
    mt_calltree *ct = tree_of(x);
    if (!ct) {
        fputs("{\"memtop_tree\": 1, \"error\": \"out of memory\"}\n", f);
        return;
    }
    const mt_shm_slot *s = &x->v->snap.slot;
    char why[2048];
    mt_health_line(x->v, x->rec, why, sizeof why);
    fprintf(f,
            "{\n\"memtop_tree\": 1,\n\"pid\": %d,\n\"publish_seq\": %" PRIu64
            ",\n\"direction\": \"%s\",\n\"sort\": \"%s\",\n",
            mt_segment_pid(&x->v->seg), s->publish_seq, x->reverse ? "bottom-up" : "top-down",
            mt_sort_name(x->sort));
    put_num(f, "", "threshold_bytes", x->threshold, true);
    fprintf(f, ",\n\"traces\": %zu,\n\"exact\": %s, \"not_exact\": ", (size_t)s->ntraces,
            why[0] ? "false" : "true");
    mt_json_string(f, why[0] ? why : NULL);
    fputs(",\n\"totals\": {", f);
    put_fig(f, mt_calltree_totals(ct), true);
    fputs("},\n\"roots\": ", f);
    put_nodes(f, ct, mt_calltree_first_root(ct), 1);
    fputs("\n}\n", f);
    mt_calltree_free(ct);
}

#define B(x) mt_fmt_bytes((uint64_t)fabs(x), (char[32]){0}, 32)

static void put_text(FILE *f, const mt_calltree *ct, uint32_t first)
{
    for (uint32_t i = first; i != MT_CT_NONE; i = mt_calltree_node(ct, i)->next_sibling) {
        const mt_ct_node *nd = mt_calltree_node(ct, i);
        char name[512];
        snprintf(name, sizeof name, "%s", mt_calltree_name(ct, nd));
        fprintf(f, "%10s %10s %9s %12s %5.1f  %*s%s%s\n", B(nd->incl.live_bytes),
                B(nd->own.live_bytes),
                mt_fmt_count((uint64_t)nd->incl.live_count, (char[32]){0}, 32),
                mt_fmt_rate(nd->incl.growth_bps, (char[32]){0}, 32), nd->incl.leak,
                (int)(2 * nd->depth), "", mt_fmt_sanitize(name), nd->inlined ? " [inlined]" : "");
        put_text(f, ct, nd->first_child);
    }
}

void mt_export_tree_text(FILE *f, const mt_export_src *x)
{
    mt_calltree *ct = tree_of(x);
    if (!ct) {
        fputs("\n(out of memory building the call tree)\n", f);
        return;
    }
    bool est = mt_view_sample_rate(x->v) != 0; /* every figure estimated, as in --batch */
    fprintf(f, "\n%10s %10s %9s %12s %5s  CALL TREE (%s, sorted by %s, folded under %s)\n",
            est ? "~LIVE" : "LIVE", est ? "~OWN" : "OWN", est ? "~BLOCKS" : "BLOCKS",
            est ? "~GROWTH" : "GROWTH", "LEAK", x->reverse ? "bottom-up" : "top-down",
            mt_sort_name(x->sort), B(x->threshold));
    put_text(f, ct, mt_calltree_first_root(ct));
    mt_calltree_free(ct);
}
