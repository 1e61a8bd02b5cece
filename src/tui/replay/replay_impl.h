/* replay_impl.h -- the inside of an mt_replay, shared by replay.c (open,
 * seek), replay_open.c (the first pass) and replay_snap.c (filling a
 * view).  Nothing else includes it. */
#ifndef MEMTOP_REPLAY_IMPL_H
#define MEMTOP_REPLAY_IMPL_H

#include "dat_reader.h"
#include "replay.h"
#include "replay_ckpt.h"
#include "replay_state.h"
#include "replay_silence.h"
#include "replay_timeline.h"

/* How far past the cursor's time a pass reads: events of one thread reach
 * the file at most a second after those of another (docs/recording-format.md,
 * EVENTS), so after a TOTALS record this much later than the cursor, no
 * event of the cursor's range can follow.  A forward step therefore reads
 * up to about two seconds of the recording past the cursor. */
#define MT_REPLAY_WINDOW_NS 1000000000ull
/* A culled recording writes a long-lived block's allocation up to its
 * threshold + MT_DAT_CULL_LATE_NS after the allocation (dat_format.h). */
static inline uint64_t mt_replay_window_ns(const mt_dat_process *p)
{
    if (p->record_mode != MT_DAT_MODE_CULLED)
        return MT_REPLAY_WINDOW_NS;
    return MT_REPLAY_WINDOW_NS + MT_DAT_CULL_LATE_NS + p->cull_ms * 1000000u;
}

struct mt_replay {
    char path[4096];
    mt_dat_reader *rd;
    struct mt_dat_pipe *pipe; /* the first pass's (replay_open.c), else NULL */
    mt_dat_process proc;
    mt_defs defs;
    mt_modules mods;
    mt_rstate st;
    mt_rckpts ckpts;
    mt_rtimeline tl;
    mt_rsilence silence; /* where the target did not run (replay_silence.h) */
    mt_dat_event ev;
    mt_rtrace *final; /* the FINAL state set's counters [final_n], or NULL */
    uint64_t final_n;
    bool final_complete;
    /* The FINAL state set's TOTALS: in a sampled recording, the exact
     * counts of allocations and frees at its end (fields 2-4). */
    mt_dat_totals final_totals;
    bool final_totals_seen;
    bool initial_complete; /* the INITIAL state set was read to its STATE_END */
    /* The target's own peak (TOTALS peak_live_bytes, a lifetime high-water
     * mark): in the first TOTALS read, the highest, and the first TOTALS
     * that showed the highest. */
    uint64_t tpeak_first, tpeak, tpeak_t;
    bool tpeak_seen;
    bool at_end;       /* the state holds every event */
    uint64_t cursor;   /* the state holds every event with t <= cursor */
    mt_dat_pos resume; /* every event before it is in the state */
    mt_replay_info info;
};

/* The first pass over the whole file (replay_open.c). */
mt_errc mt_replay_read_all(mt_replay *r, mt_err *err);
/* The next event into r->ev, with the time the replay gives it: never at
 * or before the recording's start for an allocation or a free (see
 * replay_open.c).  Every pass reads through it. */
mt_errc mt_replay_next(mt_replay *r, mt_err *err);

/* The rest of an EVENTS2 record is read MT_REPLAY_BATCH events per call
 * (mt_dat_next_batch) and applied by mt_replay_apply_batch: each given the
 * replay's time (as mt_replay_next does, in b), then applied if f lets it
 * through, the live group of the event a few ahead prefetched; with
 * marks (the first pass) the silence buckets of their times marked;
 * *allocs (if not NULL) the allocations among them.  MT_E_NOMEM when out
 * of memory. */
#define MT_REPLAY_BATCH 256u
mt_errc mt_replay_apply_batch(mt_replay *r, mt_dat_hev *b, size_t n, const mt_rfilter *f,
                              bool marks, size_t *allocs, mt_err *err);

/* Fill out with r's state at the cursor (replay_snap.c). */
mt_errc mt_replay_fill(const mt_replay *r, mt_view *out, mt_err *err);

#endif
