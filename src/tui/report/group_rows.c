/* group_rows.c -- traces summed per location key for the batch report (see
 * group_rows.h).  A linear search over the groups found so far would be
 * quadratic in the number of functions; the labels are hashed instead
 * (mt_groups, the table model's label hash). */
#include "group_rows.h"

#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "rows.h"

static int reserve(mt_grouped *g, size_t n)
{
    if (n <= g->cap)
        return 0;
    size_t want = g->cap ? g->cap * 2 : 64;
    mt_shm_trace *sums = realloc(g->sums, want * sizeof *sums);
    if (sums)
        g->sums = sums;
    char **labels = realloc(g->labels, want * sizeof *labels);
    if (labels)
        g->labels = labels;
    if (!sums || !labels)
        return -1;
    g->cap = want;
    return 0;
}

/* The label of trace tr under g: its location's function, file or module. */
static void label_of(const mt_defs *defs, const mt_locator *loc, const mt_shm_trace *tr,
                     mt_group_key g, char *buf, size_t size)
{
    unsigned nf;
    const uint64_t *frames = mt_defs_frames(defs, tr->id, &nf);
    mt_frame f;
    memset(&f, 0, sizeof f);
    mt_locator at = mt_locator_at(loc, tr->id);
    if (frames && nf)
        mt_trace_location(&at, frames, nf, &f);
    if (!frames || !nf)
        snprintf(buf, size, "%s", tr->id == 0 ? "(overflow)" : "(no frames)");
    else
        mt_frame_group_label(&f, g, buf, size);
}

static int add_member(mt_grouped *out, mt_groups *hash, const char *label, const mt_shm_trace *tr)
{
    int added;
    long gi = mt_groups_find_or_add(hash, label, &added);
    if (gi < 0 || reserve(out, (size_t)gi + 1) < 0)
        return -1;
    mt_shm_trace *s = &out->sums[gi];
    if (added) {
        out->labels[gi] = strdup(label);
        if (!out->labels[gi])
            return -1;
        memset(s, 0, sizeof *s);
        s->oldest_birth_ns = MT_UNKNOWN;
        s->id = tr->id;
        out->n = (size_t)gi + 1;
    } else if (tr->live_bytes > out->sums[gi].live_bytes) {
        s->id = tr->id; /* approximate: compared with the sum so far */
    }
    mt_trace_add(s, tr);
    return 0;
}

int mt_grouped_build(mt_grouped *out, const mt_snapshot *snap, const mt_defs *defs,
                     const mt_locator *loc, mt_group_key g)
{
    memset(out, 0, sizeof *out);
    mt_groups hash;
    mt_groups_init(&hash);
    int rc = mt_groups_begin(&hash);
    size_t count = snap->traces ? (size_t)snap->slot.ntraces : 0;
    char label[600];
    for (size_t i = 0; i < count && rc == 0; i++) {
        const mt_shm_trace *tr = &snap->traces[i];
        if (!tr->alloc_count)
            continue;
        label_of(defs, loc, tr, g, label, sizeof label);
        rc = add_member(out, &hash, label, tr);
    }
    mt_groups_free(&hash);
    if (rc != 0)
        mt_grouped_free(out);
    return rc;
}

void mt_grouped_free(mt_grouped *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->labels[i]);
    free(g->labels);
    free(g->sums);
    memset(g, 0, sizeof *g);
}

const char *mt_grouped_label(const mt_grouped *g, const mt_shm_trace *t)
{
    size_t i = (size_t)(t - g->sums);
    return i < g->n ? g->labels[i] : "?";
}
