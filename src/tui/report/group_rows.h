/* group_rows.h -- the traces of a snapshot summed per function, source file
 * or module of their location, for `--batch -g` (the viewer groups in its
 * table model, src/tui/model; the batch report has no model and locates
 * each trace here, synchronously). */
#ifndef MEMTOP_GROUP_ROWS_H
#define MEMTOP_GROUP_ROWS_H

#include <stddef.h>

#include "cli_options.h"
#include "location.h"
#include "memtop_ipc.h"
#include "shm_defs.h"

typedef struct mt_grouped {
    mt_shm_trace *sums; /* per group: its members summed (mt_trace_add); id: the member with
                           the most live bytes */
    char **labels;      /* per group: mt_frame_group_label of its members, owned */
    size_t n, cap;
} mt_grouped;

/* Groups the traces of snap (their frames in defs) that allocated by key g (not MT_GROUP_TRACE),
 * in order of first appearance.  0, or -1 when out of memory. */
int mt_grouped_build(mt_grouped *out, const mt_snapshot *snap, const mt_defs *defs,
                     const mt_locator *loc, mt_group_key g);
void mt_grouped_free(mt_grouped *g);
/* The label of the group whose sums are at t (an element of g->sums). */
const char *mt_grouped_label(const mt_grouped *g, const mt_shm_trace *t);

#endif
