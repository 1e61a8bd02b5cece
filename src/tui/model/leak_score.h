/* leak_score.h -- leak suspicion of a trace (or of a group, on its summed
 * counters): 0..100 from three parts, defined exactly in docs/leak-score.md.
 *
 *   growth    0..1  (segments where live bytes rose - segments where they
 *                   fell) / (segments + 2), over consecutive disjoint time
 *                   segments: up to 3 from the segment's checkpoints and up
 *                   to 8 from the viewer's own history
 *   retention 0..1  1 - free_count / alloc_count
 *   aging     0..1  share of live bytes that outlived 10 s (1..10 s: half)
 *   score = 100 * growth * (0.5 + 0.25 * retention + 0.25 * aging)
 *
 * Why: sorting by live bytes or by one growth window flags big caches and
 * noisy churn; a leak is growth that persists, by memory that is kept. */
#ifndef MEMTOP_MODEL_LEAK_SCORE_H
#define MEMTOP_MODEL_LEAK_SCORE_H

#include "history.h"
#include "memtop_ipc.h"

typedef struct mt_leak_parts {
    double growth;    /* 0..1 sustained growth of live bytes */
    double retention; /* 0..1 few frees relative to allocations */
    double aging;     /* 0..1 live bytes that stay alive as they age */
    double score;     /* 0..100, the documented combination */
} mt_leak_parts;

/* At most this many segments come from the viewer's history (its points are
 * thinned to fit), and a score starts from this many flat segments. */
#define MT_LEAK_HIST_SEGMENTS 8u
#define MT_LEAK_PRIOR 2.0

/* The score of tr (counters of one trace, or summed over a group) in the
 * snapshot slot; hist: its series of observed live bytes, or NULL. */
void mt_leak_compute(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_hist_view *hist,
                     mt_leak_parts *out);

typedef struct mt_table mt_table;

/* The leak score of one trace in snap (also used by `memtop --batch -s
 * leak`); t: the table whose history to use, or NULL. */
void mt_leak_score(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_table *t,
                   mt_leak_parts *out);

#endif
