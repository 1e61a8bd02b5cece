/* table_ptr_slot.h -- the 16-byte record of one live block in the block table.
 *
 * 128 bits, in two words:
 *   w0 = key << 19 | birth bits 0..18          key = ptr >> 3 (45 bits)
 *   w1 = size | trace << 24 | birth bits 19..36 << 46
 * so a record holds any 8-aligned pointer below 2^48 (x86-64 and arm64
 * user space; 8-byte blocks of jemalloc, tcmalloc or mimalloc are only
 * 8-aligned), a size below 16 MiB (larger blocks are few, and glibc
 * usually mmaps them: a system call each) and any trace id (MT_TRACE_MAX
 * is 2^22).
 * Blocks that do not fit go to the side table (table_ptr_side.h).  A stored key
 * is never 0, so w0 == 0 marks an empty slot.
 *
 * Birth (37 bits): the birth in milliseconds since tracking began, modulo
 * 2^37 (4.3 years), decoded against a reference the table keeps per shard
 * (table_ptr.c, "Birth times"), which moves a block to the side table
 * before its birth could become ambiguous.  So births are exact to the
 * millisecond, as the recordings' (trace, birth ms) keys need.
 */
#ifndef MT_PTR_SLOT_H
#define MT_PTR_SLOT_H

#include "core_hash.h"
#include "core_common.h"

#include <stdbool.h>

typedef struct {
    uint64_t w0, w1;
} mt_slot;

#define MT_SLOT_PTR_LIMIT (1ull << 48)
#define MT_SLOT_SIZE_MAX ((1ull << 24) - 1)
#define MT_SLOT_TRACE_MASK ((1u << 22) - 1)
#define MT_SLOT_LO_BITS 19
#define MT_BIRTH_BITS 37
#define MT_BIRTH_MASK ((1ull << MT_BIRTH_BITS) - 1)

/* ptr rotated right by 3 bits: the key (ptr >> 3) of a pointer that fits,
 * a number of 2^45 or more for one that does not (its low bits end up on
 * top), 0 for NULL.  The table hashes this, so a slot's hash is its key's. */
static inline uint64_t mt_slot_key(uintptr_t ptr)
{
    return (uint64_t)ptr >> 3 | (uint64_t)ptr << 61;
}

/* Whether key (mt_slot_key) is one a slot holds: 8-aligned, non-null,
 * below 2^48. */
static inline bool mt_slot_key_fits(uint64_t key)
{
    return key - 1 < (MT_SLOT_PTR_LIMIT >> 3) - 1;
}

/* Where a key goes: its hash's top MT_SLOT_SHARD_BITS bits pick the
 * shard (table_ptr.c) and the bits below them the position in the shard's
 * slots or side table, so that the keys of one shard are spread over all
 * of its positions.  The hash is MurmurHash3's finaliser, not one
 * multiply: Fibonacci hashing (key * 2^64/phi) is cheaper, but the keys of
 * equal-size blocks form arithmetic runs, and for strides whose multiples
 * come close to a Fibonacci number (4032, 3312 or 17664 bytes, say) they
 * fall into a few narrow clusters: full buckets, half the records in
 * their second bucket (test_ptr_spread's stride sweep). */
#define MT_SLOT_SHARD_BITS 5
static inline uint64_t mt_slot_hash(uint64_t key)
{
    return mt_mix64(key);
}
static inline uint32_t mt_slot_shard(uint64_t h)
{
    return (uint32_t)(h >> (64 - MT_SLOT_SHARD_BITS));
}
static inline uint64_t mt_slot_home(uint64_t h, uint64_t cap)
{
    return mt_range(h << MT_SLOT_SHARD_BITS, cap);
}

static inline bool mt_slot_fits(uint64_t key, uint64_t size)
{
    return mt_slot_key_fits(key) && size <= MT_SLOT_SIZE_MAX;
}

/* For a key that fits: w0 ^ mt_slot_probe(key) is below 2^19 exactly when
 * the slot holds that key. */
static inline uint64_t mt_slot_probe(uint64_t key)
{
    return key << MT_SLOT_LO_BITS;
}

static inline bool mt_slot_holds(const mt_slot *s, uint64_t probe)
{
    return (s->w0 ^ probe) < (1ull << MT_SLOT_LO_BITS);
}

static inline uint64_t mt_slot_key_of(const mt_slot *s)
{
    return s->w0 >> MT_SLOT_LO_BITS;
}

static inline uintptr_t mt_slot_ptr(const mt_slot *s)
{
    return (uintptr_t)mt_slot_key_of(s) << 3;
}

/* size <= MT_SLOT_SIZE_MAX, trace < MT_TRACE_MAX, birth <= MT_BIRTH_MASK. */
static inline void mt_slot_pack(mt_slot *s, uint64_t key, uint64_t size, uint32_t trace,
                                uint64_t birth)
{
    s->w0 = mt_slot_probe(key) | (birth & ((1u << MT_SLOT_LO_BITS) - 1));
    s->w1 = size | (uint64_t)trace << 24 | (birth >> MT_SLOT_LO_BITS) << 46;
}

static inline uint64_t mt_slot_size(const mt_slot *s)
{
    return s->w1 & MT_SLOT_SIZE_MAX;
}

static inline uint32_t mt_slot_trace(const mt_slot *s)
{
    return (uint32_t)(s->w1 >> 24) & MT_SLOT_TRACE_MASK;
}

/* The stored birth: milliseconds modulo 2^37. */
static inline uint64_t mt_slot_birth(const mt_slot *s)
{
    return (s->w0 & ((1u << MT_SLOT_LO_BITS) - 1)) | (s->w1 >> 46) << MT_SLOT_LO_BITS;
}

static inline uint64_t mt_birth_store(uint64_t ms)
{
    return ms & MT_BIRTH_MASK;
}

/* The birth in ms from its stored form.  ref_ms: a time later than the
 * birth by less than 2^37 ms. */
static inline uint64_t mt_birth_ms(uint64_t stored, uint64_t ref_ms)
{
    return ref_ms - ((ref_ms - stored) & MT_BIRTH_MASK);
}

#endif
