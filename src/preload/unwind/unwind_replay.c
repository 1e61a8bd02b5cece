/* unwind_replay.c -- the out-of-line parts of replaying (unwind_replay.h):
 * the rarely needed rbp check, and the empty walk. */
#include "unwind_replay.h"

const mt_walk_step mt_replay_none = {.cfa = MT_NO_CFA};

/* rbp matters if one of the steps computes its CFA from rbp before one
 * loads it.  The walk carries its own rbp through the replayed steps, so
 * where it goes on walking, its rbp is its own. */
bool mt_replay_rbp_live(const mt_past_walk *p, const mt_walk_step *o)
{
    for (const mt_walk_step *e = o + 1; e < p->end; e++) {
        if (e->rule & MT_RULE_CFA_RBP)
            return true;
        if (e->below)
            return false;
    }
    return p->last && mt_rule_usual(p->last->rule) && (p->last->rule & MT_RULE_CFA_RBP);
}
