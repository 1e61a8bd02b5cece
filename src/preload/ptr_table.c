/* ptr_table.c -- the live-block table: pointer -> size, trace, birth time.
 *
 * MT_PTR_SHARDS independently locked open-addressing tables with linear
 * probing and backward-shift deletion (no tombstones).  A shard's capacity
 * is any number (positions come from fastrange, not a mask), so it grows by
 * 1.5x when 3/4 full and its load stays between 1/2 and 3/4: with 24-byte
 * entries that bounds bookkeeping at 32..48 bytes per live block.
 *
 * Entry packing (24 bytes): the pointer; the size in the low 48 bits of the
 * second word (x86-64 user space is 47 bits, so no block is larger) with
 * bits 32..47 of the birth time (ms) in its high 16; the trace id and the
 * low 32 bits of the birth time.  Birth time thus spans 8900 years at 1 ms.
 */
#include "ptr_table.h"

#include "hash.h"
#include "os_memory.h"
#include "spinlock.h"

#define MT_PTR_SHARDS 64u
#define SHARD_MIN_CAP 64u
#define SIZE_MASK ((1ull << 48) - 1)

typedef struct {
    uint64_t ptr; /* 0 = empty */
    uint64_t size_birth_hi;
    uint32_t trace;
    uint32_t birth_lo;
} slot_t;

typedef struct {
    mt_spinlock lock;
    uint64_t cap, count;
    slot_t *slots;
} __attribute__((aligned(MT_CACHELINE))) ptr_shard;

static ptr_shard g_shards[MT_PTR_SHARDS];

static inline uint64_t ptr_hash(uintptr_t p)
{
    return mt_mix64(p);
}

static inline ptr_shard *shard_of(uint64_t h)
{
    return &g_shards[h & (MT_PTR_SHARDS - 1)];
}

static inline void pack(slot_t *s, uintptr_t ptr, const mt_block *b)
{
    uint64_t ms = b->birth_ns / 1000000u;
    s->ptr = ptr;
    s->size_birth_hi = (b->size & SIZE_MASK) | ((ms >> 32) << 48);
    s->trace = b->trace;
    s->birth_lo = (uint32_t)ms;
}

static inline void unpack(const slot_t *s, mt_block *b)
{
    uint64_t ms = ((s->size_birth_hi >> 48) << 32) | s->birth_lo;
    b->size = s->size_birth_hi & SIZE_MASK;
    b->birth_ns = ms * 1000000u;
    b->trace = s->trace;
}

static bool shard_alloc(ptr_shard *s, uint64_t cap)
{
    s->slots = mt_os_alloc(cap * sizeof(slot_t));
    s->cap = s->slots ? cap : 0;
    return s->slots != NULL;
}

bool mt_ptrs_init(void)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++)
        if (!shard_alloc(&g_shards[i], SHARD_MIN_CAP))
            return false;
    return true;
}

static void raw_put(slot_t *slots, uint64_t cap, const slot_t *e)
{
    uint64_t j = mt_range(ptr_hash(e->ptr), cap);
    while (slots[j].ptr)
        j = (j + 1 == cap) ? 0 : j + 1;
    slots[j] = *e;
}

static bool shard_grow(ptr_shard *s)
{
    uint64_t ncap = s->cap + s->cap / 2;
    slot_t *old = s->slots;
    uint64_t ocap = s->cap;
    if (!shard_alloc(s, ncap)) {
        s->slots = old;
        s->cap = ocap;
        return false;
    }
    for (uint64_t i = 0; i < ocap; i++)
        if (old[i].ptr)
            raw_put(s->slots, ncap, &old[i]);
    mt_os_free(old, ocap * sizeof(slot_t));
    return true;
}

/* Position of ptr in the shard, or of the empty slot where it would go. */
static inline uint64_t find(const ptr_shard *s, uintptr_t ptr, uint64_t h)
{
    uint64_t j = mt_range(h, s->cap);
    while (s->slots[j].ptr && s->slots[j].ptr != ptr)
        j = (j + 1 == s->cap) ? 0 : j + 1;
    return j;
}

mt_insert_result mt_ptr_insert(uintptr_t ptr, const mt_block *b, mt_block *stale)
{
    uint64_t h = ptr_hash(ptr);
    ptr_shard *s = shard_of(h);
    mt_insert_result r = MT_INSERT_NEW;
    mt_spin_lock(&s->lock);
    if ((s->count + 1) * 4 > s->cap * 3 && !shard_grow(s) && s->count + 1 >= s->cap) {
        mt_spin_unlock(&s->lock);
        return MT_INSERT_FAILED;
    }
    uint64_t j = find(s, ptr, h);
    if (s->slots[j].ptr) {
        unpack(&s->slots[j], stale);
        r = MT_INSERT_REPLACED;
    } else {
        s->count++;
    }
    pack(&s->slots[j], ptr, b);
    mt_spin_unlock(&s->lock);
    return r;
}

/* Backward-shift deletion: pull later members of the probe run into the
 * hole unless that would move them before their home position. */
static void erase_at(ptr_shard *s, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1 == s->cap) ? 0 : j + 1;
        if (!s->slots[j].ptr)
            break;
        uint64_t home = mt_range(ptr_hash(s->slots[j].ptr), s->cap);
        bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        s->slots[i] = s->slots[j];
        i = j;
    }
    s->slots[i].ptr = 0;
    s->count--;
}

void mt_ptr_prefetch(uintptr_t ptr)
{
    uint64_t h = ptr_hash(ptr);
    const ptr_shard *s = shard_of(h);
    /* Racy read of slots/cap without the lock: only an address to prefetch,
     * never dereferenced here. */
    const slot_t *slots = __atomic_load_n(&s->slots, __ATOMIC_RELAXED);
    uint64_t cap = __atomic_load_n(&s->cap, __ATOMIC_RELAXED);
    if (slots && cap)
        __builtin_prefetch(&slots[mt_range(h, cap)], 1);
}

/* Takes ptr's record out of a shard whose lock the caller holds. */
static bool remove_locked(ptr_shard *s, uintptr_t ptr, uint64_t h, mt_block *out)
{
    uint64_t j = find(s, ptr, h);
    if (!s->slots[j].ptr)
        return false;
    unpack(&s->slots[j], out);
    erase_at(s, j);
    return true;
}

bool mt_ptr_remove(uintptr_t ptr, mt_block *out)
{
    uint64_t h = ptr_hash(ptr);
    ptr_shard *s = shard_of(h);
    mt_spin_lock(&s->lock);
    bool found = remove_locked(s, ptr, h, out);
    mt_spin_unlock(&s->lock);
    return found;
}

mt_try_result mt_ptr_try_remove(uintptr_t ptr, mt_block *out)
{
    uint64_t h = ptr_hash(ptr);
    ptr_shard *s = shard_of(h);
    if (!mt_spin_trylock(&s->lock))
        return MT_TRY_BUSY;
    bool found = remove_locked(s, ptr, h, out);
    mt_spin_unlock(&s->lock);
    return found ? MT_TRY_REMOVED : MT_TRY_ABSENT;
}

void mt_ptr_visit(mt_ptr_visit_fn fn, void *ctx)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        ptr_shard *s = &g_shards[i];
        mt_spin_lock(&s->lock);
        for (uint64_t j = 0; j < s->cap; j++) {
            if (!s->slots[j].ptr)
                continue;
            mt_block b;
            unpack(&s->slots[j], &b);
            fn(&b, ctx);
        }
        mt_spin_unlock(&s->lock);
    }
}

uint64_t mt_ptr_count(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++)
        n += __atomic_load_n(&g_shards[i].count, __ATOMIC_RELAXED);
    return n;
}

void mt_ptrs_lock_all(void)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++)
        mt_spin_lock(&g_shards[i].lock);
}

void mt_ptrs_unlock_all(void)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++)
        mt_spin_unlock(&g_shards[i].lock);
}
