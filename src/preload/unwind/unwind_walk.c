/* unwind_walk.c -- memtop's own x86-64 stack walker.
 *
 * Every tracked allocation needs its backtrace, and libunwind's fastest
 * path still costs ~100 instructions a frame.  Almost every frame at a
 * call site has one simple shape (unwind_rule.h), so the walk here is: look
 * the return address up in a process-wide rule cache (unwind_cache.h),
 * compute the CFA, load the caller's return address (and rbp if it was
 * saved), and fold the call site into the backtrace hash as it goes
 * (core_hash.h), so that no second pass over the frames is needed (one step:
 * unwind_step.h).  Where the thread's previous walk went through the same
 * state and the stack words it read are unchanged, its steps are replayed
 * instead (unwind_memo.h, unwind_replay.h): the outer frames of a thread's
 * allocations are mostly the same from one allocation to the next.
 *
 * Where the walk starts: at the caller of the allocation hook, whose
 * frame record (a frame pointer: hook_libc.c) the hook hands down, or, without
 * one, here: rbp, rsp and rip are captured at one point by inline asm, in
 * this noinline function, and unwound with the row of that exact rip.
 * Either way memtop's own frames are recognised by address (mt_g.self_lo
 * .. self_hi, found by unwind_backtrace.c; libunwind's path skips them the same
 * way) and stepped over.  A trace is truncated when one more frame exists
 * beyond depth (as libunwind's path decides it).  Call sites are return
 * address - 1, and so are the addresses whose rules are looked up: the row
 * of the call instruction is the frame's state during the call, even when
 * the call is the last instruction of its function.
 */
#include "unwind_walk.h"

#include "core_assert.h"
#include "core_state.h"
#include "unwind_fde.h"
#include "unwind_replay.h"

#define OWN_FRAMES_MAX 16 /* memtop's frames above the hook */

static inline bool is_own(uint64_t pc)
{
    return pc >= mt_g.self_lo && pc < mt_g.self_hi;
}

/* Steps out of memtop's own frames, from the frame w->key in the state of
 * w, until w->key is the first call site outside memtop.  is_return:
 * w->key is a return address - 1.  The steps are not recorded. */
static bool skip_own(walk *w, bool is_return)
{
    uint64_t ra;
    mt_walk_step scratch;
    for (unsigned i = 0; i < OWN_FRAMES_MAX; i++) {
        if (step(w, is_return, &ra, &scratch) != STEP_OK)
            return false;
        w->key = ra - 1;
        is_return = true;
        if (!is_own(ra))
            return true;
    }
    return false;
}

/* The walk's starting state: the hook's caller (from its frame record), or
 * this function's own state, then memtop's frames skipped either way. */
static __attribute__((always_inline)) inline bool walk_start(walk *w, const mt_hook_frame *start)
{
    if (MT_LIKELY(start != NULL)) {
        w->rsp = (uint64_t)(uintptr_t)(start + 1);
        w->rbp = start->rbp;
        w->limit = w->rsp + STACK_MAX;
        w->key = start->ret - 1;
        return !is_own(start->ret) || skip_own(w, true);
    }
    uint64_t rbp, rsp, pc;
    /* rbp first: an output register may be rbp itself when this function
     * does not use it as its frame pointer. */
    __asm__ volatile("mov %%rbp, %0\n\t"
                     "mov %%rsp, %1\n\t"
                     "lea 0(%%rip), %2"
                     : "=r"(rbp), "=r"(rsp), "=r"(pc));
    w->rsp = rsp;
    w->rbp = rbp;
    w->limit = rsp + STACK_MAX;
    w->key = pc;
    return skip_own(w, false);
}

/* Makes the walk just done, recorded up to w->e (its END step there if
 * ended) in the memo's other record or, if it rewrote the previous walk's
 * record in place, in that one, the thread's previous walk. */
static void commit(mt_walk_memo *memo, const walk *w, uint64_t gen, uint64_t first, bool ended)
{
    uint32_t k = w->inplace ? memo->cur : memo->cur ^ 1;
    mt_walk_record *r = &memo->rec[k];
    mt_walk_step *steps = mt_walk_memo_steps(memo, k);
    uint32_t nok = (uint32_t)(w->e - steps);
    r->gen = gen;
    r->first = first;
    r->nok = nok;
    r->ended = ended;
    r->max_cfa = nok ? w->e[-1].cfa : 0;
    if (ended) {
        r->last = *w->e;
        if (r->last.cfa > r->max_cfa)
            r->max_cfa = r->last.cfa;
    }
    steps[nok].cfa = MT_NO_CFA;
    memo->cur = k;
    memo->valid = 1;
    memo->copied = w->copied;
}

/* The walk's first match is at the same index in the previous walk's
 * record (its inner frames as many as this walk's so far, the usual case):
 * from here on the walk rewrites that record in place, so that the steps
 * it replays at the same index need no copy (unwind_memo.h).  Its steps so
 * far move there, over steps the cursor has passed. */
static void go_inplace(walk *w, const mt_walk_step *from)
{
    mt_walk_step *to = (mt_walk_step *)(uintptr_t)w->o - (w->e - from);
    for (const mt_walk_step *s = from; s < w->e; s++)
        *to++ = *s;
    w->e = to;
    w->inplace = true;
}

__attribute__((noinline)) int mt_unwind(const mt_hook_frame *start, mt_walk_memo *memo,
                                        uint32_t depth, bool *truncated, uint64_t *hash)
{
    walk w0;
    w0.table = mt_ucache_table;
    if (!w0.table || depth >= memo->nsteps || !walk_start(&w0, start))
        return -1;
    /* A copy whose address never leaves this function stays in registers
     * (skip_own, out of line, has w0's). */
    walk w = w0;
    uint64_t gen = mt_ucache_generation();
    mt_past_walk old = mt_past_of(memo, gen, w.limit);
    const mt_walk_step *other = mt_walk_memo_steps(memo, memo->cur ^ 1);
    w.o = old.steps;
    w.e = (mt_walk_step *)(uintptr_t)other;
    w.h = MT_HASH_SEED;
    w.nf = 0;
    w.depth = depth;
    uint64_t first = w.key;
    w.copied = 0;
    w.inplace = false;
    bool ended;
    for (;;) {
        uint64_t ra;
        mt_walk_step s; /* stored once the previous walk's step at w.e was compared */
        walk_record(&w);
        int st = step(&w, true, &ra, &s);
        if (MT_UNLIKELY(st != STEP_OK)) {
            if (st == STEP_FALLBACK) {
                memo->valid &= !w.inplace; /* its record is half rewritten */
                return -1;
            }
            *w.e = s;
            ended = true;
            break;
        }
        w.key = ra - 1;
        if (MT_UNLIKELY(w.nf == w.depth)) {
            *w.e++ = s;
            ended = false;
            break;
        }
        bool match = replay_matches(&w, &old, ra);
        if (match && !w.inplace && w.o - old.steps == w.e - other)
            go_inplace(&w, other);
        *w.e++ = s;
        if (MT_UNLIKELY(w.inplace && w.e > old.end))
            w.o = &mt_replay_none; /* past the previous walk's sentinel: nothing to match */
        if (match) {
            int r = replay(&w, &old);
            if (r != REPLAY_WALK) {
                ended = r == REPLAY_END;
                break;
            }
        }
    }
    uint32_t n = w.nf;
    *truncated = !ended;
    *hash = mt_hash_finish(w.h, n);
    commit(memo, &w, gen, first, ended);
    return (int)n;
}

/* Frame i > 0 is the call site its step out of frame i - 1 found, the
 * return address - 1 that step i - 1 of the record keeps (a replayed step
 * keeps the word it checked, a changed one the word read now). */
void mt_unwind_frames(const mt_walk_memo *memo, uint64_t *frames, uint32_t n)
{
    const mt_walk_record *r = &memo->rec[memo->cur];
    const mt_walk_step *steps = memo->steps + (size_t)memo->cur * memo->nsteps;
    MT_ASSERT(memo->valid && n <= r->nok + 1);
    if (n)
        frames[0] = r->first;
    for (uint32_t i = 1; i < n; i++)
        frames[i] = steps[i - 1].ra - 1;
}

bool mt_unwind_init(void)
{
    return mt_fde_available() && mt_ucache_init();
}
