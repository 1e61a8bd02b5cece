/* unwind_memo.h -- a thread's last stack walk, kept for the next one.
 *
 * Consecutive allocations of a thread mostly come from stacks that share
 * their outer part (main loop, request handler, ...), and walking those
 * outer frames again costs a serial chain of loads per frame (unwind_walk.c).
 * So each thread keeps the steps of its last walk, and the next walk
 * replays them instead of walking, as soon as it reaches a state the last
 * walk was in and the memory the last walk read from there on still holds
 * what it read then.  Why that gives exactly the walk's own result:
 *
 * A step (step() in unwind_step.h) takes the state (rip, rsp, rbp), the rule of
 * rip - 1 and the words it reads at CFA - 8 and CFA - k, and yields the
 * next state, or END, or a fallback.  It is a pure function of these:
 * the rule of an address is the same as long as the rule cache generation
 * (unwind_cache.h) is -- only dlclose changes what lives at an address,
 * and it bumps the generation (the rule cache's own window between the
 * unmapping and the flush, hook_dl.c, applies here alike).  So if the new walk reaches, after one
 * of its steps, the state the old walk had after its step i, and every word the old walk read in
 * its steps i+1, i+2, ... still holds the value read then, the new walk's next steps are the old
 * walk's steps i+1, i+2, ... with the same states and frames, up to the old walk's end (END, or
 * where it stopped at its depth: beyond that the new walk walks on).
 * rbp is part of the state only where it matters: the replayed steps
 * need the old rbp only if one of them computes its CFA from rbp before
 * one of them loads rbp (rbp is often no frame pointer, just a saved
 * register whose value differs from call to call); otherwise the new walk
 * carries its own rbp through them and has the old walk's exact state
 * again from the step that loads it on.  The copied steps keep the old
 * walk's rbp even there: a record's rbp is exact wherever it matters to a
 * later step, and a walk never takes rbp from a copied step it did not
 * load.  The limit of the whole walk (STACK_MAX above its start) differs
 * between walks: a walk replays only if the old walk's highest CFA is
 * within its own limit.  The frame size limit is relative to the state,
 * so it passes as it did.
 *
 * A step whose words changed is still the new walk's own step from the
 * same state, with the same rule and CFA: it is taken with the words read
 * now (take_changed in unwind_replay.h), and the walk goes on from there.
 *
 * Which memory is read: the old walk's words are checked in step order,
 * from step i+1 on, and the check stops at the first that differs.  Each
 * check reads the very word the new walk's own step would read at that
 * point (same state, same rule, so same CFA; within its limit), so a
 * replay reads nothing a plain walk would not: it never touches a stack
 * that is gone (a freed coroutine or alternate signal stack the old walk
 * ran on), whatever the old walk's addresses were.  A match needs equal
 * CFAs, and the new walk computes its CFAs from its own stack.
 *
 * Finding the state: CFAs grow strictly along a walk (each frame is above
 * the previous one), so one cursor into the old walk, moved up to the new
 * walk's CFA after each step, finds the candidate in O(1) amortised.
 *
 * Signal handlers: a walk runs inside a hook, with mt_tls_in_hook set
 * (core_thread_state.h), and an allocation from a signal handler on the same
 * thread then passes through without unwinding: no walk ever interrupts
 * another walk on the same thread, so the memo has one user at a time.
 * The new walk is written into the other record (or in place, below) and
 * becomes the last one only when it is complete; a walk that falls back
 * to libunwind before it wrote in place leaves the previous record as it
 * was, which stays a correct description of a past walk (everything above
 * holds for any past walk).
 *
 * In place: a walk writes its record into the memo's other record, except
 * when its first match is at the same index of the previous walk's record
 * (as many inner frames as that walk had: the usual case, one allocation
 * site after another under the same callers).  From there it rewrites the
 * previous walk's record itself (go_inplace in unwind_walk.c): its steps
 * so far move there, over steps the cursor has passed, and a replay at the
 * same index only checks the words, the steps being where they belong
 * already (no copy: ~6 instructions a frame fewer).  Every step it stores
 * is compared with the previous walk's steps first (the cursor stays at or
 * above the place it stores to: the steps below are its own, with CFAs
 * below its rsp, which the cursor passes over); a replay at another index
 * copies down (it reads above where it writes); once it stores past the
 * previous walk's end (its sentinel) nothing more is matched.  A walk
 * that falls back to libunwind after it began rewriting leaves no
 * previous walk (valid = 0).
 *
 * Memory: two records of depth + 1 steps of 32 bytes (2.2 KiB at the
 * default depth 32, 8.3 KiB at 128), right after the thread's mt_thread
 * in its mapping (core_thread_state.c: recycled with it, and cleared then).
 */
#ifndef MT_UNWIND_MEMO_H
#define MT_UNWIND_MEMO_H

#include "core_common.h"
#include "unwind_rule.h"

/* One step out of a frame.  rule is the rule used (unwind_rule.h): it
 * says whether the CFA came from rbp and where rbp was read (if it was);
 * below is that place, decoded once (the replay's loop reads it for every
 * frame). */
typedef struct mt_walk_step {
    uint64_t cfa;   /* the caller's rsp; 0 for an END by rule (nothing read) */
    uint64_t ra;    /* the word read at cfa - 8: the caller's return address */
    uint64_t rbp;   /* rbp after the step */
    uint32_t rule;  /* usual rule, or MT_RULE_END for an END by rule */
    uint32_t below; /* mt_rule_rbp_below(rule) */
} mt_walk_step;
_Static_assert(MT_RULE_BITS <= 32, "a rule fits a step's 32 bits");

/* A complete walk: its steps (mt_walk_memo_steps) [0, nok) found a caller
 * each, and step nok's cfa is UINT64_MAX (the cursor's sentinel).  ended:
 * the walk ended with `last`, a step that found no caller (END); else it
 * stopped at its depth. */
typedef struct mt_walk_record {
    uint64_t gen;     /* rule cache generation the walk ran under */
    uint64_t first;   /* its first frame (the others: mt_unwind_frames) */
    uint64_t max_cfa; /* the highest CFA whose words it read */
    uint32_t nok;
    uint32_t ended;
    mt_walk_step last;
} mt_walk_record;

/* A thread's memo: two records, the last walk and the one being made. */
typedef struct mt_walk_memo {
    uint32_t cur;    /* rec[cur] is the last walk, if valid */
    uint32_t valid;  /* 0 until a walk completed */
    uint32_t copied; /* frames the last walk's replays recorded (check mode counts) */
    uint32_t nsteps; /* steps per record: walks of depth < nsteps fit */
    mt_walk_record rec[2];
    mt_walk_step steps[]; /* rec[k]'s: steps + k * nsteps */
} mt_walk_memo;

/* The bytes of a memo for walks of up to depth frames. */
static inline size_t mt_walk_memo_bytes(uint32_t depth)
{
    return sizeof(mt_walk_memo) + 2 * ((size_t)depth + 1) * sizeof(mt_walk_step);
}

/* Sets up a zeroed memo of mt_walk_memo_bytes(depth). */
static inline void mt_walk_memo_init(mt_walk_memo *m, uint32_t depth)
{
    m->nsteps = depth + 1;
}

static inline mt_walk_step *mt_walk_memo_steps(mt_walk_memo *m, uint32_t k)
{
    return m->steps + (size_t)k * m->nsteps;
}

#endif
