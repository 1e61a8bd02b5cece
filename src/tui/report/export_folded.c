/* export_folded.c -- collapsed stacks ("folded") for flamegraph.pl,
 * inferno and speedscope: one line per trace with live bytes,
 * `outermost;...;innermost BYTES`, weighted by live bytes at the snapshot.
 *
 * Frames are source frames as every export shows them (mt_locate_all:
 * inlined functions are frames of their own), named by function, else
 * module+offset, else the address.  Names are sanitized so that a line
 * always parses: ';' becomes ':', whitespace and control characters '_'.
 * The overflow trace (id 0) is the one-frame stack "(overflow)"; with
 * --top, the traces left out are summed into the stack "(other)". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "rows.h"

static void put_name(FILE *f, const char *s)
{
    if (!s || !*s) {
        fputc('?', f);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        fputc(c == ';' ? ':' : c <= ' ' || c == 0x7f ? '_' : c, f);
    }
}

static void put_frame(FILE *f, const mt_frame *fr)
{
    if (fr->function) {
        put_name(f, fr->function);
    } else if (fr->module) {
        put_name(f, mt_path_base(fr->module));
        fprintf(f, "+0x%" PRIx64, fr->offset);
    } else {
        fprintf(f, "0x%" PRIx64, fr->address);
    }
}

/* The source frames of one machine frame, outermost first. */
static void put_address(FILE *f, const mt_locator *loc, uint64_t addr, bool *first)
{
    mt_frame chain[MT_MAX_CHAIN];
    unsigned n = mt_locate_all(loc, addr, chain, MT_MAX_CHAIN);
    while (n-- > 0) {
        if (!*first)
            fputc(';', f);
        *first = false;
        put_frame(f, &chain[n]);
    }
}

static void put_trace(FILE *f, const mt_export_src *x, const mt_shm_trace *t)
{
    unsigned n;
    const uint64_t *frames = mt_defs_frames(&x->v->defs, t->id, &n);
    bool first = true;
    mt_locator at = mt_locator_at(x->loc, t->id);
    for (unsigned i = n; frames && i-- > 0;)
        put_address(f, &at, frames[i], &first);
    if (first)
        fputs(t->id == 0 && !n ? "(overflow)" : "[unknown]", f);
    fprintf(f, " %" PRIu64 "\n", t->live_bytes);
}

void mt_export_folded(FILE *f, const mt_export_src *x)
{
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, MT_SORT_LIVE, &n);
    mt_rows_cut cut;
    mt_rows_cut_at(rows, n, x->top, &cut);
    for (size_t i = 0; i < cut.kept; i++)
        if (rows[i].t->live_bytes)
            put_trace(f, x, rows[i].t);
    if (cut.other.live_bytes)
        fprintf(f, "(other) %" PRIu64 "\n", cut.other.live_bytes);
    free(rows);
}
