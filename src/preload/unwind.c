/* unwind.c -- memtop's own x86-64 stack walker.
 *
 * Every tracked allocation needs its backtrace, and libunwind's fastest
 * path still costs ~100 instructions a frame.  Almost every frame at a
 * call site has one simple shape (unwind_rule.h), so the walk here is: look
 * the return address up in a process-wide rule cache (unwind_cache.h),
 * compute the CFA, load the caller's return address (and rbp if it was
 * saved), and fold the call site into the backtrace hash as it goes
 * (hash.h), so that no second pass over the frames is needed.
 *
 * The walk starts here: rbp, rsp and rip are captured at one point by
 * inline asm, in this noinline function, and unwound with the row of that
 * exact rip; memtop's own frames are recognised by address (mt_g.self_lo
 * .. self_hi, found by backtrace.c; libunwind's path skips them the same
 * way) and left out.  A trace is truncated when one more frame exists
 * beyond depth (as libunwind's path decides it).  Call sites
 * are return address - 1, and so are the addresses whose rules are looked
 * up: the row of the call instruction is the frame's state during the
 * call, even when the call is the last instruction of its function.
 *
 * Memory: only the current thread's stack is read, and only at addresses
 * derived from a CFA that passed the checks of step(): above the previous
 * rsp, 8-aligned, at most FRAME_MAX above it and STACK_MAX above the start.
 * A frame that fails them, or whose rule is not a simple one, ends the walk
 * with -1 and the caller hands the whole trace to libunwind, so a trace is
 * never worse than libunwind's.  An undefined return address (the
 * outermost frame) or one below ADDR_MIN (as libunwind) ends it normally.
 */
#include "unwind.h"

#include "hash.h"
#include "state.h"
#include "unwind_cache.h"
#include "unwind_fde.h"

#define FRAME_MAX MT_RULE_OFF_MAX /* one frame */
#define STACK_MAX (64ull << 20)   /* the whole walk */
#define OWN_FRAMES_MAX 16         /* memtop's frames above the hook */
#define ADDR_MIN 0x4000ull        /* a return address below: end of stack */
#define ADDR_END (1ull << 47)     /* user-space code is below */

typedef struct walk {
    const _Atomic uint64_t *table;
    uint64_t rsp, rbp;
    uint64_t limit; /* the CFA must stay below */
} walk;

enum { STEP_OK, STEP_END, STEP_FALLBACK };

/* Steps out of the frame whose code address (for the rule) is key, with
 * x = key * MT_UCACHE_MULT: on STEP_OK *ra is the caller's return address
 * and w holds its rsp and rbp.  The rsp of a walk is always 8-aligned: it
 * starts aligned, a rsp-based CFA offset is a multiple of 8 from 8 to
 * FRAME_MAX by construction (unwind_rule.h), and a rbp-based CFA must be
 * 8 to FRAME_MAX bytes above rsp in steps of 8 (the rotate turns a
 * misaligned or negative distance into a huge one). */
static inline int step(walk *w, uint64_t key, uint64_t x, bool is_return, uint64_t *ra)
{
    uint64_t rule, cfa;
    if (MT_UNLIKELY(!mt_ucache_usual(w->table, x, &rule))) {
        rule = mt_ucache_rule(key, is_return);
        if (!mt_rule_usual(rule))
            return rule == MT_RULE_END ? STEP_END : STEP_FALLBACK;
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
    if (MT_UNLIKELY(*ra - ADDR_MIN >= ADDR_END - ADDR_MIN))
        return *ra < ADDR_MIN ? STEP_END : STEP_FALLBACK;
    return STEP_OK;
}

static inline bool is_own(uint64_t pc)
{
    return pc >= mt_g.self_lo && pc < mt_g.self_hi;
}

/* Steps out of memtop's own frames, starting at the captured pc; *key is
 * then the first call site outside memtop. */
static bool skip_own(walk *w, uint64_t pc, uint64_t *key)
{
    uint64_t ra;
    bool is_return = false;
    for (unsigned i = 0; i < OWN_FRAMES_MAX; i++) {
        if (step(w, pc, pc * MT_UCACHE_MULT, is_return, &ra) != STEP_OK)
            return false;
        pc = ra - 1;
        is_return = true;
        if (!is_own(ra)) {
            *key = pc;
            return true;
        }
    }
    return false;
}

__attribute__((noinline)) int mt_unwind(uint64_t *frames, uint32_t depth, bool *truncated,
                                        uint64_t *hash)
{
    uint64_t rbp, rsp, pc;
    /* rbp first: an output register may be rbp itself when this function
     * does not use it as its frame pointer. */
    __asm__ volatile("mov %%rbp, %0\n\t"
                     "mov %%rsp, %1\n\t"
                     "lea 0(%%rip), %2"
                     : "=r"(rbp), "=r"(rsp), "=r"(pc));
    walk w = {mt_ucache_table, rsp, rbp, rsp + STACK_MAX};
    uint64_t key, ra;
    if (!w.table || !skip_own(&w, pc, &key))
        return -1;
    uint64_t h = MT_HASH_SEED, *f = frames, *end = frames + depth;
    for (;;) {
        uint64_t x = key * MT_UCACHE_MULT;
        *f++ = key;
        h = mt_hash_fold(h, x);
        int st = step(&w, key, x, true, &ra);
        if (MT_UNLIKELY(st != STEP_OK)) {
            if (st == STEP_FALLBACK)
                return -1;
            *truncated = false;
            break;
        }
        key = ra - 1;
        if (MT_UNLIKELY(f == end)) {
            *truncated = true;
            break;
        }
    }
    uint32_t n = (uint32_t)(f - frames);
    *hash = mt_hash_finish(h, n);
    return (int)n;
}

bool mt_unwind_init(void)
{
    return mt_fde_available() && mt_ucache_init();
}
