/* unwind_cache.c -- the process-wide frame rule cache of the own unwinder.
 *
 * Why process-wide: the rule of an address is the same for every thread,
 * so one table serves them all and a new thread starts warm (libunwind's
 * per-thread caches make each thread pay every miss again).
 *
 * Size: fixed, 8192 sets x 2 ways x 8 bytes = 128 KiB of address space
 * from mmap, counted in tracker_bytes, touched only where used.  Only
 * return addresses of allocating call chains are cached: 500 to 1300 of
 * them in python3, git and sqlite3 runs (measured); 16384 entries keep
 * those at a load under 10 %, 2 ways make a hot pair of addresses in one
 * set harmless, and a miss only costs a recomputation, never a wrong
 * answer.
 * A fixed table needs no resizing protocol on the lock-free read side.
 *
 * Entries are single words (tag + rule, unwind_cache.h) rather than
 * {key, rule} pairs: a pair read with a per-entry seqlock (key, rule,
 * fence, key again) can be fooled when the entry is rewritten to another
 * address and back to the same one between the reader's two key loads
 * (ABA: the rule read belongs to the other address).  One word cannot be
 * torn, so readers need no protocol at all.
 *
 * Flushes: after every dlclose (hook_dl.c), and when the publisher sees
 * the loader's unload count (dlpi_subs) change (unwind_backtrace.h): glibc
 * unloads some objects without the interposed dlclose (iconv's gconv
 * modules).  Such an unload is noticed within one publish interval, so in
 * between, an object loaded where the unloaded one was can be walked with
 * stale rules: a wrong trace, or a fallback when a walk's sanity checks
 * catch it.  The known full fix, not done: bound every walk by the
 * thread's stack top, so that no stale rule can send it outside the
 * stack, and revalidate rules against the object they came from.
 *
 * Writers (misses) and the flush are serialised by a spinlock that guards
 * a few stores only; a writer that finds it taken skips caching (the rule
 * it computed is still used), so no hook ever waits for it, not even a
 * signal handler that interrupted the holder on the same thread.
 */
#include "unwind_cache.h"

#include "core_os_memory.h"
#include "core_spinlock.h"
#include "unwind_cfi.h"

#include <sys/mman.h>

#define TABLE_WORDS ((size_t)MT_UCACHE_WAYS << MT_UCACHE_SET_BITS)
#define TABLE_BYTES (TABLE_WORDS * sizeof(uint64_t))

_Atomic uint64_t *mt_ucache_table;
static mt_spinlock g_lock;
/* Bumped by every flush, under g_lock.  See fill(). */
_Atomic uint64_t mt_ucache_gen;

bool mt_ucache_init(void)
{
    if (!mt_ucache_table)
        mt_ucache_table = mt_os_alloc(TABLE_BYTES);
    return mt_ucache_table != NULL;
}

/* The set of key, and the tag its entries carry (unwind_cache.h). */
static _Atomic uint64_t *set_of(_Atomic uint64_t *table, uint64_t key, uint64_t *tag)
{
    *tag = mt_ucache_tag(key);
    return (_Atomic uint64_t *)mt_ucache_set(table, key);
}

/* Stores rule for key, way 0 first; the address in way 0, if another,
 * moves to way 1 (the older one leaves).  Under g_lock. */
static void store_locked(_Atomic uint64_t *table, uint64_t key, uint64_t rule)
{
    uint64_t tag;
    _Atomic uint64_t *set = set_of(table, key, &tag);
    uint64_t w0 = atomic_load_explicit(&set[0], memory_order_relaxed);
    if (w0 && (w0 ^ tag) - 1 >= MT_RULE_MASK)
        atomic_store_explicit(&set[1], w0, memory_order_relaxed);
    atomic_store_explicit(&set[0], tag ^ rule, memory_order_relaxed);
}

/* Memory order, the flush against a fill that computed its rule from an
 * object that a concurrent dlclose unloads:
 *  - the fill reads the generation (acquire) BEFORE it looks the address
 *    up, and stores only if the generation is unchanged, checked under
 *    g_lock;
 *  - the flush runs after the real dlclose returned, bumps the generation
 *    (release) and clears the table, both under g_lock.
 * If the fill's store comes first (lock order), the flush's clear removes
 * it.  If the flush comes first, the fill sees the new generation under
 * the lock, unless it had already read the new one before its lookup:
 * then the acquire load makes everything the dlclose did before the bump
 * (the object's removal) visible to that lookup, which cannot find the
 * unloaded object any more.  Either way no rule of an unloaded object
 * survives the flush. */
static uint64_t fill(_Atomic uint64_t *table, uint64_t key, bool is_return)
{
    uint64_t gen = atomic_load_explicit(&mt_ucache_gen, memory_order_acquire);
    uint64_t rule = mt_cfi_rule(key, is_return);
    if (!mt_spin_trylock(&g_lock))
        return rule;
    if (atomic_load_explicit(&mt_ucache_gen, memory_order_relaxed) == gen)
        store_locked(table, key, rule);
    mt_spin_unlock(&g_lock);
    return rule;
}

uint64_t mt_ucache_rule(uint64_t key, bool is_return)
{
    _Atomic uint64_t *table = mt_ucache_table;
    if (!table || key >> MT_UCACHE_ADDR_BITS)
        return mt_cfi_rule(key, is_return);
    uint64_t tag;
    _Atomic uint64_t *set = set_of(table, key, &tag);
    for (unsigned way = 0; way < MT_UCACHE_WAYS; way++) {
        uint64_t r = atomic_load_explicit(&set[way], memory_order_relaxed) ^ tag;
        if (r - 1 < MT_RULE_MASK) /* same tag, not empty: usual or special */
            return r;
    }
    return fill(table, key, is_return);
}

/* Readers running meanwhile see old words or zeros (misses), never a torn
 * word.  MADV_DONTNEED gives the pages back and makes them read as zeros;
 * if it fails, the words are cleared one by one. */
void mt_ucache_flush(void)
{
    _Atomic uint64_t *table = mt_ucache_table;
    if (!table)
        return;
    mt_spin_lock(&g_lock);
    atomic_fetch_add_explicit(&mt_ucache_gen, 1, memory_order_release);
    if (madvise((void *)table, TABLE_BYTES, MADV_DONTNEED) != 0)
        for (size_t i = 0; i < TABLE_WORDS; i++)
            atomic_store_explicit(&table[i], 0, memory_order_relaxed);
    mt_spin_unlock(&g_lock);
}

void mt_ucache_lock(void)
{
    mt_spin_lock(&g_lock);
}

void mt_ucache_unlock(void)
{
    mt_spin_unlock(&g_lock);
}
