/* unwind_rule.h -- how to step out of one frame, packed into 29 bits.
 *
 * memtop's own unwinder (unwind_walk.c) handles the frames almost all x86-64
 * code has at its call sites: CFA = rsp or rbp + offset, return address at
 * CFA-8, rbp either unchanged or saved at CFA-k.  Such a rule is found once
 * per instruction address in the .eh_frame data (unwind_cfi.c) and then
 * kept in a cache (unwind_cache.c) whose entries are single 64-bit words:
 * the rule shares its word with a tag of the address, so it has to be
 * small.  The next frame is then:
 *   rsp' = CFA, rip' = *(CFA - 8), rbp' = k ? *(CFA - k) : rbp.
 *
 * Layout, chosen so that the walk decodes a rule in a few instructions:
 *   bit 0       CFA is based on rbp (else rsp)
 *   bits 3-20   CFA offset in bytes (a multiple of 8, 8 .. MT_RULE_OFF_MAX)
 *   bits 21-27  k / 8 (0: rbp unchanged)
 *   bit 28      special: not a rule of the shape above; bits 0-1 then say
 *               MT_RULE_END or MT_RULE_UNSUPPORTED
 * A usual rule is therefore in [8, 2^28): one compare tells "a usual rule"
 * from "a special one or none", and 0 never is a rule (an empty entry).
 */
#ifndef MT_UNWIND_RULE_H
#define MT_UNWIND_RULE_H

#include <stdbool.h>
#include <stdint.h>

#define MT_RULE_BITS 29
#define MT_RULE_MASK ((1ull << MT_RULE_BITS) - 1)
#define MT_RULE_SPECIAL (1ull << 28)
#define MT_RULE_CFA_RBP 1ull
#define MT_RULE_OFF_MASK 0x1ffff8ull
#define MT_RULE_OFF_MAX (1ull << 20) /* also the largest frame a walk accepts */
#define MT_RULE_RBP_SHIFT 21
#define MT_RULE_RBP_MAX (0x7full * 8)

/* The special rules. */
#define MT_RULE_END (MT_RULE_SPECIAL | 1)         /* return address undefined: outermost frame */
#define MT_RULE_UNSUPPORTED (MT_RULE_SPECIAL | 2) /* libunwind unwinds the whole trace */

/* The rule for a frame of the usual shape, or MT_RULE_UNSUPPORTED when an
 * offset is not a multiple of 8 or does not fit.  rbp_below_cfa: 0 if rbp
 * is unchanged, else k > 0 with rbp saved at CFA - k. */
static inline uint64_t mt_rule_pack(bool cfa_rbp, int64_t cfa_off, int64_t rbp_below_cfa)
{
    if (cfa_off <= 0 || (cfa_off & 7) || (uint64_t)cfa_off > MT_RULE_OFF_MAX)
        return MT_RULE_UNSUPPORTED;
    if (rbp_below_cfa < 0 || (rbp_below_cfa & 7) || rbp_below_cfa > (int64_t)MT_RULE_RBP_MAX)
        return MT_RULE_UNSUPPORTED;
    return (cfa_rbp ? MT_RULE_CFA_RBP : 0) | (uint64_t)cfa_off |
           ((uint64_t)rbp_below_cfa / 8) << MT_RULE_RBP_SHIFT;
}

/* A rule of the usual shape (not special, not empty)? */
static inline bool mt_rule_usual(uint64_t rule)
{
    return rule - 1 < MT_RULE_SPECIAL - 1;
}

static inline uint64_t mt_rule_cfa_off(uint64_t rule)
{
    return rule & MT_RULE_OFF_MASK;
}

/* k in bytes (rbp saved at CFA - k), 0 if rbp is unchanged. */
static inline uint64_t mt_rule_rbp_below(uint64_t rule)
{
    return (rule >> (MT_RULE_RBP_SHIFT - 3)) & (0x7full << 3);
}

#endif
