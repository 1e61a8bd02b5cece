/* table_priv.h -- the table's state, shared by the files of src/tui/model
 * (table.c: lifetime and observation; table_build.c: building; table_rows.c:
 * one row's codes, figures and leak score; sort_rows.c: the sort;
 * leak_score.c). */
#ifndef MEMTOP_MODEL_TABLE_PRIV_H
#define MEMTOP_MODEL_TABLE_PRIV_H

#include "alloc_rates.h"
#include "baseline.h"
#include "group.h"
#include "history.h"
#include "table.h"

/* One group's sums while building (grouped builds only). */
typedef struct mt_group_acc {
    mt_shm_trace sum;   /* additive counters summed; id = the member with most live bytes */
    mt_base_fig base;   /* baseline figures summed */
    uint64_t best_live; /* live bytes of the member named by sum.id */
    double allocs_ps;
    uint32_t ntraces;
} mt_group_acc;

/* One row while building: its sort codes and where its figures come from.
 * The codes map the sort key and live bytes to unsigned integers whose
 * ascending order is the table's descending order, so that the rows sort by
 * (key, tie, id) ascending with a radix sort. */
typedef struct mt_sort_ent {
    uint64_t key, tie; /* codes of the sort key and of live bytes (mt_sort_code) */
    uint32_t id;       /* the row's trace_id */
    uint32_t src;      /* TRACE: index in snap->traces; grouped: index in acc (and label) */
} mt_sort_ent;

/* Sorts ents[0..n) by (key, tie, id) ascending, stably; tmp: room for n.
 * use_tie: false when the tie code equals the key code (sorted by live).
 * by_id: false when ents are in ascending id order already. */
void mt_sort_ents(mt_sort_ent *ents, mt_sort_ent *tmp, size_t n, bool use_tie, bool by_id);
/* The code of x for a descending order (-0 and +0 are one value). */
uint64_t mt_sort_code(double x);

struct mt_table {
    mt_history hist;
    mt_alloc_rates rates;
    mt_baseline base;
    mt_groups groups; /* grouped: the labels; TRACE: only fallback labels ("#id") */

    /* The last build; scratch reused from build to build. */
    mt_table_row *rows;
    mt_sort_ent *keys;   /* per row, in row order after the sort */
    uint8_t *leak_done;  /* per row: rows[i].leak is computed */
    const char **labels; /* TRACE: per source, the namer's label (NULL: none) */
    size_t nrows, cap_rows;
    const mt_snapshot *snap;         /* the last build's (for mt_table_leak) */
    mt_leak_plan plan_hist, plan_no; /* leak plans of that build: with / without history */
    mt_leak_trend *growth;           /* sorted by leak: trend per source */
    size_t growth_cap;
    mt_group_acc *acc; /* per group (grouped builds) */
    float *hsum;       /* per group: its members' history summed (MT_HISTORY_POINTS each) */
    size_t cap_groups;
    bool grouped; /* the last build merged traces (hsum holds the row histories) */
    bool rewinds; /* a replay: an older snapshot is the cursor moved back (mt_table_set_rewinds) */
};

/* table_rows.c: the sort codes of keys[0..k) (sorted by leak: t->growth
 * must have room for every source), then rows[0..k) from keys[0..k). */
void mt_table_codes(mt_table *t, const mt_snapshot *snap, mt_sort_key key, size_t k);
void mt_table_make_rows(mt_table *t, const mt_snapshot *snap, bool with_leak, size_t k);

#endif
