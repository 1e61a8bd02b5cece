/* core_thread_state.c -- per-thread state of the hooks, recycled across threads.
 *
 * A thread's state is mmap'd on its first tracked allocation and handed
 * back to a free list by a pthread key destructor when the thread exits, so
 * programs that create millions of short threads use a bounded amount.
 * pthread_key_create/setspecific are called with mt_tls_in_hook set, so if
 * they allocate, the allocation passes through untracked.
 */
#include "core_thread_state.h"

#include "core_os_memory.h"
#include "core_sample.h"
#include "record_buffer.h"
#include "core_spinlock.h"
#include "core_state.h"

#include <pthread.h>
#include <string.h>

MT_TLS mt_tls_hot mt_tls_h MT_TLS_HOT_ALIGN = MT_TLS_HOT_INIT;
MT_TLS bool mt_tls_exiting;
MT_TLS unsigned mt_tls_dl_depth;

static pthread_key_t g_key;
static mt_spinlock g_free_lock;
static mt_thread *g_free_list;
static _Atomic(mt_thread *) g_all; /* every record ever made, newest first */

/* A record's thread no longer counts into h (its TLS block): h's counts
 * go into the record.  Under g_free_lock, or single-threaded. */
static void fold_hot(mt_thread *t, mt_tls_hot *h)
{
    mt_exact_add(&t->exact_allocs, h->fast_allocs);
    mt_exact_add(&t->exact_bytes, h->fast_bytes);
    mt_exact_add(&t->exact_frees, h->fast_frees);
    h->fast_allocs = h->fast_bytes = h->fast_frees = 0;
    atomic_store_explicit(&t->hot, NULL, memory_order_relaxed);
}

/* Gives t back; first, if it is this thread's own record, its TLS counts
 * go into it (the TLS block dies with the thread). */
static void push_free(mt_thread *t)
{
    mt_spin_lock(&g_free_lock);
    if (atomic_load_explicit(&t->hot, memory_order_relaxed) == &mt_tls_h)
        fold_hot(t, &mt_tls_h);
    t->next_free = g_free_list;
    g_free_list = t;
    mt_spin_unlock(&g_free_lock);
}

/* A thread's state and its walk memo after it (unwind_memo.h), sized by
 * the depth, which is fixed for the life of the process. */
static size_t thread_bytes(void)
{
    return sizeof(mt_thread) + mt_walk_memo_bytes(mt_g.cfg.depth);
}

static mt_thread *pop_free(void)
{
    mt_spin_lock(&g_free_lock);
    mt_thread *t = g_free_list;
    if (t)
        g_free_list = t->next_free;
    mt_spin_unlock(&g_free_lock);
    if (t) { /* a fresh state, but the exact counts and the list link stay
              * (the publisher reads them meanwhile) */
        size_t keep_lo = offsetof(mt_thread, exact_allocs),
               keep_hi = offsetof(mt_thread, last_alloc);
        memset(t, 0, keep_lo);
        memset((char *)t + keep_hi, 0, thread_bytes() - keep_hi);
    }
    return t;
}

/* Key destructor at thread exit.  Runs with mt_tls_in_hook set, so that a
 * signal handler allocating meanwhile passes through instead of spinning
 * on g_free_lock, which this thread holds.  MT_IN_OWN: a handler's free
 * meanwhile is freed at once, never queued on t (free_nested queues only
 * under MT_IN_HOOK, for the hook's own leave to drain, and no hook will
 * leave here: t goes back to the free list, the queue with it).  A
 * handler's allocation here is counted as untracked, its free as an
 * unknown one (hook_nested.h mt_nested_own_is_program; docs/pitfalls.md). */
static void thread_release(void *arg)
{
    mt_thread *t = arg;
    int was = mt_in_hook_set(MT_IN_OWN);
    mt_tls_exiting = true;
    if (mt_tls_thread == t) {
        mt_sample_disarm(); /* the fast paths count into mt_tls_thread */
        mt_tls_thread = NULL;
    }
    /* Deferred frees can only be pending inside a hook, never here. */
    push_free(t);
    /* The thread no longer counts (a thread pool's churn made "threads:
     * 201" of a process with 2); its later calls are transient, uncounted. */
    atomic_fetch_sub_explicit(&mt_g.thread_count, 1, memory_order_relaxed);
    mt_ring_retire_mine(); /* a recording's ring goes back to the writer */
    mt_in_hook_restore(was);
}

bool mt_threads_init(void)
{
    return pthread_key_create(&g_key, thread_release) == 0;
}

/* Links a new record into g_all (release: its zeroed counters first). */
static void link_all(mt_thread *t)
{
    mt_thread *head = atomic_load_explicit(&g_all, memory_order_relaxed);
    do
        t->next_all = head;
    while (!atomic_compare_exchange_weak_explicit(&g_all, &head, t, memory_order_release,
                                                  memory_order_relaxed));
}

static uint64_t load_fast(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED); /* written by one add instruction */
}

/* Under g_free_lock, so that no thread's TLS block dies while it is read
 * (push_free folds it in and unlinks it under the same lock): a thread
 * that exits meanwhile waits for this walk. */
void mt_threads_exact(mt_exact_totals *out)
{
    *out = (mt_exact_totals){0, 0, 0};
    mt_spin_lock(&g_free_lock);
    for (mt_thread *t = atomic_load_explicit(&g_all, memory_order_acquire); t; t = t->next_all) {
        out->allocs += atomic_load_explicit(&t->exact_allocs, memory_order_relaxed);
        out->bytes += atomic_load_explicit(&t->exact_bytes, memory_order_relaxed);
        out->frees += atomic_load_explicit(&t->exact_frees, memory_order_relaxed);
        const mt_tls_hot *h = atomic_load_explicit(&t->hot, memory_order_acquire);
        if (h) {
            out->allocs += load_fast(&h->fast_allocs);
            out->bytes += load_fast(&h->fast_bytes);
            out->frees += load_fast(&h->fast_frees);
        }
    }
    mt_spin_unlock(&g_free_lock);
}

void mt_threads_fork_child(void)
{
    /* The child has one thread: the forking one, counted if it has its own
     * record (the parent's other threads are not there to leave). */
    atomic_store_explicit(&mt_g.thread_count, mt_tls_thread ? 1u : 0u, memory_order_relaxed);
    for (mt_thread *t = atomic_load_explicit(&g_all, memory_order_acquire); t; t = t->next_all) {
        mt_tls_hot *h = atomic_load_explicit(&t->hot, memory_order_relaxed);
        if (h && h != &mt_tls_h)
            fold_hot(t, h);
    }
}

/* glibc's pthread_setspecific keeps a key below 32 in the thread's own
 * first block of slots: no allocation, no lock.  A later key's block of 32
 * slots is calloc'd at its first use, and only that call is memtop's own
 * allocation (MT_IN_OWN, not counted: it returns into libc).  Otherwise in_hook stays as
 * hook_enter set it (MT_IN_HOOK), so that a signal handler's allocation
 * meanwhile is the program's, counted as untracked, not taken for
 * memtop's: pitfall_sigcount lost one handler's three blocks here, one run
 * in three, and now forces a handler into this call.  (Holding the
 * program's signals back instead would deadlock a program that stops its
 * threads with a signal while this one waits for the arena's lock.) */
#define KEY_FIRST_BLOCK 32u

static int set_key(mt_thread *t)
{
    if (MT_LIKELY((unsigned)g_key < KEY_FIRST_BLOCK))
        return pthread_setspecific(g_key, t);
    int was = mt_in_hook_set(MT_IN_OWN);
    int err = pthread_setspecific(g_key, t);
    mt_in_hook_restore(was);
    return err;
}

mt_thread *mt_thread_acquire(void)
{
    mt_thread *t = pop_free();
    if (!t) {
        if (!(t = mt_os_alloc(thread_bytes())))
            return NULL;
        link_all(t);
    }
    mt_sample_seed(t);
    t->walk = (mt_walk_memo *)(void *)(t + 1);
    mt_walk_memo_init(t->walk, mt_g.cfg.depth);
    if (mt_tls_exiting) {
        /* After our key destructor ran (glibc frees its TSD blocks later):
         * borrow a state for this one call; hook_leave gives it back. */
        t->transient = true;
        return t;
    }
    atomic_fetch_add_explicit(&mt_g.thread_count, 1, memory_order_relaxed);
    int err = set_key(t);
    if (MT_UNLIKELY(err)) {
        /* No key destructor would fold this thread's TLS counts in before
         * its TLS block dies: a transient record, never armed. */
        atomic_fetch_sub_explicit(&mt_g.thread_count, 1, memory_order_relaxed);
        t->transient = true;
        return t;
    }
    /* release: the publisher reads the block's counts (zero or folded) */
    atomic_store_explicit(&t->hot, &mt_tls_h, memory_order_release);
    mt_tls_thread = t;
    return t;
}

void mt_thread_return(mt_thread *t)
{
    push_free(t);
}

void mt_threads_lock_all(void)
{
    mt_spin_lock(&g_free_lock);
}

void mt_threads_unlock_all(void)
{
    mt_spin_unlock(&g_free_lock);
}
