/* leak_score.h -- leak suspicion of a trace (or of a group, on its summed
 * counters): 0..100 from persistence, magnitude and aging, defined exactly
 * in docs/leak-score.md.
 *
 *   growth    0..1  persistence: (segments where live bytes rose - segments
 *                   where they fell) / (segments + 2), over consecutive
 *                   disjoint time segments: up to 3 from the segment's
 *                   checkpoints and up to 8 from the viewer's own history
 *   rate      bytes retained per second over the whole observed window
 *                   (its first point to now; 0 when it shrank)
 *   magnitude 0..1  log10(1 + rate) / 9 (1 GB/s = 1)
 *   aging     0..1  share of live bytes that outlived 10 s (1..10 s: half)
 *   retention 0..1  1 - free_count / alloc_count: shown, not scored (a site
 *                   that churns temporaries and keeps some has ~0)
 *   score = 100 * growth * (0.3 + 0.5 * magnitude + 0.2 * aging)
 *
 * Why: sorting by live bytes or by one growth window flags big caches and
 * noisy churn; a leak is growth that persists, and the one that matters
 * keeps the most bytes per second. */
#ifndef MEMTOP_MODEL_LEAK_SCORE_H
#define MEMTOP_MODEL_LEAK_SCORE_H

#include "history.h"
#include "memtop_ipc.h"

typedef struct mt_leak_parts {
    double growth;    /* 0..1 sustained growth of live bytes (persistence) */
    double retention; /* 0..1 few frees relative to allocations (not scored) */
    double aging;     /* 0..1 live bytes that stay alive as they age */
    double score;     /* 0..100, the documented combination */
    double rate;      /* bytes retained per second over the observed window (>= 0) */
    double magnitude; /* 0..1 of rate */
} mt_leak_parts;

/* The trend of one trace from a plan's points: persistence and rate. */
typedef struct mt_leak_trend {
    double growth, rate;
} mt_leak_trend;

/* At most this many segments come from the viewer's history (its points are
 * thinned to fit), and a score starts from this many flat segments. */
#define MT_LEAK_HIST_SEGMENTS 8u
#define MT_LEAK_PRIOR 2.0

/* The score of tr (counters of one trace, or summed over a group) in the
 * snapshot slot; hist: its series of observed live bytes, or NULL. */
void mt_leak_compute(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_hist_view *hist,
                     mt_leak_parts *out);

/* Which points the growth part compares depends only on times (the slot's
 * checkpoint times and the history ring's times), never on a trace's values:
 * a plan lists them once for every trace scored against the same slot and
 * history times, so that scoring 100,000 traces does not redo it each time.
 * Scores are exactly those of mt_leak_compute. */
#define MT_LEAK_PLAN_MAX (MT_CKPTS + MT_LEAK_HIST_SEGMENTS + 2)
typedef struct mt_leak_plan {
    unsigned n;                   /* points, oldest first */
    int8_t src[MT_LEAK_PLAN_MAX]; /* >= 0: history ring position; MT_LEAK_NOW; else checkpoint
                                     MT_LEAK_CKPT(i) */
} mt_leak_plan;
#define MT_LEAK_NOW (-1)
#define MT_LEAK_CKPT(i) (-2 - (int)(i))

/* The plan for slot with hist's times (hist NULL: no history). */
void mt_leak_plan_make(mt_leak_plan *p, const mt_shm_slot *slot, const mt_hist_view *hist);
/* mt_leak_compute with the plan made for slot and a history with the same
 * times as hist (hist: NULL iff the plan was made without history). */
void mt_leak_apply(const mt_leak_plan *p, const mt_shm_slot *slot, const mt_shm_trace *tr,
                   const mt_hist_view *hist, mt_leak_parts *out);
/* Its trend alone (slot: the plan's); then the parts and score from it (the
 * same as mt_leak_apply). */
mt_leak_trend mt_leak_growth(const mt_leak_plan *p, const mt_shm_slot *slot, const mt_shm_trace *tr,
                             const mt_hist_view *hist);
void mt_leak_finish(mt_leak_trend trend, const mt_shm_slot *slot, const mt_shm_trace *tr,
                    mt_leak_parts *out);

typedef struct mt_table mt_table;

/* The leak score of one trace in snap (also used by `memtop --batch -s
 * leak`); t: the table whose history to use, or NULL. */
void mt_leak_score(const mt_shm_slot *slot, const mt_shm_trace *tr, const mt_table *t,
                   mt_leak_parts *out);

#endif
