/* record_buffer.c -- per-thread event rings of a recording (see .h).
 *
 * Producer: the owning thread appends at head and publishes head with
 * release; consumer: the writer reads up to head (acquire), then publishes
 * tail (release).  A signal handler that interrupts an append on the same
 * thread sees `busy` and drops its event (counted): it may never wait nor
 * touch the slot being written.  A full ring makes the hook wait at most
 * MT_RING_WAIT_NS for the writer (or drain synchronously when there is no
 * writer thread yet), then drop and count.
 */
#define _GNU_SOURCE
#include "record_buffer.h"

#include "os_memory.h"
#include "record_writer.h"
#include "thread_state.h"

#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_RING_WAIT_NS 1000000ull /* the drop policy's bounded wait: 1 ms */

static _Atomic(mt_rec_ring *) g_rings;
static MT_TLS mt_rec_ring *tls_ring;

mt_rec_ring *mt_ring_first(void)
{
    return atomic_load_explicit(&g_rings, memory_order_acquire);
}

static mt_rec_ring *take_free(int tid)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        int st = MT_RING_FREE;
        if (atomic_load_explicit(&r->state, memory_order_relaxed) == MT_RING_FREE &&
            atomic_compare_exchange_strong(&r->state, &st, MT_RING_OWNED)) {
            r->tid = tid;
            r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
            return r;
        }
    }
    return NULL;
}

static mt_rec_ring *make_ring(int tid)
{
    mt_rec_ring *r = mt_os_alloc(sizeof *r);
    if (!r)
        return NULL;
    r->tid = tid;
    atomic_store_explicit(&r->state, MT_RING_OWNED, memory_order_relaxed);
    mt_rec_ring *head = atomic_load_explicit(&g_rings, memory_order_relaxed);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak_explicit(&g_rings, &head, r, memory_order_release,
                                                  memory_order_relaxed));
    return r;
}

mt_rec_ring *mt_ring_mine(void)
{
    mt_rec_ring *r = tls_ring;
    if (MT_LIKELY(r))
        return r;
    int tid = (int)syscall(SYS_gettid);
    r = take_free(tid);
    if (!r)
        r = make_ring(tid);
    tls_ring = r;
    return r;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void count_lost(mt_rec_ring *r, const mt_rec_event *e)
{
    if (e->kind == 0) {
        atomic_fetch_add_explicit(&r->lost_alloc_count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->lost_alloc_bytes, e->size, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&r->lost_free_count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->lost_free_bytes, e->size, memory_order_relaxed);
    }
    mt_recw_note_dropped(1);
}

/* Waits (bounded) until the ring has room; false if it still has none. */
static bool wait_room(mt_rec_ring *r, uint64_t head)
{
    uint64_t deadline = 0;
    for (;;) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head - r->tail_cache < MT_RING_SLOTS)
            return true;
        if (!mt_recw_active())
            return false; /* the recording stopped meanwhile */
        if (!mt_recw_thread_running() && mt_recw_drain_sync())
            continue;
        mt_recw_kick();
        uint64_t now = mono_ns();
        if (!deadline)
            deadline = now + MT_RING_WAIT_NS;
        else if (now >= deadline)
            return false;
        sched_yield();
    }
}

bool mt_ring_push(mt_rec_ring *r, const mt_rec_event *e, bool may_wait)
{
    if (r->busy) { /* a signal handler interrupted an append on this thread */
        count_lost(r, e);
        return false;
    }
    r->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* Inside dl_iterate_phdr this thread holds the loader's lock, which the
     * writer needs to scan modules: waiting there only stalls both. */
    may_wait = may_wait && !mt_tls_dl_depth;
    if (MT_UNLIKELY(head - r->tail_cache >= MT_RING_SLOTS) &&
        !(may_wait ? wait_room(r, head)
                   : head - (r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire)) <
                         MT_RING_SLOTS)) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        r->busy = 0;
        count_lost(r, e);
        return false;
    }
    r->ev[head & (MT_RING_SLOTS - 1)] = *e;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->busy = 0;
    if (MT_UNLIKELY(((head + 1) & (MT_RING_SLOTS / 4 - 1)) == 0))
        mt_recw_kick(); /* a quarter of a ring more: wake a sleeping writer */
    return true;
}

void mt_ring_reclaim_dead(void)
{
    pid_t pid = getpid();
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        if (atomic_load_explicit(&r->state, memory_order_acquire) != MT_RING_OWNED)
            continue;
        if (atomic_load_explicit(&r->head, memory_order_acquire) !=
            atomic_load_explicit(&r->tail, memory_order_relaxed))
            continue; /* drain first */
        if (syscall(SYS_tgkill, pid, r->tid, 0) == 0)
            continue; /* still alive (or its tid was reused: kept until that one exits) */
        atomic_store_explicit(&r->state, MT_RING_FREE, memory_order_release);
    }
}

void mt_rings_discard(void)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        atomic_store_explicit(&r->tail, atomic_load_explicit(&r->head, memory_order_acquire),
                              memory_order_release);
        atomic_store_explicit(&r->lost_alloc_count, 0, memory_order_relaxed);
        atomic_store_explicit(&r->lost_alloc_bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&r->lost_free_count, 0, memory_order_relaxed);
        atomic_store_explicit(&r->lost_free_bytes, 0, memory_order_relaxed);
    }
}

uint64_t mt_rings_discard_as_lost(void)
{
    uint64_t total = 0;
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        for (; tail != head; tail++)
            count_lost(r, &r->ev[tail & (MT_RING_SLOTS - 1)]);
        total += head - atomic_load_explicit(&r->tail, memory_order_relaxed);
        atomic_store_explicit(&r->tail, head, memory_order_release);
    }
    return total;
}

void mt_rings_child_reset(void)
{
    tls_ring = NULL;
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        r->busy = 0;
        atomic_store_explicit(&r->state, MT_RING_FREE, memory_order_relaxed);
    }
    mt_rings_discard();
}
