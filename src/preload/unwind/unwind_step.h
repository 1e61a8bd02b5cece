/* unwind_step.h -- the state of a walk, and one step: out of a frame, to its caller.
 *
 * A step looks the frame's code address up in the rule cache
 * (unwind_cache.h), computes the CFA, loads the caller's return address
 * (and rbp if it was saved), and notes what it did in the walk's record
 * (unwind_memo.h) for the thread's next walk.  unwind_walk.c repeats it;
 * unwind_replay.h stands in for it where the previous walk's steps hold.
 *
 * Memory: only the current thread's stack is read, and only at addresses
 * derived from a CFA that passed the checks of step(): above the previous
 * rsp, 8-aligned, at most FRAME_MAX above it and below the walk's limit
 * (STACK_MAX above its start).  A frame that fails them, or whose rule is
 * not a simple one, ends the walk with a fallback: the caller hands the
 * whole trace to libunwind, so a trace is never worse than libunwind's.
 * An undefined return address (the outermost frame) or one below ADDR_MIN
 * (as libunwind) ends it normally.
 */
#ifndef MT_UNWIND_STEP_H
#define MT_UNWIND_STEP_H

#include "core_hash.h"
#include "unwind_cache.h"
#include "unwind_memo.h"

#define FRAME_MAX MT_RULE_OFF_MAX /* one frame */
#define STACK_MAX (64ull << 20)   /* the whole walk */
#define ADDR_MIN 0x4000ull        /* a return address below: end of stack */
#define ADDR_END (1ull << 47)     /* user-space code is below */

/* A walk in progress.  Kept whole in registers by the compiler as long as
 * its address goes to inlined functions only. */
typedef struct walk {
    const _Atomic uint64_t *table;
    uint64_t rsp, rbp;
    uint64_t limit;        /* the CFA must stay below */
    uint64_t key;          /* the next frame (call site), not yet recorded */
    uint64_t h;            /* the hash of the frames recorded (core_hash.h) */
    uint32_t nf, depth;    /* frames recorded (their call sites are in the record); at most */
    mt_walk_step *e;       /* this walk's record: the next step's place */
    const mt_walk_step *o; /* cursor into the previous walk (unwind_replay.h) */
    uint32_t copied;       /* frames recorded by replays */
    bool inplace;          /* the record is the previous walk's, rewritten (unwind_memo.h) */
} walk;

enum { STEP_OK, STEP_END, STEP_FALLBACK };

/* Counts w->key as the next frame and folds it into the hash.  The frame
 * itself is not stored: it is the first frame or the return address - 1
 * of the step before it, which the walk's record keeps (mt_unwind_frames). */
static inline void walk_record(walk *w)
{
    w->nf++;
    w->h = mt_hash_step(w->h, w->key);
}

/* Steps out of the frame whose code address (for the rule) is w->key: on
 * STEP_OK *ra is the caller's return address and w holds its rsp and rbp.
 * *e is what the step did (unwind_memo.h).  The rsp of a walk is always
 * 8-aligned: it starts aligned, a rsp-based CFA offset is a multiple of 8
 * from 8 to FRAME_MAX by construction (unwind_rule.h), and a rbp-based CFA
 * must be 8 to FRAME_MAX bytes above rsp in steps of 8 (the rotate turns a
 * misaligned or negative distance into a huge one). */
static inline int step(walk *w, bool is_return, uint64_t *ra, mt_walk_step *e)
{
    uint64_t rule, cfa;
    if (MT_UNLIKELY(!mt_ucache_usual(w->table, w->key, &rule))) {
        rule = mt_ucache_rule(w->key, is_return);
        if (!mt_rule_usual(rule)) {
            e->cfa = 0;
            e->rule = (uint32_t)rule;
            e->below = 0;
            return rule == MT_RULE_END ? STEP_END : STEP_FALLBACK;
        }
    }
    if (rule & MT_RULE_CFA_RBP) {
        cfa = w->rbp + mt_rule_cfa_off(rule);
        uint64_t dist = cfa - w->rsp - 8;
        if (MT_UNLIKELY(((dist >> 3) | (dist << 61)) >= FRAME_MAX / 8))
            return STEP_FALLBACK;
    } else {
        cfa = w->rsp + mt_rule_cfa_off(rule);
    }
    if (MT_UNLIKELY(cfa > w->limit))
        return STEP_FALLBACK;
    uint64_t below = mt_rule_rbp_below(rule);
    *ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
    if (below)
        w->rbp = *(const uint64_t *)(uintptr_t)(cfa - below);
    w->rsp = cfa;
    e->cfa = cfa;
    e->ra = *ra;
    e->rbp = w->rbp;
    e->rule = (uint32_t)rule;
    e->below = (uint32_t)below;
    if (MT_UNLIKELY(*ra - ADDR_MIN >= ADDR_END - ADDR_MIN))
        return *ra < ADDR_MIN ? STEP_END : STEP_FALLBACK;
    return STEP_OK;
}

#endif
