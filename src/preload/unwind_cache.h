/* unwind_cache.h -- process-wide cache: instruction address -> frame rule.
 *
 * A 2-way set-associative table of 8192 sets, 128 KiB (see unwind_cache.c
 * for why this size and why one word per entry).  An entry is one 64-bit
 * word: the high 35 bits are a tag of the address, the low 29 bits its
 * rule (unwind_rule.h).  The address is mapped by an odd multiply modulo
 * 2^48, a bijection, whose top 13 bits pick the set and whose low 35 bits
 * are the tag: set and tag together identify the address exactly, so a
 * hit can never return another address's rule.  Addresses must be below
 * 2^48 (user-space code on x86-64 is below 2^47).
 */
#ifndef MT_UNWIND_CACHE_H
#define MT_UNWIND_CACHE_H

#include "hash.h"
#include "mt_common.h"
#include "unwind_rule.h"

#include <stdbool.h>

#define MT_UCACHE_ADDR_BITS 48
#define MT_UCACHE_SET_BITS 13
#define MT_UCACHE_WAYS 2
#define MT_UCACHE_TAG_BITS (MT_UCACHE_ADDR_BITS - MT_UCACHE_SET_BITS)
/* The multiplier is the hash's (hash.h): the walk computes the product
 * once per frame for both. */
#define MT_UCACHE_MULT MT_HASH_MULT
_Static_assert(MT_UCACHE_TAG_BITS + MT_RULE_BITS == 64, "tag and rule fill one word");
_Static_assert(MT_UCACHE_WAYS == 2, "a set is 16 bytes");

/* The table; NULL until mt_ucache_init succeeded. */
extern _Atomic uint64_t *mt_ucache_table;

bool mt_ucache_init(void);

/* The walk's fast path: with x = key * MT_UCACHE_MULT (key < 2^48), true
 * if way 0 of key's set holds a usual rule for key (in *rule); the rest
 * (way 1, special rules, misses) is mt_ucache_rule's, out of line, which
 * keeps the walk's loop short.  One relaxed load is enough: the word is
 * the whole entry (tag and rule), it is read in one piece, and nothing
 * else is published through it. */
static inline bool mt_ucache_usual(const _Atomic uint64_t *table, uint64_t x, uint64_t *rule)
{
    uint64_t set_bytes =
        (x >> (MT_UCACHE_TAG_BITS - 4)) & (((1ull << MT_UCACHE_SET_BITS) - 1) << 4);
    const _Atomic uint64_t *set =
        (const _Atomic uint64_t *)(const void *)((const char *)table + set_bytes);
    uint64_t tag = x << MT_RULE_BITS; /* x mod 2^48 without the set's bits */
    *rule = atomic_load_explicit(&set[0], memory_order_relaxed) ^ tag;
    return mt_rule_usual(*rule); /* same tag (else high bits set), and not empty */
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
