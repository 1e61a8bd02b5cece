/* history.h -- the viewer's own per-trace history: live bytes of every trace
 * at the last MT_HISTORY_POINTS observed snapshots.
 *
 * Why: the segment holds only three growth checkpoints per trace; the leak
 * score needs to know whether growth persists from snapshot to snapshot, and
 * the detail view draws a trace's recent graph.
 *
 * Layout: one ring of snapshot times shared by all traces, and per trace id
 * a row of MT_HISTORY_POINTS floats (same ring positions).  Cost per trace:
 * MT_HISTORY_POINTS * 4 = 128 bytes (12.8 MB at 100,000 traces).  A trace
 * first seen later reads 0 for the points before it existed (it had no live
 * bytes then).  Trace ids at or above MT_MODEL_MAX_ID have no history. */
#ifndef MEMTOP_MODEL_HISTORY_H
#define MEMTOP_MODEL_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtop_ipc.h"

#define MT_HISTORY_POINTS 32u
/* Per-id state is kept for ids below this (the defs region holds at most
 * MT_DEFS_CAP / sizeof(mt_shm_def) = 16 Mi definitions). */
#define MT_MODEL_MAX_ID (1u << 24)

typedef struct mt_history {
    float *v;      /* rows * MT_HISTORY_POINTS values; row = trace id */
    uint32_t rows; /* ids below this have a row */
    uint64_t t[MT_HISTORY_POINTS];
    unsigned head; /* ring position written next */
    unsigned n;    /* points held */
} mt_history;

/* One series (a trace's row, or a sum of rows) in ring order. */
typedef struct mt_hist_view {
    const float *v;    /* MT_HISTORY_POINTS values, ring order */
    const uint64_t *t; /* their times, ring order */
    unsigned first, n; /* ring position of the oldest point; points held */
} mt_hist_view;

void mt_history_init(mt_history *h);
void mt_history_free(mt_history *h);
/* Forget every point (rows stay allocated). */
void mt_history_reset(mt_history *h);
/* Make ids below rows addressable; 0 or -1 (memory). */
int mt_history_reserve(mt_history *h, uint32_t rows);
/* Appends snap as the newest point (ids without a row are skipped). */
void mt_history_add(mt_history *h, const mt_snapshot *snap);
/* Time of the newest point; 0 when empty. */
uint64_t mt_history_last_t(const mt_history *h);
/* The series of trace id; false when there is no point or no row. */
bool mt_history_view(const mt_history *h, uint32_t id, mt_hist_view *out);
/* A view of sum (MT_HISTORY_POINTS values in the same ring order). */
void mt_history_view_of(const mt_history *h, const float *sum, mt_hist_view *out);
/* sum[k] += row of id, for every ring position k. */
void mt_history_accumulate(const mt_history *h, uint32_t id, float *sum);
/* Copies the last <= max points of view, oldest first; returns how many. */
size_t mt_hist_view_copy(const mt_hist_view *v, double *live, uint64_t *t_ns, size_t max);

#endif
