/* unwind_replay.h -- replaying the thread's previous walk instead of walking.
 *
 * After each of its steps, the walk (unwind_walk.c) asks replay_matches
 * whether it is now in a state the previous walk was in; if so, replay
 * takes the previous walk's later steps for its own for as long as the
 * words they read still hold the same values: a few independent loads and
 * compares a frame instead of the serial chain of a step (unwind_step.h).
 * unwind_memo.h gives the argument why the result is exactly the walk's
 * own, and why every word read is one the walk itself would read.
 * Inline: the walk's state stays in registers.
 */
#ifndef MT_UNWIND_REPLAY_H
#define MT_UNWIND_REPLAY_H

#include "unwind_step.h"

#include <stdbool.h>

#define MT_NO_CFA UINT64_MAX /* the cursor's sentinel (unwind_memo.h) */

/* The thread's previous walk as the current one sees it: its steps
 * [steps, end), *end the sentinel, last its END step or NULL if it stopped
 * at its depth.  One that may not be replayed has no steps. */
typedef struct mt_past_walk {
    const mt_walk_step *steps, *end, *last;
} mt_past_walk;

enum { REPLAY_WALK, REPLAY_END, REPLAY_TRUNC }; /* walk on; walk ended; depth reached */

/* The steps of a walk that may not be replayed: the sentinel alone. */
extern const mt_walk_step mt_replay_none;

/* The thread's previous walk, if a walk under rule cache generation gen,
 * with its CFAs limited to limit, may replay it; else no steps. */
static inline mt_past_walk mt_past_of(mt_walk_memo *m, uint64_t gen, uint64_t limit)
{
    const mt_walk_record *r = &m->rec[m->cur];
    if (!m->valid || r->gen != gen || r->max_cfa > limit)
        return (mt_past_walk){&mt_replay_none, &mt_replay_none, NULL};
    const mt_walk_step *steps = mt_walk_memo_steps(m, m->cur);
    return (mt_past_walk){steps, steps + r->nok, r->ended ? &r->last : NULL};
}

/* Whether rbp after the previous walk's step o matters to the steps a
 * replay from there can take (unwind_memo.h). */
bool mt_replay_rbp_live(const mt_past_walk *p, const mt_walk_step *o);

/* After the walk's step that gave return address ra, before that step is
 * stored at w->e: whether the previous walk was in the same state after
 * one of its steps, then w->o (the cursor).  CFAs grow strictly along both
 * walks, so the cursor only moves up; it stops at the sentinel.  Where the
 * walk rewrites the previous walk's record in place (unwind_memo.h), the
 * steps below w->e are this walk's own, whose CFAs are all below w->rsp:
 * the cursor passes over them. */
static inline bool replay_matches(walk *w, const mt_past_walk *p, uint64_t ra)
{
    const mt_walk_step *c = w->o;
    while (c->cfa < w->rsp)
        c++;
    w->o = c;
    return c->cfa == w->rsp && c->ra == ra && (c->rbp == w->rbp || !mt_replay_rbp_live(p, c));
}

/* Whether the words the previous walk's step e read still hold what it
 * read: the return address, and rbp if the step loaded it.  Each is the
 * word the walk's own step would read here (unwind_memo.h). */
static inline bool still_holds(const mt_walk_step *e)
{
    if (*(const uint64_t *)(uintptr_t)(e->cfa - 8) != e->ra)
        return false;
    uint64_t below = e->below;
    return !below || *(const uint64_t *)(uintptr_t)(e->cfa - below) == e->rbp;
}

/* The previous walk's step e, whose words changed (another caller at the
 * same place, e.g. another branch of the same parent): the walk's own step
 * out of the same frame from the same state has the same rule and CFA and
 * reads the same words, so it is taken with the values read now, without
 * looking the rule up.  False, with nothing done, when the new return
 * address would end the walk or is not sane: the walk's step decides. */
static inline bool take_changed(walk *w, const mt_walk_step *e)
{
    uint64_t ra = *(const uint64_t *)(uintptr_t)(e->cfa - 8);
    if (ra - ADDR_MIN >= ADDR_END - ADDR_MIN)
        return false;
    uint64_t below = e->below;
    if (below)
        w->rbp = *(const uint64_t *)(uintptr_t)(e->cfa - below);
    walk_record(w);
    w->e->cfa = e->cfa;
    w->e->ra = ra;
    w->e->rbp = w->rbp;
    w->e->rule = e->rule;
    w->e->below = e->below;
    w->e++;
    w->rsp = e->cfa;
    w->key = ra - 1;
    return true;
}

/* Takes the previous walk's steps [e, stop) while their words hold, each
 * copied to w->e (copy) or checked where it is (w->e == e, in place);
 * returns the first that did not hold, or stop. */
static inline __attribute__((always_inline)) const mt_walk_step *
replay_steps(walk *w, const mt_walk_step *e, const mt_walk_step *stop, bool copy)
{
    const mt_walk_step *e0 = e;
    for (; e < stop; e++) {
        uint64_t cfa = e->cfa, ra = e->ra, below = e->below;
        if (*(const uint64_t *)(uintptr_t)(cfa - 8) != ra)
            break;
        if (below) {
            if (*(const uint64_t *)(uintptr_t)(cfa - below) != e->rbp)
                break;
            w->rbp = e->rbp;
        }
        w->h = mt_hash_step(w->h, w->key); /* walk_record, counted below */
        if (copy)
            *w->e++ = *e;
        w->key = ra - 1;
    }
    w->nf += (uint32_t)(e - e0);
    if (!copy)
        w->e = (mt_walk_step *)(uintptr_t)e; /* the record's own steps */
    return e;
}

/* The walk is in the state of the previous walk after its step w->o:
 * replays the later steps in order while their words hold, takes the
 * first that changed with the new values (take_changed), and returns
 * REPLAY_WALK for the walk to go on from there (or from where the
 * previous walk stopped at its depth); REPLAY_END when the previous walk's
 * END step held too, and so ended this one (its frame recorded, the step
 * in *w->e); REPLAY_TRUNC when the walk reached its depth.
 *
 * The steps are taken as they are (copied, or left in place), rbp included: where the walk's rbp
 * differs from the previous walk's (it did not matter, mt_replay_rbp_live),
 * the copies carry the previous walk's value up to the step that loads
 * rbp, and there it matters to no step either (unwind_memo.h).  The walk
 * itself goes on with its own rbp, or the one last loaded. */
static inline int replay(walk *w, const mt_past_walk *p)
{
    const mt_walk_step *e = w->o + 1, *stop = p->end;
    uint32_t f0 = w->nf, left = w->depth - w->nf;
    if (left < (uint64_t)(stop - e))
        stop = e + left; /* the walk's depth comes first */
    /* In place at the same index, the steps are already where this walk's
     * go (unwind_memo.h): only their words are checked. */
    e = w->e == e ? replay_steps(w, e, stop, false) : replay_steps(w, e, stop, true);
    if (e != w->o + 1)
        w->rsp = e[-1].cfa;
    w->o = e;
    int res = REPLAY_WALK;
    if (w->nf == w->depth) {
        res = REPLAY_TRUNC;
    } else if (e < p->end) {
        if (take_changed(w, e) && w->nf == w->depth)
            res = REPLAY_TRUNC;
    } else if (p->last && (!mt_rule_usual(p->last->rule) || still_holds(p->last))) {
        walk_record(w);
        *w->e = *p->last;
        res = REPLAY_END;
    }
    w->copied += w->nf - f0;
    return res;
}

#endif
