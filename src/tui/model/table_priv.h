/* table_priv.h -- the table's state, shared by the files of src/tui/model
 * (table.c: lifetime and observation; table_build.c: rows; leak_score.c). */
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

/* One row while building: its sort key and where its figures come from. */
typedef struct mt_sort_ent {
    double key, live;
    uint32_t id;    /* the row's trace_id */
    uint32_t label; /* its label in groups */
    uint32_t src;   /* TRACE: index in snap->traces; grouped: index in acc */
    uint32_t row;   /* where the row was staged (before the sort) */
} mt_sort_ent;

struct mt_table {
    mt_history hist;
    mt_alloc_rates rates;
    mt_baseline base;
    mt_groups groups; /* labels of the last build */

    /* The last build; scratch reused from build to build. */
    mt_table_row *rows;
    mt_sort_ent *keys; /* per row, in row order after the sort */
    size_t nrows, cap_rows;
    mt_group_acc *acc; /* per group (grouped builds) */
    float *hsum;       /* per group: its members' history summed (MT_HISTORY_POINTS each) */
    size_t cap_groups;
    bool grouped; /* the last build merged traces (hsum holds the row histories) */
};

#endif
