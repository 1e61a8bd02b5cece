/* hook_enter.h -- entering and leaving memtop from an allocation hook:
 * the exported hooks (hook_libc.c) and the hooks memtop installs into other
 * allocators (alloc_jemalloc.c) share them, so that a block is counted
 * once whichever way it came (a thread already inside memtop passes
 * through). */
#ifndef MT_HOOK_ENTER_H
#define MT_HOOK_ENTER_H

#include "core_common.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "core_tracker.h"
#include "core_sample.h"

#include <errno.h>

/* Tracking is not running: start it if it may start here.  Never inside
 * dl_iterate_phdr, maybe holding the loader's lock (starting unwinds,
 * dlopens and creates threads): such a call passes through like any call
 * before tracking starts. */
static inline bool hook_start(void)
{
    int st = atomic_load_explicit(&mt_g.state, memory_order_relaxed);
    if (st == MT_ST_OFF || mt_tls_dl_depth)
        return false;
    int saved = errno; /* starting up may set it (e.g. no segment) */
    bool ready = mt_ensure_ready();
    errno = saved;
    return ready;
}

/* Enters memtop on this thread, or returns NULL to pass through. */
static inline mt_thread *hook_enter(void)
{
    if (MT_UNLIKELY(mt_tls_in_hook))
        return NULL;
    if (MT_UNLIKELY(atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY) &&
        !hook_start())
        return NULL;
    mt_thread *t = mt_tls_thread;
    mt_tls_in_hook = MT_IN_HOOK;
    mt_gate_close(); /* in_hook was clear */
    if (MT_UNLIKELY(!t) && !(t = mt_thread_acquire())) {
        mt_in_hook_restore(0);
        return NULL;
    }
    return t;
}

/* The real call of a hook that entered memtop (in_hook MT_IN_HOOK), run as
 * MT_IN_REAL (core_thread_state.h): a statement, e.g. HOOK_REAL(p =
 * real(n)). */
#define HOOK_REAL(expr)                                                                            \
    do {                                                                                           \
        MT_ASSERT(mt_tls_in_hook == MT_IN_HOOK);                                                   \
        mt_tls_in_hook = MT_IN_REAL;                                                               \
        atomic_signal_fence(memory_order_seq_cst);                                                 \
        expr;                                                                                      \
        atomic_signal_fence(memory_order_seq_cst);                                                 \
        mt_tls_in_hook = MT_IN_HOOK;                                                               \
    } while (0)

static inline void hook_leave(mt_thread *t)
{
    if (MT_UNLIKELY(atomic_load_explicit(&t->ndeferred, memory_order_relaxed)))
        mt_drain_deferred(t);
    if (MT_UNLIKELY(t->transient))
        mt_thread_return(t);
    mt_in_hook_restore(0);
}

/* Sampled mode's fast paths (core_sample.h): a call that is not to be
 * tracked skips hook_enter/hook_leave.  They read mt_tls_h only (one GOT
 * load): their thread's fast paths are armed, which a slow path of sampled
 * mode did (mt_sample_skip, mt_sample_arm: tracking was ready, so the real
 * allocator is known, and the thread has a record of its own in
 * mt_tls_thread), and open, so the thread is not inside memtop (in_hook
 * closes them: mt_gate_close; they need not test it).  A disarmed or
 * closed thread's countdown is below every size and its filter mask 0, so in
 * exact mode, before tracking is ready, inside memtop and in a fork child
 * until its first hook restarts it, each costs one comparison.  Counted
 * in the thread's TLS block (fast_*, summed through its record's hot),
 * with single add instructions (HOOK_TLS_ADD), which a signal handler
 * cannot split.  A fast path that calls an allocator which may call
 * memtop's hooks back sets in_hook and closes the gates for that call
 * with mt_gate_hold, which saves what they were and puts it back: a
 * signal handler may run one while in_hook is already set and the gates
 * not yet closed (mt_gate_close). */

/* The fast paths' tests, reading the TLS words in place on x86-64 (GCC
 * would load them into a register and test that): sample_left > size
 * (signed); a filter slot's bit clear. */
#if defined(__x86_64__)
static inline bool hook_tls_left_above(size_t size)
{
    bool r;
    __asm__("cmpq %2, %1" : "=@ccg"(r) : "m"(mt_tls_h.sample_left), "r"(size));
    return r;
}
/* Bit i of the bit array words: a word load (whole: as atomic as the
 * relaxed load it stands for) and a bt, which takes the bit number
 * modulo 64 itself. */
static inline bool hook_bit_clear(const _Atomic uint64_t *words, size_t i)
{
    bool r;
    __asm__("btq %2, %1" : "=@ccnc"(r) : "r"(*(const uint64_t *)&words[i / 64]), "r"(i));
    return r;
}
/* i & sfilter_mask, the mask read in place (a 32-bit and clears the upper
 * half: no zero extension follows). */
static inline size_t hook_tls_slot_mask(uint32_t i)
{
    size_t r = i;
    __asm__("andl %1, %k0" : "+r"(r) : "m"(mt_tls_h.sfilter_mask));
    return r;
}
/* sample_left -= n, one instruction (whole for a signal handler), modulo 2^64. */
static inline void hook_tls_left_sub(uint64_t n)
{
    __asm__("subq %1, %0" : "+m"(mt_tls_h.sample_left) : "er"(n));
}
/* mt_tls_h.field += n, one instruction addressing the TLS word in place. */
#define HOOK_TLS_ADD(field, n) __asm__("addq %1, %0" : "+m"(mt_tls_h.field) : "er"((uint64_t)(n)))
#else
static inline bool hook_tls_left_above(size_t size)
{
    return (int64_t)size < mt_tls_h.sample_left;
}
static inline bool hook_bit_clear(const _Atomic uint64_t *words, size_t i)
{
    return !mt_sfilter_bit(words, i);
}
static inline size_t hook_tls_slot_mask(uint32_t i)
{
    return i & mt_tls_h.sfilter_mask;
}
static inline void hook_tls_left_sub(uint64_t n)
{
    mt_tls_h.sample_left = (int64_t)((uint64_t)mt_tls_h.sample_left - n);
}
#define HOOK_TLS_ADD(field, n)                                                                     \
    __atomic_store_n(&mt_tls_h.field, mt_tls_h.field + (uint64_t)(n), __ATOMIC_RELAXED)
#endif

/* An allocation of size bytes that the countdown does not reach.  A size
 * of 2^63 or more compares as negative, so it takes the fast path, where
 * the real allocator fails it (hook_fast_uncount). */
static inline bool hook_fast_unsampled(size_t size)
{
    return hook_tls_left_above(size); /* exact mode, inside memtop: one test */
}

/* Counts an unsampled allocation of size bytes before its real call
 * (mt_real.malloc_fast: inside memtop if the allocator reports to memtop's
 * other hooks, jemalloc's, so that it is not counted twice), so that the
 * fast path keeps nothing across that call but the size;
 * hook_fast_uncount takes it back if the call fails.  Each update is one
 * instruction (HOOK_TLS_ADD): whole with respect to a signal handler. */
static inline void hook_fast_count(size_t size)
{
    hook_tls_left_sub(size);
    HOOK_TLS_ADD(fast_allocs, 1);
    HOOK_TLS_ADD(fast_bytes, size);
}

static inline void hook_fast_uncount(size_t size)
{
    hook_tls_left_sub((uint64_t)0 - size);
    HOOK_TLS_ADD(fast_allocs, (uint64_t)-1);
    HOOK_TLS_ADD(fast_bytes, (uint64_t)0 - size);
}

/* A free the fast path let through, counted. */
static inline void hook_fast_count_free(void)
{
    HOOK_TLS_ADD(fast_frees, 1);
}

/* After the real call of an unsampled allocation p (NULL: failed), for the
 * hooks that count after the call. */
static inline void hook_fast_counted(const void *p, size_t size)
{
    if (MT_LIKELY(p))
        hook_fast_count(size);
}

/* A free of p, certainly not a sampled block's.  Also false for NULL and
 * the boot arena's blocks: their filter slots are pinned
 * (mt_sfilter_pin, mt_boot_pin_all), so free need not test them first. */
static inline bool hook_fast_free(const void *p)
{
    /* Closed or disarmed, the mask is 0 and slot 0's bit set: no test of
     * its own (exact mode, inside memtop: the same one test). */
    return hook_bit_clear(mt_tls_h.sfilter, hook_tls_slot_mask((uint32_t)mt_sfilter_slot(p)));
}

/* A pass-through allocation of the program's while tracking runs is one we
 * cannot attribute.  The callers count the program's only: memtop's own
 * work's (MT_IN_OWN) are told apart by where they return
 * (hook_nested.h mt_nested_own_is_program). */
static inline void count_untracked(void *p)
{
    if (p && atomic_load_explicit(&mt_g.state, memory_order_relaxed) == MT_ST_READY)
        atomic_fetch_add_explicit(&mt_g.untracked_alloc_count, 1, memory_order_relaxed);
}

#endif
