/* export_text.c -- a snapshot for people: the batch header, then every
 * trace with all of its frames. */
#include <inttypes.h>
#include <stdlib.h>

#include "export.h"
#include "format.h"
#include "report.h"
#include "rows.h"

static void put_trace(FILE *f, const mt_export_src *x, const mt_row *r, size_t rank)
{
    const mt_shm_trace *t = r->t;
    char a[32], b[32], c[32], d[32];
    fprintf(f, "\n#%zu trace %u: live %s in %" PRIu64 " blocks, peak %s, growth %s\n", rank, t->id,
            mt_fmt_bytes(t->live_bytes, a, sizeof a), t->live_count,
            mt_fmt_bytes(t->peak_live_bytes, b, sizeof b), mt_fmt_rate(r->growth, c, sizeof c));
    fprintf(f, "   allocs %" PRIu64 " (%s), frees %" PRIu64 ", temporary %" PRIu64 "\n",
            t->alloc_count, mt_fmt_bytes(t->alloc_bytes, d, sizeof d), t->free_count,
            t->temporary_count);
    unsigned n;
    const uint64_t *frames = mt_defs_frames(&x->v->defs, t->id, &n);
    for (unsigned i = 0; frames && i < n; i++) {
        mt_frame fr;
        char where[640];
        mt_locate(x->loc, frames[i], &fr);
        fprintf(f, "   %2u  0x%016" PRIx64 "  %s\n", i, fr.address,
                mt_frame_short(&fr, where, sizeof where));
    }
}

void mt_export_text(FILE *f, const mt_export_src *x)
{
    mt_report_header(f, x->v, x->state);
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, x->sort, &n);
    fprintf(f, "\n%zu traces, sorted by %s\n", n, mt_sort_name(x->sort));
    for (size_t i = 0; i < n; i++)
        put_trace(f, x, &rows[i], i + 1);
    free(rows);
}
