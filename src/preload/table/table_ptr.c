/* table_ptr.c -- the live-block table: pointer -> size, trace, birth time.
 *
 * MT_PTR_SHARDS independently locked bucketized cuckoo tables (two
 * candidate cache lines of 4 slots per key: "Bucketized cuckoo hashing"
 * below), so a free reads at most two lines, fetched together.  A shard's capacity
 * is any number of whole pages (positions come from fastrange, not a
 * mask), so it grows by 1.5x when 4/5 full (or when both eviction walks
 * fail above a third full: put_at) and its load stays below 0.8: with
 * 16-byte slots (table_ptr_slot.h) that is 20..30 bytes per live block
 * after a growth at 0.8 (a walk from bucket a alone failed as low as half
 * load and grew the shard there: docs/performance.md, "Fourth round").
 * The rare blocks a slot cannot hold (odd or huge pointers, sizes of
 * 16 MiB and up, births years old) and the records no eviction walk placed
 * go to the shard's side table (table_ptr_side.h), full records under the
 * same lock; `side.count` lets lookups skip it while it is empty.
 *
 * Birth times.  A slot keeps a birth in milliseconds modulo 2^37 (4.3
 * years), so it is decoded against a reference: each shard has `limit_ms`,
 * and every birth b held in the shard's slots satisfies
 *     limit_ms - MT_MS_SPAN < b < limit_ms          (MT_MS_SPAN: 4 years)
 * which pins b down (table_ptr_slot.h's mt_birth_ms).  The shard enforces this by
 * itself, under its lock:
 *   - an insert born at or after limit_ms first runs a pass over the shard
 *     that moves every block born MT_KEEP_MS (3 years) or more before it to
 *     the side table (exact births there), then sets limit_ms = its birth
 *     + MT_PASS_MS (1 year).  The blocks left are then younger than 3 years
 *     relative to the new birth, so inside the span.  If the side table
 *     cannot grow, limit_ms stays and the new block goes to the side table
 *     (or goes untracked, like any insert without memory);
 *   - an insert born MT_MS_SPAN or more before limit_ms (a block put back
 *     by a failed realloc, say) goes to the side table.
 * Nothing else is involved (no scan, no publisher, no clock: a stopped
 * publisher or a shard idle for years changes nothing), and every birth is
 * exact to the millisecond.  The pass costs O(shard capacity) under the
 * shard's lock, in the first insert into the shard a year or more after
 * the previous pass: in practice only in processes tracked for years.
 */
#include "table_ptr.h"

#include "core_assert.h"
#include "core_hash.h"
#include "core_os_memory.h"
#include "core_sample.h"
#include "table_ptr_side.h"
#include "table_ptr_slot.h"
#include "core_spinlock.h"
#include "table_trace.h"

#define MT_PTR_SHARDS (1u << MT_SLOT_SHARD_BITS)
#define SHARD_MIN_CAP 64u
#define MT_YEAR_MS (365ull * 86400u * 1000u)
#define MT_KEEP_MS (3 * MT_YEAR_MS)
#define MT_PASS_MS (1 * MT_YEAR_MS)
#define MT_MS_SPAN (MT_KEEP_MS + MT_PASS_MS)

_Static_assert(MT_MS_SPAN <= MT_BIRTH_MASK, "stored births must stay unambiguous");
_Static_assert(MT_TRACE_MAX <= MT_SLOT_TRACE_MASK + 1u, "trace ids must fit a slot");

typedef struct {
    mt_spinlock lock;
    uint64_t cap, count; /* slots */
    mt_slot *slots;
    uint64_t limit_ms; /* see "Birth times" */
    mt_side side;
} __attribute__((aligned(MT_CACHELINE))) ptr_shard;

static ptr_shard g_shards[MT_PTR_SHARDS];

static inline ptr_shard *shard_of(uint64_t h)
{
    return &g_shards[mt_slot_shard(h)];
}

static inline void unpack(const ptr_shard *s, const mt_slot *e, mt_block *b)
{
    b->size = mt_slot_size(e);
    b->birth_ns = mt_birth_ms(mt_slot_birth(e), s->limit_ms) * 1000000u;
    b->trace = mt_slot_trace(e);
}

static bool shard_alloc(ptr_shard *s, uint64_t cap)
{
    cap = mt_os_whole_pages(cap * sizeof(mt_slot)) / sizeof(mt_slot); /* use whole pages */
    mt_slot *slots = mt_os_alloc(cap * sizeof(mt_slot));
    MT_HINT_SET(s->slots, slots);
    MT_HINT_SET(s->cap, slots ? cap : 0);
    return slots != NULL;
}

/* The shards' first tables are SHARD_MIN_CAP slots each, side by side in
 * one mapping (one mmap instead of MT_PTR_SHARDS at every process start),
 * several to a page: a small process's blocks then live in a few pages, not
 * in one page per shard.  That matters at fork (docs/performance.md,
 * "Process start and exit"): fork copies every page table entry and
 * write-protects the page, and each page the parent or the child writes
 * afterwards costs a fault and a copy (~2 us here), and a shell writes the
 * block table after each of its forks.  A shard that grows leaves its first
 * table in place (the pages are shared); later tables are whole pages of
 * their own and are given back when they grow in turn. */
bool mt_ptrs_init(void)
{
    size_t bytes = SHARD_MIN_CAP * sizeof(mt_slot);
    unsigned char *all = mt_os_alloc(bytes * MT_PTR_SHARDS);
    if (!all)
        return false;
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        g_shards[i].limit_ms = MT_PASS_MS;
        MT_HINT_SET(g_shards[i].slots, (mt_slot *)(void *)(all + i * bytes));
        MT_HINT_SET(g_shards[i].cap, SHARD_MIN_CAP);
    }
    return true;
}

/* Bucketized cuckoo hashing.  A bucket is MT_BUCKET_SLOTS slots, one cache
 * line; a key may sit in either of two buckets (bucket_a, bucket_b), so a
 * lookup or removal reads at most two lines, which the prefetch starts
 * together.  A removal only clears its slot.  An insert that finds both
 * buckets full walks a chain of evictions (plan_path, at most MT_KICKS
 * moves, planned before anything moves); if none is found the shard
 * grows when at least half full, else (or if it cannot grow) the record
 * goes to the side table, so no record is ever dropped. */
#define MT_BUCKET_SLOTS 4u
#define MT_KICKS 32u

_Static_assert(MT_BUCKET_SLOTS * sizeof(mt_slot) == MT_CACHELINE, "a bucket is one line");
_Static_assert(SHARD_MIN_CAP % MT_BUCKET_SLOTS == 0, "whole buckets");

/* Test hook: a lower eviction bound (0: MT_KICKS), to force the fallback. */
static unsigned g_kick_limit;

static inline uint64_t bucket_a(uint64_t h, uint64_t nb)
{
    return mt_range(h << MT_SLOT_SHARD_BITS, nb);
}

static inline uint64_t bucket_b(uint64_t h, uint64_t nb)
{
    return mt_range((h << MT_SLOT_SHARD_BITS) * 0x9e3779b97f4a7c15ull, nb);
}

/* The other bucket of a key that sits in bucket bk. */
static inline uint64_t bucket_other(uint64_t h, uint64_t nb, uint64_t bk)
{
    uint64_t a = bucket_a(h, nb);
    return a == bk ? bucket_b(h, nb) : a;
}

static inline mt_slot *bucket_at(mt_slot *slots, uint64_t bk)
{
    return slots + bk * MT_BUCKET_SLOTS;
}

/* The slot holding probe in bucket bk, or NULL. */
static inline mt_slot *bucket_find(mt_slot *slots, uint64_t bk, uint64_t probe)
{
    mt_slot *e = bucket_at(slots, bk);
    for (unsigned i = 0; i < MT_BUCKET_SLOTS; i++)
        if (mt_slot_holds(&e[i], probe))
            return &e[i];
    return NULL;
}

static inline mt_slot *bucket_free(mt_slot *slots, uint64_t bk)
{
    mt_slot *e = bucket_at(slots, bk);
    for (unsigned i = 0; i < MT_BUCKET_SLOTS; i++)
        if (!e[i].w0)
            return &e[i];
    return NULL;
}

/* The slot holding a key (probe = mt_slot_probe(key), h = its hash), or NULL. */
static inline mt_slot *find(const ptr_shard *s, uint64_t probe, uint64_t h)
{
    uint64_t nb = s->cap / MT_BUCKET_SLOTS;
    mt_slot *e = bucket_find(s->slots, bucket_a(h, nb), probe);
    return e ? e : bucket_find(s->slots, bucket_b(h, nb), probe);
}

/* Plans an eviction chain for a key whose buckets are both full, from its
 * bucket bk (a or b): path[0] is a slot of bk, each path[i + 1] is a slot
 * in the other bucket of path[i]'s record, and the last record's other
 * bucket has a free slot, returned in *hole.  Nothing moves.  Returns the
 * chain's length, 0 if none within the bound (a slot met twice ends the
 * walk). */
static unsigned plan_path(mt_slot *slots, uint64_t cap, uint64_t h, uint64_t bk, mt_slot **path,
                          mt_slot **hole)
{
    uint64_t nb = cap / MT_BUCKET_SLOTS;
    unsigned limit = g_kick_limit && g_kick_limit < MT_KICKS ? g_kick_limit : MT_KICKS; /* path[] */
    for (unsigned n = 0; n < limit; n++) {
        /* Vary the victim so that walks through the same buckets differ. */
        mt_slot *e = bucket_at(slots, bk) + (uint32_t)(h >> 7 ^ n) % MT_BUCKET_SLOTS;
        for (unsigned i = 0; i < n; i++)
            if (path[i] == e)
                return 0;
        path[n] = e;
        bk = bucket_other(mt_slot_hash(mt_slot_key_of(e)), nb, bk);
        *hole = bucket_free(slots, bk);
        if (*hole)
            return n + 1;
    }
    return 0;
}

/* Stores e (a key not in the table, of hash h) in slots where an eviction
 * chain from bucket a, or failing that from bucket b, makes room; false if
 * neither walk found one (then nothing moved).  A walk ends at the first
 * slot it meets twice: filling bare tables of 256 to 4096 slots, the walk
 * from a alone first failed at a load of 0.84-0.87 on average but as low as
 * 0.54, the two walks at 0.89-0.91 and never below 0.69
 * (docs/performance.md, "Fourth round"). */
static bool __attribute__((noinline))
put_evicting(mt_slot *slots, uint64_t cap, const mt_slot *e, uint64_t h)
{
    mt_slot *path[MT_KICKS], *to = NULL;
    uint64_t nb = cap / MT_BUCKET_SLOTS;
    unsigned n = plan_path(slots, cap, h, bucket_a(h, nb), path, &to);
    if (!n)
        n = plan_path(slots, cap, h, bucket_b(h, nb), path, &to);
    if (!n)
        return false;
    for (unsigned i = n; i-- > 0; to = path[i]) /* from the hole back */
        *to = *path[i];
    *to = *e;
    return true;
}

/* Stores e at `to` if that is a free slot of one of its buckets (inline:
 * the insert's usual case), else as put_evicting. */
static inline bool put_at(mt_slot *slots, uint64_t cap, const mt_slot *e, uint64_t h, mt_slot *to)
{
    if (MT_UNLIKELY(!to))
        return put_evicting(slots, cap, e, h);
    *to = *e;
    return true;
}

/* put_at for a record whose buckets were not looked at yet. */
static bool raw_put(mt_slot *slots, uint64_t cap, const mt_slot *e)
{
    uint64_t nb = cap / MT_BUCKET_SLOTS, h = mt_slot_hash(mt_slot_key_of(e));
    mt_slot *to = bucket_free(slots, bucket_a(h, nb));
    if (!to)
        to = bucket_free(slots, bucket_b(h, nb));
    return put_at(slots, cap, e, h, to);
}

/* Rehashes into a table of at least ncap slots; tries larger ones if a
 * record finds no room (practically never at the load a growth leaves). */
static bool __attribute__((noinline, cold)) shard_grow(ptr_shard *s)
{
    mt_slot *old = s->slots;
    uint64_t ocap = s->cap, ncap = s->cap + s->cap / 2;
    for (unsigned attempt = 0; attempt < 3; attempt++, ncap += ncap / 2) {
        if (!shard_alloc(s, ncap))
            break;
        uint64_t i = 0;
        while (i < ocap && (!old[i].w0 || raw_put(s->slots, s->cap, &old[i])))
            i++;
        if (i == ocap) {
            if (ocap != SHARD_MIN_CAP) /* a first table shares its pages (mt_ptrs_init) */
                mt_os_free(old, ocap * sizeof(mt_slot));
            return true;
        }
        mt_os_free(s->slots, s->cap * sizeof(mt_slot));
    }
    MT_HINT_SET(s->slots, old);
    MT_HINT_SET(s->cap, ocap);
    return false;
}

static inline void erase_slot(ptr_shard *s, mt_slot *e)
{
    e->w0 = 0;
    MT_HINT_SET(s->count, s->count - 1);
}

/* The pass of "Birth times", for a birth at ms >= limit_ms.  False if a
 * block could not be moved (no memory): limit_ms then stays. */
static bool __attribute__((noinline, cold)) move_window(ptr_shard *s, uint64_t ms)
{
    for (uint64_t j = 0; j < s->cap;) {
        mt_slot *e = &s->slots[j];
        if (!e->w0 || mt_birth_ms(mt_slot_birth(e), s->limit_ms) + MT_KEEP_MS > ms) {
            j++;
            continue;
        }
        mt_block b, none;
        bool replaced;
        unpack(s, e, &b);
        if (!mt_side_put(&s->side, mt_slot_ptr(e), mt_slot_hash(mt_slot_key_of(e)), &b, &none,
                         &replaced))
            return false;
        erase_slot(s, e);
        j++;
    }
    s->limit_ms = ms + MT_PASS_MS;
    MT_ASSERT(s->limit_ms > ms);
    return true;
}

/* Whether a birth can be stored in the shard's slots, after moving the
 * window if it is due. */
static inline bool slot_birth(ptr_shard *s, uint64_t ms)
{
    /* Storable iff limit_ms - MT_MS_SPAN < ms < limit_ms. */
    if (MT_LIKELY(s->limit_ms - 1 - ms < MT_MS_SPAN - 1))
        return true;
    return ms >= s->limit_ms && move_window(s, ms);
}

/* Takes ptr's record out of the slots or the side table; the caller holds
 * the shard's lock. */
static inline bool remove_locked(ptr_shard *s, uintptr_t ptr, uint64_t key, uint64_t h,
                                 mt_block *out)
{
    if (MT_LIKELY(mt_slot_key_fits(key))) {
        mt_slot *e = find(s, mt_slot_probe(key), h);
        if (MT_LIKELY(e)) {
            unpack(s, e, out);
            erase_slot(s, e);
            return true;
        }
    }
    return MT_UNLIKELY(s->side.count) && mt_side_take(&s->side, ptr, h, out);
}

static mt_insert_result __attribute__((noinline))
insert_side(ptr_shard *s, uintptr_t ptr, uint64_t key, uint64_t h, const mt_block *b,
            mt_block *stale)
{
    if (!ptr)
        return MT_INSERT_FAILED; /* never tracked; 0 marks empty entries */
    mt_slot *e = mt_slot_key_fits(key) ? find(s, mt_slot_probe(key), h) : NULL;
    bool was_slot = e != NULL, was_side = false;
    mt_block old;
    if (was_slot)
        unpack(s, e, &old);
    if (!mt_side_put(&s->side, ptr, h, b, stale, &was_side))
        return MT_INSERT_FAILED;
    if (!was_slot)
        return was_side ? MT_INSERT_REPLACED : MT_INSERT_NEW;
    /* Only now that the put succeeded: a failed insert changes nothing. */
    erase_slot(s, e);
    *stale = old;
    return MT_INSERT_REPLACED;
}

/* Stores a new record of hash h in the shard's slots: at `to` (a free
 * slot of its buckets, or NULL), an eviction chain, or the same after
 * growing a shard at least a third full (both walks failing below that
 * load is a handful of keys crowding a few buckets, which growth need not
 * cure; strided keys made both fail at 0.49: unit_ptr_spread).  False:
 * the caller puts it in the side table. */
static inline bool place(ptr_shard *s, const mt_slot *rec, uint64_t h, mt_slot *to)
{
    if (MT_LIKELY(put_at(s->slots, s->cap, rec, h, to)))
        return true;
    return s->count * 3 >= s->cap && shard_grow(s) && raw_put(s->slots, s->cap, rec);
}

/* The first free slot of bucket bk, or NULL (bucket_free, over a line
 * already loaded). */
static inline mt_slot *first_free(mt_slot *e)
{
    for (unsigned i = 0; i < MT_BUCKET_SLOTS; i++)
        if (!e[i].w0)
            return &e[i];
    return NULL;
}

/* Both buckets of a key: the slot holding it (probe), or NULL with *free
 * a free slot of the two (bucket a's first; NULL if both are full).  The
 * key is hardly ever there (a missed free), so one branch-free test over
 * the eight slots comes first: the smallest w0 ^ probe is below 2^19 iff a
 * slot holds it (mt_slot_holds; an empty slot's is probe itself, 2^19 or
 * more). */
static inline mt_slot *find_or_free(const ptr_shard *s, uint64_t probe, uint64_t h, mt_slot **free)
{
    uint64_t nb = s->cap / MT_BUCKET_SLOTS;
    mt_slot *a = bucket_at(s->slots, bucket_a(h, nb)), *b = bucket_at(s->slots, bucket_b(h, nb));
    uint64_t least = UINT64_MAX;
    for (unsigned i = 0; i < MT_BUCKET_SLOTS; i++) {
        uint64_t xa = a[i].w0 ^ probe, xb = b[i].w0 ^ probe;
        least = xa < least ? xa : least;
        least = xb < least ? xb : least;
    }
    if (MT_UNLIKELY(least < (1ull << MT_SLOT_LO_BITS))) {
        *free = NULL;
        mt_slot *e = bucket_find(a, 0, probe);
        return e ? e : bucket_find(b, 0, probe);
    }
    mt_slot *f = first_free(a);
    *free = f ? f : first_free(b);
    return NULL;
}

static inline __attribute__((always_inline)) mt_insert_result
insert_slot(ptr_shard *s, uintptr_t ptr, uint64_t key, uint64_t h, const mt_block *b,
            mt_block *stale)
{
    uint64_t ms = b->birth_ns / 1000000u;
    if (MT_UNLIKELY(!slot_birth(s, ms))) /* before find: a pass moves slots */
        return insert_side(s, ptr, key, h, b, stale);
    MT_ASSERT(ms < s->limit_ms && s->limit_ms - ms < MT_MS_SPAN); /* "Birth times" */
    if ((s->count + 1) * 5 > s->cap * 4)
        shard_grow(s); /* if it cannot, the record may still find room */
    mt_slot *to, *e = find_or_free(s, mt_slot_probe(key), h, &to);
    if (e) {
        unpack(s, e, stale);
        mt_slot_pack(e, key, b->size, b->trace, mt_birth_store(ms));
        return MT_INSERT_REPLACED;
    }
    mt_slot rec;
    mt_slot_pack(&rec, key, b->size, b->trace, mt_birth_store(ms));
    if (MT_UNLIKELY(!place(s, &rec, h, to)))
        return insert_side(s, ptr, key, h, b, stale); /* not in the slots: only the side */
    MT_HINT_SET(s->count, s->count + 1);
    if (MT_UNLIKELY(s->side.count) && mt_side_take(&s->side, ptr, h, stale))
        return MT_INSERT_REPLACED;
    return MT_INSERT_NEW;
}

/* sampled: the filter (core_sample.h) counts the block in the same
 * critical section, so that a new filter generation's fill, under every
 * shard lock, sees the table and the filter agree ("Generations" in
 * core_sample.c).  A constant in each caller: the exact path is as it was. */
static inline __attribute__((always_inline)) mt_insert_result
insert(uintptr_t ptr, uint64_t h, const mt_block *b, mt_block *stale, bool sampled)
{
    uint64_t key = mt_slot_key(ptr);
    ptr_shard *s = shard_of(h);
    mt_spin_lock(&s->lock);
    mt_insert_result r = MT_LIKELY(mt_slot_fits(key, b->size))
                             ? insert_slot(s, ptr, key, h, b, stale)
                             : insert_side(s, ptr, key, h, b, stale);
    if (sampled && r == MT_INSERT_NEW) /* replaced: ptr was counted already */
        mt_sfilter_add((const void *)ptr);
    mt_spin_unlock(&s->lock);
    return r;
}

mt_insert_result mt_ptr_insert(uintptr_t ptr, const mt_block *b, mt_block *stale)
{
    return insert(ptr, mt_slot_hash(mt_slot_key(ptr)), b, stale, false);
}

mt_insert_result mt_ptr_insert_hashed(uintptr_t ptr, uint64_t h, const mt_block *b, mt_block *stale)
{
    MT_ASSERT(h == mt_slot_hash(mt_slot_key(ptr)));
    return insert(ptr, h, b, stale, false);
}

mt_insert_result mt_ptr_insert_sampled(uintptr_t ptr, const mt_block *b, mt_block *stale)
{
    return insert(ptr, mt_slot_hash(mt_slot_key(ptr)), b, stale, true);
}

/* Starts loading both candidate lines of a key of hash h in shard s. */
static inline void prefetch_buckets(const ptr_shard *s, uint64_t h)
{
    /* Racy read of slots/cap without the lock: only an address to prefetch,
     * never dereferenced here. */
    const mt_slot *slots = __atomic_load_n(&s->slots, __ATOMIC_RELAXED);
    uint64_t cap = __atomic_load_n(&s->cap, __ATOMIC_RELAXED);
    if (slots && cap) {
        uint64_t nb = cap / MT_BUCKET_SLOTS;
        __builtin_prefetch(&slots[bucket_a(h, nb) * MT_BUCKET_SLOTS], 1);
        __builtin_prefetch(&slots[bucket_b(h, nb) * MT_BUCKET_SLOTS], 1);
    }
}

uint64_t mt_ptr_prefetch(uintptr_t ptr)
{
    uint64_t h = mt_slot_hash(mt_slot_key(ptr));
    prefetch_buckets(shard_of(h), h);
    return h;
}

/* Both lines are prefetched before the lock: a record in bucket b then
 * costs no second miss in a row (the hook does not prefetch for a free,
 * which would hash the pointer once more). */
static inline __attribute__((always_inline)) bool remove_block(uintptr_t ptr, mt_block *out,
                                                               bool sampled)
{
    uint64_t key = mt_slot_key(ptr), h = mt_slot_hash(key);
    ptr_shard *s = shard_of(h);
    prefetch_buckets(s, h);
    mt_spin_lock(&s->lock);
    bool found = remove_locked(s, ptr, key, h, out);
    if (sampled && found) /* as insert: under the lock */
        mt_sfilter_del((const void *)ptr);
    mt_spin_unlock(&s->lock);
    return found;
}

bool mt_ptr_remove(uintptr_t ptr, mt_block *out)
{
    return remove_block(ptr, out, false);
}

bool mt_ptr_remove_sampled(uintptr_t ptr, mt_block *out)
{
    return remove_block(ptr, out, true);
}

static inline __attribute__((always_inline)) mt_try_result try_remove(uintptr_t ptr, mt_block *out,
                                                                      bool sampled)
{
    uint64_t key = mt_slot_key(ptr), h = mt_slot_hash(key);
    ptr_shard *s = shard_of(h);
    if (!mt_spin_trylock(&s->lock))
        return MT_TRY_BUSY;
    bool found = remove_locked(s, ptr, key, h, out);
    if (sampled && found)
        mt_sfilter_del((const void *)ptr);
    mt_spin_unlock(&s->lock);
    return found ? MT_TRY_REMOVED : MT_TRY_ABSENT;
}

mt_try_result mt_ptr_try_remove(uintptr_t ptr, mt_block *out)
{
    return try_remove(ptr, out, false);
}

mt_try_result mt_ptr_try_remove_sampled(uintptr_t ptr, mt_block *out)
{
    return try_remove(ptr, out, true);
}

/* Every live block's address, the caller holding every shard lock
 * (mt_ptrs_lock_all): a new filter generation's fill. */
void mt_ptr_visit_ptrs_locked(void (*fn)(uintptr_t ptr, void *ctx), void *ctx)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        const ptr_shard *s = &g_shards[i];
        for (uint64_t j = 0; j < s->cap; j++)
            if (s->slots[j].w0)
                fn(mt_slot_ptr(&s->slots[j]), ctx);
        for (uint64_t j = 0; j < s->side.cap && s->side.count; j++)
            if (s->side.e[j].ptr)
                fn((uintptr_t)s->side.e[j].ptr, ctx);
    }
}

void mt_ptr_visit(mt_ptr_visit_fn fn, void *ctx)
{
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++) {
        ptr_shard *s = &g_shards[i];
        mt_spin_lock(&s->lock);
        for (uint64_t j = 0; j < s->cap; j++) {
            if (!s->slots[j].w0)
                continue;
            mt_block b;
            unpack(s, &s->slots[j], &b);
            fn(&b, ctx);
        }
        mt_side_visit(&s->side, fn, ctx);
        mt_spin_unlock(&s->lock);
    }
}

uint64_t mt_ptr_count(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < MT_PTR_SHARDS; i++)
        n += __atomic_load_n(&g_shards[i].count, __ATOMIC_RELAXED) +
             __atomic_load_n(&g_shards[i].side.count, __ATOMIC_RELAXED);
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
