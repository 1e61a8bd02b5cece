/* table.h -- the viewer's table model: from snapshots to the rows on screen,
 * without any drawing.  Rows per trace or per function/file/module group,
 * filtered, sorted, optionally as the change since a baseline, with each
 * row's rates and leak suspicion; plus each trace's recent history for the
 * detail view.
 *
 * Memory per trace id (MT_MODEL_MAX_ID at most): history 128 B + rate 4 B,
 * plus 48 B while a baseline is set; build() keeps ~155 B per trace of
 * scratch (row 120 B, sort entry 24 B, label pointer 8 B, a flag; 8 B more
 * once sorted by leak) and, when grouping, ~400 B per group (summed
 * counters, baseline, history, label and its hash): ~295 B per trace in all
 * at 100,000 traces (tests/model/bench_table.c).  TRACE labels are not
 * copied (see mt_namer).
 * No allocation per row: scratch grows and is reused.  Not thread-safe. */
#ifndef MEMTOP_MODEL_TABLE_H
#define MEMTOP_MODEL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_options.h"
#include "leak_score.h"
#include "memtop_ipc.h"

/* Strings that name a trace, supplied by the caller (the screen asks the background
 * symbolizer; until names arrive it returns "libfoo.so+0x1a2b").  Never NULL.
 * Lifetime: a returned string must stay valid and unchanged until name() is called
 * again for the same trace id (calls for other ids must not free or reuse it); the
 * table relies on it only until its next mt_table_build.  The table keeps the
 * MT_GROUP_TRACE strings as the rows' labels without copying them (build() asks for
 * each row's label last among its calls for that id); group labels are copied. */
typedef struct mt_namer {
    /* g = MT_GROUP_TRACE: the one-line location ("func (file.c:12)");
     * FUNCTION: the function name; FILE: the source file; MODULE: module base name. */
    const char *(*name)(void *ctx, uint32_t trace_id, mt_group_key g);
    void *ctx;
} mt_namer;

/* The temporary share of a row or a call-tree node: temporaries of its
 * allocations, 0..1 (0 without allocations; a baseline's deltas may make
 * either side negative). */
static inline double mt_temp_share(double temporary, double allocs)
{
    double share = allocs > 0 ? temporary / allocs : 0.0;
    return share > 1 ? 1 : share > 0 ? share : 0.0;
}

typedef struct mt_table_row {
    uint32_t trace_id; /* TRACE grouping: the trace; else the member with the most live bytes */
    uint32_t ntraces;  /* traces in this row */
    const char *label; /* the row's name, valid until the next build: TRACE grouping, the
                          namer's string itself; else a copy owned by the table */
    /* Figures: absolute, or with a baseline set, the change since the baseline (signed). */
    double live_bytes, live_count, alloc_count, alloc_bytes, free_count, temporary_count;
    double growth_bps;  /* live bytes per second (checkpoint windows, as mt_trace_growth) */
    double allocs_ps;   /* allocations per second between the previous and current snapshot; 0 if
                           unknown */
    double temp_share;  /* mt_temp_share: of the allocations (0..1) */
    mt_leak_parts leak; /* filled for every row only when sorted by MT_SORT_LEAK; otherwise
                           all zero until mt_table_leak(t, row) computes it (then it holds the
                           same values as that returns).  Read it through mt_table_leak. */
} mt_table_row;

mt_table *mt_table_new(void); /* NULL when out of memory */
void mt_table_free(mt_table *t);
/* Feed each new snapshot once (prev: the one before, or NULL).  Keeps per-trace history
 * (for leak score consistency and the detail graph) and the rates.  A snapshot older than
 * the last one observed (a new process image after exec) starts history and baseline
 * afresh; the same snapshot again is ignored.  Out of memory: history stops growing to new
 * trace ids (their score uses the checkpoints only). */
void mt_table_observe(mt_table *t, const mt_snapshot *snap, const mt_snapshot *prev);
/* A replay's table: its cursor moves back and forth in one process image, so an older
 * snapshot than the last restarts the history only; the baseline stays while the cursor is
 * at or after it, and is dropped when the cursor moves before it. */
void mt_table_set_rewinds(mt_table *t);
/* Baseline: figures become "since now" until cleared. */
int mt_table_set_baseline(mt_table *t, const mt_snapshot *snap); /* 0 or -1 (memory) */
void mt_table_clear_baseline(mt_table *t);
bool mt_table_has_baseline(const mt_table *t);
/* Whether filter (see filter.h) matches the function, file or module name
 * nm gives trace id: what TRACE grouping matches besides the row's label. */
bool mt_table_names_match(const mt_namer *nm, uint32_t id, const char *filter);
/* Build the rows of snap: grouped, filtered (case-insensitive substring of the row label,
 * and for TRACE grouping also of the FUNCTION, FILE and MODULE names; NULL/"" = all),
 * sorted descending by key (ties: live bytes, then trace id).  Traces with alloc_count 0
 * are not rows, nor (with a baseline) traces that neither allocated nor freed since it.
 * Returns the row count, or -1 when out of memory.
 * Sort keys: LIVE live_bytes, COUNT live_count, ALLOCS allocs_ps (the viewer's column; the
 * allocation count when no rate is known: a replay, the first snapshot), TEMPORARY
 * temporary_count, GROWTH growth_bps, LEAK leak.score.  With a baseline the figures (and
 * so the sort) are deltas; rates and the leak score stay those of the snapshot. */
long mt_table_build(mt_table *t, const mt_snapshot *snap, mt_group_key g, mt_sort_key key,
                    const char *filter, const mt_namer *namer);
const mt_table_row *mt_table_rows(const mt_table *t, size_t *n);
/* Whether the last build had per-row rates (a snapshot before it: never in
 * a replay); without them MT_SORT_ALLOCS sorts by the allocation count. */
bool mt_table_rates_known(const mt_table *t);
/* The leak score of row `row` of the last build (NULL when row >= the row count): when
 * sorting by MT_SORT_LEAK it was computed by build(); otherwise it is computed on first
 * use and cached in the row until the next build.  The same value either way.  Call it
 * after build(), before the next observe(), with the build's snapshot still alive
 * (the screen: for the rows it draws and the detail view). */
const mt_leak_parts *mt_table_leak(mt_table *t, size_t row);
/* Per-trace history for the detail graph: live bytes at the last <= max observed snapshots,
 * oldest first, with their times (ns since tracking start).  Returns how many.
 * live_bytes or t_ns may be NULL. */
size_t mt_table_history(const mt_table *t, uint32_t trace_id, double *live_bytes, uint64_t *t_ns,
                        size_t max);
/* The same for row `row` of the last build (a group: its members summed, as of that build;
 * call it after build(), before the next observe()). */
size_t mt_table_row_history(const mt_table *t, size_t row, double *live_bytes, uint64_t *t_ns,
                            size_t max);

/* The leak score of one trace in snap (also used by `memtop --batch -s leak`):
 * mt_leak_score(slot, tr, t may be NULL, out) is declared in leak_score.h. */

#endif
