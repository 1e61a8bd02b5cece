/* row_labels.c -- location texts told apart by their callers (see
 * row_labels.h). */
#include "row_labels.h"

#include <stdlib.h>
#include <string.h>

/* Row r's location alone, owned (NULL when out of memory). */
static char *location_of(const mt_view *v, const mt_locator *loc, const mt_row *r,
                         mt_caller_row *out)
{
    char where[1024] = "(no frames)";
    out->id = r->t->id;
    out->frames = mt_defs_frames(&v->defs, r->t->id, &out->n);
    if (!out->frames)
        out->n = 0;
    if (r->t->id == 0 && !out->n)
        strcpy(where, "(overflow)");
    else if (out->n) {
        mt_frame fr;
        mt_locator at = mt_locator_at(loc, r->t->id);
        mt_trace_location(&at, out->frames, out->n, &fr);
        mt_frame_short(&fr, where, sizeof where);
    }
    return strdup(where);
}

int mt_row_labels_make(mt_row_labels *l, const mt_view *v, const mt_locator *loc,
                       const mt_row *rows, size_t n)
{
    l->loc = loc;
    l->n = 0;
    l->rows = calloc(n ? n : 1, sizeof *l->rows);
    if (!l->rows)
        return -1;
    for (; l->n < n; l->n++) {
        char *text = location_of(v, loc, &rows[l->n], &l->rows[l->n]);
        if (!text) {
            mt_row_labels_free(l);
            return -1;
        }
        l->rows[l->n].label = text;
    }
    mt_caller_labels(loc, l->rows, l->n); /* out of memory: the labels without callers */
    return 0;
}

void mt_row_labels_free(mt_row_labels *l)
{
    for (size_t i = 0; i < l->n; i++)
        free((char *)l->rows[i].label);
    free(l->rows);
    l->rows = NULL;
    l->n = 0;
}

char *mt_row_label(const mt_row_labels *l, size_t i, char *buf, size_t size)
{
    return mt_caller_label_join(l->loc, &l->rows[i], false, buf, size);
}
