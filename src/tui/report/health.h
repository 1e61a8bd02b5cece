/* health.h -- whether a snapshot's data is exact, and if not, why: one
 * predicate for the viewer's Data field, --batch, every export's health
 * and --strict. */
#ifndef MEMTOP_HEALTH_H
#define MEMTOP_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "export.h"
#include "view.h"

/* What makes the data inexact, as one line, or "" when it is exact:
 * "sampled 1/512 KiB" first for a sampled target (its figures are
 * estimates, mt_view_sample_rate), then the allocators memtop cannot see ("NOT exact: statically
 * linked jemalloc
 * (_rjem_) in x not hooked"), then the health counters ("3 unknown
 * frees"), a full trace table or segment (blocks counted in the overflow
 * trace, not their own), and what a recording lost (rec, may be NULL).
 * Cut to n bytes; never "" (exact) for data that is not, if n >= 2. */
void mt_health_line(const mt_view *v, const mt_export_rec *rec, char *buf, size_t n);

/* The longest line mt_health_line makes (a longer one is cut). */
#define MT_HEALTH_LINE_MAX 2048 /* the exports' buffers */

static inline bool mt_health_exact(const mt_view *v, const mt_export_rec *rec)
{
    char line[2]; /* "" or the line's first character */
    mt_health_line(v, rec, line, sizeof line);
    return line[0] == '\0';
}

#endif
