/* unwind_cache.h -- process-wide cache: instruction address -> frame rule.
 *
 * A 2-way set-associative table of 8192 sets, 128 KiB (see unwind_cache.c
 * for why this size and why one word per entry).  An entry is one 64-bit
 * word.  The set is the address's low 13 bits: return addresses are well
 * spread over them, and the walk's serial chain of loads (unwind_walk.c) then
 * has no multiply in it.  The word is tag ^ rule, with tag = bit 63 |
 * address << 16: the address's bits 13..46 sit in bits 29..62 above the
 * rule's 29 bits (unwind_rule.h), and its set bits in bits 16..28, which
 * are the same for every address of the set.  So for a probe of the same
 * set, word ^ probe's tag is the rule if the addresses are equal, and has
 * a bit at or above 29 set otherwise: set and tag identify the address
 * exactly, and a hit can never return another address's rule.  Bit 63
 * makes an empty word (0) never look like a rule.  Addresses must be below
 * 2^47 (user-space code on x86-64 is).
 */
#ifndef MT_UNWIND_CACHE_H
#define MT_UNWIND_CACHE_H

#include "core_common.h"
#include "unwind_rule.h"

#include <stdbool.h>

#define MT_UCACHE_ADDR_BITS 47
#define MT_UCACHE_SET_BITS 13
#define MT_UCACHE_WAYS 2
#define MT_UCACHE_TAG_SHIFT (MT_RULE_BITS - MT_UCACHE_SET_BITS)
_Static_assert(MT_UCACHE_ADDR_BITS + MT_UCACHE_TAG_SHIFT < 64, "the tag and bit 63 fit one word");
_Static_assert(MT_UCACHE_WAYS == 2, "a set is 16 bytes");

/* The table; NULL until mt_ucache_init succeeded. */
extern _Atomic uint64_t *mt_ucache_table;
/* Bumped by every flush (see unwind_cache.c). */
extern _Atomic uint64_t mt_ucache_gen;

/* The generation: rules looked up while it stays the same describe the
 * same code (a thread's previous walk is reused only within one,
 * unwind_memo.h).  Acquire, as fill() reads it: a walk that sees a
 * flush's bump sees what the dlclose before it did. */
static inline uint64_t mt_ucache_generation(void)
{
    return atomic_load_explicit(&mt_ucache_gen, memory_order_acquire);
}

bool mt_ucache_init(void);

/* The set of key (its first word), and the tag of key's entries. */
static inline const _Atomic uint64_t *mt_ucache_set(const _Atomic uint64_t *table, uint64_t key)
{
    uint64_t set_bytes = (key << 4) & (((1ull << MT_UCACHE_SET_BITS) - 1) << 4);
    return (const _Atomic uint64_t *)(const void *)((const char *)table + set_bytes);
}

static inline uint64_t mt_ucache_tag(uint64_t key)
{
    return 1ull << 63 | key << MT_UCACHE_TAG_SHIFT;
}

/* The walk's fast path: true if a way of key's set (key < 2^47) holds a
 * usual rule for key (in *rule; else way 0's word ^ key's tag); the rest (special rules, misses) is
 * mt_ucache_rule's, out of line, which keeps the walk's loop short.  Way 1
 * is looked at here too: a hit there is as common as the pair of hot
 * addresses that shares a set (functions of one size laid out 8 KiB
 * apart: every call site of memtop-alloc-bench's 64 sites of 256 bytes),
 * and its word is in the same line.  One relaxed load a way is enough: the
 * word is the whole entry (tag and rule), it is read in one piece, and
 * nothing else is published through it. */
static inline bool mt_ucache_usual(const _Atomic uint64_t *table, uint64_t key, uint64_t *rule)
{
    const _Atomic uint64_t *set = mt_ucache_set(table, key);
    uint64_t tag = mt_ucache_tag(key);
    *rule = atomic_load_explicit(&set[0], memory_order_relaxed) ^ tag;
    if (MT_LIKELY(mt_rule_usual(*rule))) /* same address (else high bits set), and not empty */
        return true;
    uint64_t r1 = atomic_load_explicit(&set[1], memory_order_relaxed) ^ tag;
    if (!mt_rule_usual(r1))
        return false; /* *rule: way 0's word for key, as the tests read it */
    *rule = r1;
    return true;
}

/* Everything else: both ways, then on a miss computes the rule of key
 * from the unwind tables (unwind_cfi.h; is_return: key is a return
 * address - 1) and caches it if it can.  Returns a usual or a special
 * rule, never 0.  Takes no lock that it would wait for. */
uint64_t mt_ucache_rule(uint64_t key, bool is_return);

/* Forgets every rule: called after dlclose, whose object's addresses may
 * be reused by another object. */
void mt_ucache_flush(void);

/* fork: held across fork so that the child's flush cannot wait for ever. */
void mt_ucache_lock(void);
void mt_ucache_unlock(void);

#endif
