/* export_csv.c -- one CSV row per trace (RFC 4180 quoting), frames joined
 * as "module+0xoffset;..." innermost first, then the trace's location
 * ("function (file:line)", see mt_trace_location).  With --top, the rows
 * left out are summed into a last row without id, located "(other: N
 * traces)"; the overflow trace (id 0) is located "(overflow)". */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "rows.h"

static const char header[] =
    "id,live_bytes,live_count,alloc_count,alloc_bytes,free_count,free_bytes,temporary_count,"
    "temporary_bytes,peak_live_bytes,growth_bytes_per_s,frames,location\n";

/* Text inside a quoted field: quotes doubled, control characters '?'. */
static void put_quoted(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
    }
}

/* Machine frames as module+offset (no symbolization needed). */
static void put_frame(FILE *f, const mt_modules *mods, uint32_t trace, uint64_t addr)
{
    mt_frame fr;
    mt_locate(&(mt_locator){mods, NULL, NULL, NULL, NULL, trace}, addr, &fr);
    if (!fr.module) {
        fprintf(f, "0x%" PRIx64, fr.address);
        return;
    }
    put_quoted(f, fr.module);
    fprintf(f, "+0x%" PRIx64, fr.offset);
}

static void put_location(FILE *f, const mt_locator *loc, const uint64_t *frames, unsigned n)
{
    if (!frames || !n)
        return;
    mt_frame fr;
    char where[1024];
    mt_trace_location(loc, frames, n, &fr);
    put_quoted(f, mt_frame_short(&fr, where, sizeof where));
}

/* A row; folded > 0: the "(other)" row of that many traces. */
static void put_row(FILE *f, const mt_export_src *x, const mt_row *r, size_t folded)
{
    const mt_shm_trace *t = r->t;
    char growth[64];
    mt_fmt_fixed(r->growth, 3, growth, sizeof growth);
    if (!folded)
        fprintf(f, "%u", t->id);
    fprintf(f,
            ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
            ",%" PRIu64 ",%" PRIu64 ",%s,\"",
            t->live_bytes, t->live_count, t->alloc_count, t->alloc_bytes, t->free_count,
            t->free_bytes, t->temporary_count, t->temporary_bytes, t->peak_live_bytes, growth);
    unsigned n = 0;
    const uint64_t *frames = folded ? NULL : mt_defs_frames(&x->v->defs, t->id, &n);
    mt_locator at = mt_locator_at(x->loc, t->id);
    for (unsigned i = 0; frames && i < n; i++) {
        if (i)
            fputc(';', f);
        put_frame(f, x->loc->mods, t->id, frames[i]);
    }
    fputs("\",\"", f);
    if (folded)
        fprintf(f, "(other: %zu trace%s)", folded, mt_plural(folded));
    else if (t->id == 0 && !n)
        fputs("(overflow)", f);
    else
        put_location(f, &at, frames, n);
    fputs("\"\n", f);
}

void mt_export_csv(FILE *f, const mt_export_src *x)
{
    fputs(header, f);
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, x->sort, &n);
    mt_rows_cut cut;
    mt_rows_cut_at(rows, n, x->top, &cut);
    for (size_t i = 0; i < cut.kept; i++)
        put_row(f, x, &rows[i], 0);
    if (cut.folded)
        put_row(f, x, &cut.other_row, cut.folded);
    free(rows);
}
