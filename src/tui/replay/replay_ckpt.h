/* replay_ckpt.h -- checkpoints of the replay state, so that a time cursor
 * can move backwards without replaying the recording from its start.
 *
 * A checkpoint is a copy of the state (per-trace counters, live groups,
 * scalars) taken where the reader can restart (a frame boundary), holding
 * every event before that point.  The set is bounded: at most
 * MT_RCKPT_MAX checkpoints and MT_RCKPT_BUDGET bytes.  When either would
 * be exceeded, every other checkpoint is dropped and the spacing between
 * new ones doubles, so they keep covering the whole recording evenly.  The
 * first one (the start, empty) is always kept. */
#ifndef MEMTOP_REPLAY_CKPT_H
#define MEMTOP_REPLAY_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "dat_reader.h"
#include "replay_state.h"

#define MT_RCKPT_MAX 64
#define MT_RCKPT_BUDGET (64ull << 20)

typedef struct mt_rckpt {
    mt_dat_pos pos;
    mt_rscalars s;
    mt_rtrace *traces; /* [s.ndefs] */
    mt_rgroup *groups; /* [ngroups] */
    size_t ngroups;
    size_t bytes;
} mt_rckpt;

typedef struct mt_rckpts {
    mt_rckpt items[MT_RCKPT_MAX];
    size_t n;
    size_t bytes;
    uint64_t spacing_ns; /* minimum time between checkpoints */
} mt_rckpts;

void mt_rckpts_init(mt_rckpts *c, uint64_t spacing_ns);
void mt_rckpts_free(mt_rckpts *c);

/* Take a checkpoint of st at pos if it is due (spacing) and fits.
 * -1 when out of memory (the set is left as it was). */
int mt_rckpts_maybe_add(mt_rckpts *c, const mt_rstate *st, const mt_dat_pos *pos);

/* The newest checkpoint holding no event after t_ns (the first one if
 * none; NULL only when there are none). */
const mt_rckpt *mt_rckpts_find(const mt_rckpts *c, uint64_t t_ns);

/* The newest checkpoint at or before t_ns - min_age_ns that holds some
 * events, or NULL. */
const mt_rckpt *mt_rckpts_before(const mt_rckpts *c, uint64_t t_ns, uint64_t min_age_ns);

/* Put st back to the checkpoint.  -1 when out of memory. */
int mt_rckpt_restore(const mt_rckpt *k, mt_rstate *st);

#endif
