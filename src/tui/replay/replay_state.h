/* replay_state.h -- the state of a recording at one point: per-trace
 * counters, live blocks by (trace, birth ms), process-wide figures.
 *
 * Why: applying events is the whole replay; snapshots for the reports
 * (replay_snap.c) and checkpoints for seeking backwards (replay_ckpt.c)
 * are both views of this state.  Every event carries the accounting the
 * target did (trace charged, size, temporary), so applying is adding.
 *
 * Applying is filtered by time: a pass applies the events with
 * lo < t <= hi (see replay.c), which makes re-reading a stretch of the
 * file idempotent.  Definitions and modules only raise counts (max). */
#ifndef MEMTOP_REPLAY_STATE_H
#define MEMTOP_REPLAY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_reader.h"
#include "replay_live.h"
#include "replay_weights.h"

/* Per-trace counters; live = alloc - free. */
typedef struct mt_rtrace {
    uint64_t alloc_count, alloc_bytes;
    uint64_t free_count, free_bytes;
    uint64_t temp_count, temp_bytes;
    uint64_t peak_live_bytes;
} mt_rtrace;

typedef struct mt_rscalars {
    uint64_t t_ns;     /* newest event time applied */
    uint64_t events;   /* allocation and free events applied */
    uint64_t ndefs;    /* definitions visible */
    uint64_t nmodules; /* modules visible */
    uint64_t ntotals;  /* periodic totals applied (the publish count) */
    int64_t live_bytes, live_count;
    uint64_t peak_live_bytes, peak_t_ns;  /* replayed, process-wide */
    uint64_t missed_free_count;           /* frees flagged MISSED */
    uint64_t lost_events;                 /* from LOST records */
    uint64_t lost_why[MT_DAT_LOST_WHY_N]; /* the same by cause (dat_reader.h) */
    uint64_t culled_blocks;               /* culled recording: blocks counted in CULLED */
    uint64_t written_early, young;        /* the newest CULLED record's figures */
    mt_dat_totals last_totals;            /* the newest totals applied */
    uint64_t last_totals_t;
    bool have_totals;
    uint64_t totals_peak; /* highest peak_live_bytes of the totals applied */
    bool ended;           /* the END record was applied */
    uint32_t end_reason;
    uint32_t set_kind;    /* the state set being applied, 0 = none */
    uint64_t sample_rate; /* PROCESS: > 0 if the events are samples (their weights:
                           * sample_weight.h), 0 exact */
} mt_rscalars;

typedef struct mt_rstate {
    mt_rtrace *traces; /* [s.ndefs] */
    size_t traces_cap;
    mt_rlive live;
    mt_rscalars s;
    mt_rweights weights; /* a sampled file's weights per size: a cache, not state */
} mt_rstate;

/* Which events a pass applies: lo < t <= hi (no lower bound without lo). */
typedef struct mt_rfilter {
    bool has_lo;
    uint64_t lo, hi;
} mt_rfilter;

void mt_rstate_init(mt_rstate *st);
void mt_rstate_free(mt_rstate *st);

/* Apply one event if the filter lets it through.  -1 when out of memory. */
int mt_rstate_apply(mt_rstate *st, const mt_dat_event *ev, const mt_rfilter *f);

/* The same for an allocation or a free (kind MT_DAT_ALLOC or MT_DAT_FREE)
 * given by its fields: what a batch of them is kept as. */
int mt_rstate_apply_ev(mt_rstate *st, mt_dat_kind kind, uint64_t t_ns, const mt_dat_ev *e,
                       const mt_rfilter *f);

/* The allocations and frees b[0..n) (as mt_dat_next_batch gives them),
 * each as mt_rstate_apply_ev, the live group of each fetched into the
 * cache a few events before it is added to.  -1 when out of memory. */
int mt_rstate_apply_batch(mt_rstate *st, const mt_dat_hev *b, size_t n, const mt_rfilter *f);

/* Events with e->deferred set (mt_dat_defer_blocks) change the counters
 * but not the live groups: the blocks of their frame still live when its
 * deferral ends are added then, by this (-1 when out of memory), the
 * group of each prefetched a few blocks before it is added to.  The
 * groups are exact wherever the reader's mt_dat_flush_blocks was called. */
int mt_rstate_add_blocks(mt_rstate *st, const mt_dat_block *b, size_t n);

/* A TOTALS at t_ns prunes the negative groups it finds (the frees of
 * dropped allocations), which needs exact groups: true when it could drop
 * one.  The groups that lack a frame's deferred blocks (still live, so
 * each only adds) have every negative count the exact ones have, so false
 * says the prune drops nothing with or without them: the reader's
 * mt_dat_flush_blocks, a walk of its whole block table, can wait. */
bool mt_rstate_prune_needs_exact(const mt_rstate *st, uint64_t t_ns);

/* A hint: the allocation or free e is applied soon; the slot of its live
 * group is fetched into the cache (nothing changes).  Always inline, as
 * mt_rlive_prefetch: a copy out of line has no side effect, and GCC drops
 * the calls to it. */
static inline __attribute__((always_inline)) void mt_rstate_prefetch(const mt_rstate *st,
                                                                     const mt_dat_ev *e)
{
    if (!e->deferred)
        mt_rlive_prefetch(&st->live, e->trace, e->birth_ms);
}

/* Bytes a copy of the state takes (for the checkpoint budget). */
size_t mt_rstate_bytes(const mt_rstate *st);

#endif
