/* replay_weights.c -- the per-size table of a sampled replay's weights
 * (see replay_weights.h). */
#include "replay_weights.h"

#include <stdlib.h>
#include <string.h>

void mt_rweights_free(mt_rweights *w)
{
    free(w->slot);
    memset(w, 0, sizeof *w);
}

const mt_rweight_slot *mt_rweights_fill(mt_rweights *w, uint64_t size, uint64_t rate)
{
    if (!w->slot && !w->failed) {
        w->slot = calloc(MT_RWEIGHTS_SLOTS, sizeof *w->slot);
        w->failed = !w->slot;
        w->rate = rate;
    }
    if (!w->slot)
        return NULL;
    if (w->rate != rate) { /* another file's rate: every slot is stale */
        memset(w->slot, 0, MT_RWEIGHTS_SLOTS * sizeof *w->slot);
        w->rate = rate;
    }
    mt_rweight_slot *s = &w->slot[size & (MT_RWEIGHTS_SLOTS - 1)];
    s->size = size;
    s->sc = mt_sample_scale_of(size, rate);
    return s;
}
