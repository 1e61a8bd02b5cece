/* replay_weights.h -- the weights of a sampled recording's blocks, kept
 * per size while a replay applies them.
 *
 * Why: weighing a sampled block (sample_weight.h) takes an exp(), which
 * mt_expm1 sums as a chain of 16 divisions, and a division: ~80 ns, and a
 * replay weighs every allocation and every free (46 % of a sampled file's
 * pass, docs/performance.md).  That part depends on the size and the rate
 * alone, and programs allocate few distinct sizes, so it is kept in a
 * direct-mapped table by size; the rounding by the block's own key is done
 * each time.  The values are mt_sample_weigh's bit for bit (the same
 * functions compute them), so a replay still equals the target's figures
 * to the byte.  Without memory for the table, every block is weighed. */
#ifndef MEMTOP_REPLAY_WEIGHTS_H
#define MEMTOP_REPLAY_WEIGHTS_H

#include "sample_weight.h"

#include <stdint.h>

#define MT_RWEIGHTS_SLOTS 4096u /* a power of 2: 96 KiB */

typedef struct mt_rweight_slot {
    uint64_t size; /* 0: empty (a 0-byte block is never weighed here) */
    mt_sample_scale sc;
} mt_rweight_slot;

typedef struct mt_rweights {
    uint64_t rate;         /* the rate the slots were filled at */
    mt_rweight_slot *slot; /* [MT_RWEIGHTS_SLOTS], NULL until the first miss */
    int failed;            /* no memory for the table: weigh every block */
} mt_rweights;

void mt_rweights_free(mt_rweights *w);

/* The slot of size at rate, (re)filled: out of line, once per new size.
 * NULL without memory for the table. */
const mt_rweight_slot *mt_rweights_fill(mt_rweights *w, uint64_t size, uint64_t rate);

/* mt_sample_weigh(size, rate, key), rate > 0. */
static inline __attribute__((always_inline)) mt_sample_weight
mt_rweights_weigh(mt_rweights *w, uint64_t size, uint64_t rate, uint64_t key)
{
    if (!size)
        return (mt_sample_weight){0, 1}; /* as mt_sample_weigh */
    const mt_rweight_slot *s = w->slot ? &w->slot[size & (MT_RWEIGHTS_SLOTS - 1)] : NULL;
    if (!s || s->size != size || w->rate != rate)
        s = mt_rweights_fill(w, size, rate);
    if (!s)
        return mt_sample_weigh(size, rate, key);
    return mt_sample_round(s->sc, size, key);
}

#endif
