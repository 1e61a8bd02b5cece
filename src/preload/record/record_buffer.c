/* record_buffer.c -- per-thread event rings of a recording (see .h).
 *
 * Producer: the owning thread appends at head and publishes head with
 * release; consumer: the writer reads up to head (acquire), then publishes
 * tail (release).  A signal handler that interrupts an append on the same
 * thread sees `busy` and drops its event (counted): it may never wait nor
 * touch the slot being written.
 *
 * Chunks: a full chunk is followed by the ring's spare (handed back by the
 * writer, release/acquire through `spare`), or by itself again when the
 * writer has drained it (tail == its end, acquire: the writer no longer
 * reads it), or by a new chunk within the bounds (.h).  Only when none is
 * to be had does the hook wait for the writer (next_chunk: asleep on the
 * ring's futex, not while the disk is behind, at most MT_RING_WAIT_MAX_NS
 * for a writer that sleeps and MT_RING_WAIT_WORK_MAX_NS for one that works,
 * plus one MT_RING_NAP_NS), or drain
 * synchronously when there is no writer thread yet, then drop and count.  The writer reads a
 * chunk's `base` only for indices below a head it read with acquire, so the producer's plain store
 * of `base` (before its release of head) is seen in time; it hands a chunk back only once it has
 * read past its end (the next chunk exists then).
 *
 * Taking a ring (a thread's first event) holds the free lists' spinlock; a
 * signal handler that interrupts that on the same thread drops its event
 * (counted) rather than spin on the lock.  Retiring happens only when no
 * ring_record call of the thread is in progress (tls_depth), so a
 * handler never retires a ring its interrupted caller is appending to.
 */
#define _GNU_SOURCE
#include "record_buffer.h"

#include "record.h"

#include "core_os_memory.h"
#include "record_writer.h"
#include "core_spinlock.h"
#include "core_thread_state.h"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MT_RING_WAIT_MAX_NS /* a measuring build may set it (docs/performance.md, "recdrops2") */
#define MT_RING_WAIT_MAX_NS 1000000000ull /* a hook's wait for a writer that sleeps */
#endif
#define MT_RING_WAIT_WORK_MAX_NS 5000000000ull    /* ... for one that works: no wait is longer */
#define MT_RING_LOOK_NS (MT_RING_WAIT_MAX_NS / 2) /* past the cap, judged again after this */
#define MT_RING_NAP_NS 10000000ull                /* a waiting hook looks again after this long */
_Static_assert(MT_RING_WAIT_WORK_MAX_NS >= MT_RING_WAIT_MAX_NS,
               "a working writer is waited for longer");
#define MT_RING_CHUNK_BYTES sizeof(mt_rec_chunk)
#define MT_RING_HDR_BYTES ((sizeof(mt_rec_ring) + MT_CACHELINE - 1) & ~(size_t)(MT_CACHELINE - 1))
#define MT_RING_SLAB_BYTES (64u << 10) /* headers are cut from slabs */

static _Atomic(mt_rec_ring *) g_rings;
/* Free rings with a buffer (at most MT_RING_FREE_MAX), and without. */
static mt_spinlock g_free_lock;
static mt_rec_ring *g_free, *g_bare;
static unsigned g_nfree;
static unsigned char *g_slab;
static _Atomic uint32_t g_chunks; /* chunks of all rings */
static mt_rec_lost g_unowned;     /* events that found no ring */
static size_t g_slab_left;

static MT_TLS mt_rec_ring *tls_ring;    /* OWNED by this thread */
static MT_TLS mt_rec_ring *tls_retired; /* retired by this exiting thread */
static MT_TLS uint64_t tls_retired_gen;
static MT_TLS unsigned tls_depth; /* ring_record calls in progress */
static MT_TLS int tls_taking;     /* inside take_ring */

mt_rec_ring *mt_ring_first(void)
{
    return atomic_load_explicit(&g_rings, memory_order_acquire);
}

/* A header from the slab; free lock held. */
static mt_rec_ring *new_header(void)
{
    if (g_slab_left < MT_RING_HDR_BYTES) {
        g_slab = mt_os_alloc(MT_RING_SLAB_BYTES);
        g_slab_left = g_slab ? MT_RING_SLAB_BYTES : 0;
        if (!g_slab)
            return NULL;
    }
    mt_rec_ring *r = (mt_rec_ring *)(void *)g_slab;
    g_slab += MT_RING_HDR_BYTES;
    g_slab_left -= MT_RING_HDR_BYTES;
    return r;
}

static void link_header(mt_rec_ring *r)
{
    mt_rec_ring *head = atomic_load_explicit(&g_rings, memory_order_relaxed);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak_explicit(&g_rings, &head, r, memory_order_release,
                                                  memory_order_relaxed));
}

static void push_bare(mt_rec_ring *r)
{
    mt_spin_lock(&g_free_lock);
    r->next_free = g_bare;
    g_bare = r;
    mt_spin_unlock(&g_free_lock);
}

/* A new chunk for r: its first whatever the bounds (bounded: false),
 * else within MT_RING_CHUNKS_MAX and MT_RING_EXTRA_MAX.  NULL if none. */
static mt_rec_chunk *chunk_new(mt_rec_ring *r, bool bounded)
{
    uint32_t n = atomic_fetch_add_explicit(&g_chunks, 1, memory_order_relaxed);
    if (bounded &&
        (n >= MT_RING_EXTRA_MAX ||
         atomic_load_explicit(&r->nchunks, memory_order_relaxed) >= MT_RING_CHUNKS_MAX)) {
        atomic_fetch_sub_explicit(&g_chunks, 1, memory_order_relaxed);
        return NULL;
    }
    mt_rec_chunk *c = mt_os_alloc(MT_RING_CHUNK_BYTES);
    if (!c) {
        atomic_fetch_sub_explicit(&g_chunks, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(&r->nchunks, 1, memory_order_relaxed);
    return c;
}

static void chunk_free(mt_rec_ring *r, mt_rec_chunk *c)
{
    mt_os_free(c, MT_RING_CHUNK_BYTES);
    atomic_fetch_sub_explicit(&r->nchunks, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&g_chunks, 1, memory_order_relaxed);
}

/* Gives a ring without a chunk its first one, starting at head. */
static bool first_chunk(mt_rec_ring *r)
{
    mt_rec_chunk *c = chunk_new(r, false);
    if (!c)
        return false;
    c->base = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    r->wchunk = r->rchunk = c;
    r->wbase = c->base;
    return true;
}

/* A free ring (a recycled one first), owned by tid from now on. */
static mt_rec_ring *take_ring(int tid)
{
    bool fresh = false;
    mt_spin_lock(&g_free_lock);
    mt_rec_ring *r = g_free;
    if (r) {
        g_free = r->next_free;
        g_nfree--;
    } else if ((r = g_bare)) {
        g_bare = r->next_free;
    } else {
        r = new_header();
        fresh = r != NULL;
    }
    mt_spin_unlock(&g_free_lock);
    if (!r)
        return NULL;
    if (!r->wchunk && !first_chunk(r)) {
        if (fresh)
            link_header(r);
        push_bare(r);
        return NULL;
    }
    r->tid = tid;
    r->busy = 0;
    uint64_t st = atomic_load_explicit(&r->state, memory_order_relaxed);
    atomic_store_explicit(&r->state, MT_RING_GEN(st) << 2 | MT_RING_OWNED, memory_order_release);
    if (fresh)
        link_header(r);
    return r;
}

/* The ring this exiting thread retired, if the writer has not made it
 * free yet.  Its state is still OWNED (our generation) when a retire of
 * ours was interrupted before its CAS: ours too. */
static mt_rec_ring *take_back(void)
{
    mt_rec_ring *r = tls_retired;
    if (!r)
        return NULL;
    uint64_t own = tls_retired_gen << 2 | MT_RING_OWNED;
    uint64_t st = tls_retired_gen << 2 | MT_RING_RETIRING;
    if (atomic_load_explicit(&r->state, memory_order_relaxed) == own ||
        atomic_compare_exchange_strong_explicit(&r->state, &st, own, memory_order_acquire,
                                                memory_order_relaxed))
        return r;
    tls_retired = NULL; /* made free: all its events are written */
    return NULL;
}

static mt_rec_ring *__attribute__((noinline)) ring_slow(void)
{
    if (tls_taking)
        return NULL; /* a signal handler interrupted this thread's take_ring */
    tls_taking = 1;
    atomic_signal_fence(memory_order_seq_cst);
    mt_rec_ring *r = take_back();
    if (!r)
        r = take_ring((int)syscall(SYS_gettid));
    tls_ring = r;
    atomic_signal_fence(memory_order_seq_cst);
    tls_taking = 0;
    return r;
}

void mt_ring_retire_mine(void)
{
    mt_rec_ring *r = tls_ring;
    if (!r)
        return;
    uint64_t st = atomic_load_explicit(&r->state, memory_order_relaxed); /* ours: OWNED */
    tls_retired_gen = MT_RING_GEN(st);
    tls_retired = r;
    atomic_signal_fence(memory_order_seq_cst);
    tls_ring = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    /* Release: the writer that sees RETIRING sees every event and lost
     * count before it.  Fails if a signal handler retired it meanwhile. */
    atomic_compare_exchange_strong_explicit(&r->state, &st, MT_RING_GEN(st) << 2 | MT_RING_RETIRING,
                                            memory_order_release, memory_order_relaxed);
    mt_recw_kick();
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

mt_rec_lost *mt_rings_lost_unowned(void)
{
    return &g_unowned;
}

void mt_rec_lost_zero(mt_rec_lost *l)
{
    /* Only what differs: a fork child's reset copies no page it need not. */
    for (unsigned i = 0; i < MT_LOST_N; i++)
        MT_RESET_ATOMIC(l->n[i], 0);
    for (unsigned i = 0; i < MT_DAT_LOST_CAUSES; i++)
        MT_RESET_ATOMIC(l->why[i], 0);
}

/* Takes the causes of `events` dropped events from l->why, cause by cause
 * (mt_rec_lost: every event whose count was taken has its cause there; a
 * drop in flight may have added one more, which may be taken for another
 * cause of the same ring's: the counts stay exact, the split nearly so). */
void mt_rec_lost_take_why(mt_rec_lost *l, uint64_t events, uint64_t why[MT_DAT_LOST_CAUSES])
{
    for (unsigned c = 0; c < MT_DAT_LOST_CAUSES; c++) {
        if (!events) { /* the usual case: nothing dropped, no atomic operation */
            why[c] = 0;
            continue;
        }
        uint64_t have = atomic_load_explicit(&l->why[c], memory_order_relaxed);
        why[c] = have < events ? have : events;
        atomic_fetch_sub_explicit(&l->why[c], why[c], memory_order_relaxed);
        events -= why[c];
    }
    MT_ASSERT(events == 0);
    why[MT_DAT_LOST_UNSEEN] += events; /* never, by the order of the counts */
}

/* Drops what l counted so far while hooks may still count: the counts
 * first (acquire: the causes counted before them are visible), then as
 * many causes as those events, so that a drop in flight between its cause
 * and its count keeps its cause for its count.  Zeroing both instead could
 * clear that cause and keep the count: an event without a cause
 * (mt_rec_lost_take_why's assert). */
void mt_rec_lost_discard(mt_rec_lost *l)
{
    uint64_t events = 0, why[MT_DAT_LOST_CAUSES];
    for (unsigned i = 0; i < MT_LOST_N; i++) {
        uint64_t v = atomic_exchange_explicit(&l->n[i], 0, memory_order_acquire);
        events += i == MT_LOST_AC || i == MT_LOST_FC ? v : 0;
    }
    mt_rec_lost_take_why(l, events, why);
}

/* One event dropped for `why` (MT_DAT_LOST_*): its cause before its count
 * (mt_rec_lost's order). */
static void __attribute__((noinline))
count_lost(mt_rec_lost *l, const mt_rec_event *e, unsigned why)
{
    unsigned i = mt_rev_kind(e) == MT_DAT_EV_ALLOC ? MT_LOST_AC : MT_LOST_FC;
    atomic_fetch_add_explicit(&l->why[why], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n[i + 1], mt_rev_size(e), memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n[i], 1, memory_order_release);
    mt_recw_note_dropped(1);
}

/* The full chunk at head is followed by another; false if none is to be
 * had now (module comment). */
static bool try_next_chunk(mt_rec_ring *r, uint64_t head)
{
    mt_rec_chunk *c = atomic_exchange_explicit(&r->spare, NULL, memory_order_acquire);
    if (!c && atomic_load_explicit(&r->tail, memory_order_acquire) == head) {
        r->wchunk->base = r->wbase = head; /* drained: it starts over */
        return true;
    }
    if (!c && !(c = chunk_new(r, true)))
        return false;
    c->base = head;
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&r->wchunk->next, c, memory_order_release);
    r->wchunk = c;
    r->wbase = head;
    return true;
}

/* Sleeps until the writer moved r's tail, at most MT_RING_NAP_NS (a
 * wake-up is never lost: the hook sets `waiting` before it looks at tail
 * and spare, the writer moves tail before it looks at `waiting`, a seq_cst
 * fence between on both sides; the timeout covers a chunk from elsewhere,
 * and the checks of the loop). */
static void wait_for_writer(mt_rec_ring *r, uint64_t head)
{
    uint32_t seq = atomic_load_explicit(&r->handed, memory_order_relaxed);
    atomic_store_explicit(&r->waiting, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&r->spare, memory_order_relaxed) &&
        atomic_load_explicit(&r->tail, memory_order_relaxed) != head) {
        struct timespec ts = {0, (long)MT_RING_NAP_NS};
        syscall(SYS_futex, &r->handed, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    }
    atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
}

/* Whether a hook that has waited `waited` ns for the writer gives up: at
 * MT_RING_WAIT_MAX_NS unless the writer works -- is runnable then, or ran
 * or waited for a core at least half of the wait from the hook's first nap
 * on (mt_recw_worked) -- judged again every MT_RING_LOOK_NS; at
 * MT_RING_WAIT_WORK_MAX_NS in any case.  A writer that
 * waits for a core is keeping up with the disk on a loaded machine, where
 * the 1 s cap alone dropped events; one that sleeps (a slow write, a block)
 * is given up on at 1 s.  judge: the wait at which to judge next. */
static bool wait_capped(mt_recw_look *look, uint64_t *judge, uint64_t waited, uint64_t now)
{
    if (!look->t) { /* after the first nap: the writer's share is judged from here */
        mt_recw_look_take(look, now);
        return false;
    }
    if (waited >= MT_RING_WAIT_WORK_MAX_NS)
        return true;
    if (waited < *judge)
        return false;
    *judge = waited + MT_RING_LOOK_NS;
    return !mt_recw_worked(look, now);
}

/* The drop policy, at the buffer's bound: waits for a chunk while the
 * writer works (it may be waiting for a core: the hook sleeps, which
 * gives it one), but not while the disk is behind, nor past the wait's
 * cap (wait_capped).  MT_DROP_N if a chunk came, else why not
 * (MT_DROP_*). */
static unsigned __attribute__((noinline)) next_chunk(mt_rec_ring *r, uint64_t head, bool may_wait)
{
    uint64_t start = 0;
    uint64_t judge = MT_RING_WAIT_MAX_NS;
    mt_recw_look look = {0, 0, 0};
    unsigned why = MT_DROP_N;
    for (;;) {
        if (try_next_chunk(r, head))
            break;
        if (!may_wait || !mt_recw_active()) {
            why = MT_DROP_NOWAIT; /* a signal handler, or the recording stopped meanwhile */
            break;
        }
        if (!mt_recw_thread_running() && mt_recw_drain_sync())
            continue;
        mt_recw_kick();
        uint64_t now = mono_ns();
        if (!start)
            start = now;
        else if (wait_capped(&look, &judge, now - start, now)) {
            why = MT_DROP_CAP;
            break;
        }
        if (mt_recw_disk_behind(now)) {
            why = MT_DROP_DISK;
            break;
        }
        wait_for_writer(r, head);
    }
    if (start)
        mt_recw_note_stall(mono_ns() - start);
    return why;
}

static inline __attribute__((always_inline)) bool push(mt_rec_ring *r, const mt_rec_event *e,
                                                       bool may_wait)
{
    if (r->busy) { /* a signal handler interrupted an append on this thread */
        count_lost(&r->lost, e, MT_DROP_NOWAIT);
        mt_recw_note_drop_why(MT_DROP_NOWAIT);
        return false;
    }
    r->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* Inside dl_iterate_phdr this thread holds the loader's lock, which the
     * writer needs to scan modules: waiting there only stalls both. */
    unsigned why = MT_DROP_N;
    if (MT_UNLIKELY(head - r->wbase >= MT_RING_CHUNK) &&
        (why = next_chunk(r, head, may_wait && !mt_tls_dl_depth)) != MT_DROP_N) {
        atomic_signal_fence(memory_order_seq_cst);
        r->busy = 0;
        count_lost(&r->lost, e, why);
        mt_recw_note_drop_why(why);
        return false;
    }
    /* Field by field: a struct copy went through the stack (stores of 8
     * bytes read back as 16: a store-forwarding stall per event). */
    mt_rec_event *d = &r->wchunk->ev[head - r->wbase];
    d->t_ns = e->t_ns;
    d->addr = e->addr;
    d->sizek = e->sizek;
    d->tb = e->tb;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    r->busy = 0;
    if (MT_UNLIKELY(((head + 1) & (MT_RING_CHUNK / 4 - 1)) == 0))
        mt_recw_kick(); /* a quarter of a chunk more: wake a sleeping writer */
    return true;
}

/* The whole append, with every slow case: taking a ring, a full chunk,
 * a signal handler that interrupted an append, an exiting thread. */
static void ring_record(const mt_rec_event *e, bool may_wait)
{
    tls_depth++;
    atomic_signal_fence(memory_order_seq_cst);
    mt_rec_ring *r = tls_ring;
    if (MT_UNLIKELY(!r))
        r = ring_slow();
    if (MT_LIKELY(r))
        push(r, e, may_wait);
    else {
        count_lost(&g_unowned, e, MT_DROP_NORING);
        mt_recw_note_drop_why(MT_DROP_NORING);
    }
    atomic_signal_fence(memory_order_seq_cst);
    /* After our key destructor (other keys' destructors allocate too):
     * the ring goes back to the writer after each event. */
    if (--tls_depth == 0 && MT_UNLIKELY(mt_tls_exiting))
        mt_ring_retire_mine();
}

void mt_ring_record(const mt_rec_event *e, bool may_wait)
{
    ring_record(e, may_wait);
}

static void __attribute__((noinline))
record_slow(uint64_t t_ns, uint64_t addr, uint64_t sizek, uint64_t tb, bool may_wait)
{
    mt_rec_event e = {.t_ns = t_ns, .addr = addr, .sizek = sizek, .tb = tb};
    ring_record(&e, may_wait);
}

/* After an append by the fast path: a writer to wake, a ring to retire. */
static void __attribute__((noinline)) record_after(uint64_t head)
{
    if ((head & (MT_RING_CHUNK / 4 - 1)) == 0)
        mt_recw_kick(); /* a quarter of a chunk more: wake a sleeping writer */
    if (tls_depth == 0 && mt_tls_exiting)
        mt_ring_retire_mine();
}

/* The usual append, as ring_record does it (the same signal fences and
 * depth count), with every other case handed to record_slow and the rare
 * steps after it to record_after, both as tail calls: this path then
 * saves no register and sets up no frame (12 instructions per event,
 * callgrind).  Its event's fields are stored straight into the slot. */
static inline __attribute__((always_inline)) void
record_fast(uint64_t t_ns, uint64_t addr, uint64_t sizek, uint64_t tb, bool may_wait)
{
    tls_depth++;
    atomic_signal_fence(memory_order_seq_cst);
    mt_rec_ring *r = tls_ring;
    uint64_t head = r ? atomic_load_explicit(&r->head, memory_order_relaxed) : 0;
    if (MT_UNLIKELY(!r || r->busy || head - r->wbase >= MT_RING_CHUNK)) {
        atomic_signal_fence(memory_order_seq_cst);
        tls_depth--;
        record_slow(t_ns, addr, sizek, tb, may_wait);
        return;
    }
    r->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    mt_rec_event *d = &r->wchunk->ev[head - r->wbase];
    d->t_ns = t_ns;
    d->addr = addr;
    d->sizek = sizek;
    d->tb = tb;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    r->busy = 0;
    atomic_signal_fence(memory_order_seq_cst);
    unsigned depth = --tls_depth;
    if (MT_UNLIKELY(((head + 1) & (MT_RING_CHUNK / 4 - 1)) == 0) ||
        (depth == 0 && MT_UNLIKELY(mt_tls_exiting)))
        record_after(head + 1);
}

void mt_rec_alloc(uint64_t t_ns, const void *p, uint32_t trace, uint64_t size)
{
    record_fast(t_ns, (uint64_t)(uintptr_t)p, mt_rev_pack_sizek(size, MT_DAT_EV_ALLOC, 0), trace,
                true);
}

void mt_rec_free(uint64_t t_ns, const void *p, const mt_block *b, unsigned flags, bool may_wait)
{
    /* The birth as it is (one division; the writer takes the age). */
    record_fast(t_ns, (uint64_t)(uintptr_t)p, mt_rev_pack_sizek(b->size, MT_DAT_EV_FREE, flags),
                b->trace | (b->birth_ns / 1000000u) << MT_REV_TRACE_BITS, may_wait);
}

bool mt_ring_try_free(mt_rec_ring *r, uint64_t st)
{
    if (MT_RING_STATE(st) != MT_RING_RETIRING)
        return false;
    return atomic_compare_exchange_strong_explicit(&r->state, &st,
                                                   (MT_RING_GEN(st) + 1) << 2 | MT_RING_FREE,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

void mt_ring_recycle(mt_rec_ring *r)
{
    mt_rec_chunk *spare = atomic_exchange_explicit(&r->spare, NULL, memory_order_acquire);
    if (spare)
        chunk_free(r, spare);
    mt_spin_lock(&g_free_lock);
    bool keep = g_nfree < MT_RING_FREE_MAX;
    if (keep) {
        r->next_free = g_free;
        g_free = r;
        g_nfree++;
    }
    mt_spin_unlock(&g_free_lock);
    if (keep)
        return;
    for (mt_rec_chunk *c = r->rchunk, *next; c; c = next) { /* drained: rchunk is wchunk */
        next = c == r->wchunk ? NULL : atomic_load_explicit(&c->next, memory_order_acquire);
        chunk_free(r, c);
    }
    r->wchunk = r->rchunk = NULL;
    push_bare(r);
}

/* A drained chunk goes back: as the ring's spare, or unmapped. */
static void give_back(mt_rec_ring *r, mt_rec_chunk *c)
{
    mt_rec_chunk *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&r->spare, &none, c, memory_order_release,
                                                 memory_order_relaxed))
        chunk_free(r, c);
}

void mt_ring_consumed(mt_rec_ring *r, uint64_t upto)
{
    if (upto == atomic_load_explicit(&r->tail, memory_order_relaxed))
        return;
    mt_rec_chunk *c = r->rchunk;
    while (upto - c->base > MT_RING_CHUNK) { /* read past its end: the next one exists */
        mt_rec_chunk *next = atomic_load_explicit(&c->next, memory_order_acquire);
        give_back(r, c);
        c = next;
    }
    r->rchunk = c;
    atomic_store_explicit(&r->tail, upto, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst); /* tail before waiting (wait_for_writer) */
    if (atomic_load_explicit(&r->waiting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&r->handed, 1, memory_order_relaxed);
        syscall(SYS_futex, &r->handed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static void mark_cut_lost(mt_rec_lost *l)
{
    for (unsigned i = 0; i < MT_LOST_N; i++)
        l->cut[i] = atomic_load_explicit(&l->n[i], memory_order_acquire);
}

void mt_rings_mark_cut(void)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        r->cut = atomic_load_explicit(&r->head, memory_order_acquire);
        mark_cut_lost(&r->lost);
    }
    mark_cut_lost(&g_unowned);
}

void mt_rings_discard(void)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        mt_ring_consumed(r, atomic_load_explicit(&r->head, memory_order_acquire));
        mt_rec_lost_discard(&r->lost);
    }
    mt_rec_lost_discard(&g_unowned);
}

uint64_t mt_ring_discard_as_lost(mt_rec_ring *r, unsigned why)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    for (uint64_t t = tail; t != head; t++)
        count_lost(&r->lost, mt_ring_at(r, t), why);
    mt_ring_consumed(r, head);
    return head - tail;
}

void mt_rings_free_spares(void)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        mt_rec_chunk *c = atomic_exchange_explicit(&r->spare, NULL, memory_order_acquire);
        if (c)
            chunk_free(r, c);
    }
}

/* The pages of drained chunk c that hold no event to come go back to the
 * kernel (MADV_DONTNEED: zero-filled when touched again), all but the
 * first, which holds the chunk's header (the owner may link a next chunk
 * or start this one over, and slot 0 is there), and the pages of slots k
 * and k + 1: k is head's slot, where an append in flight when the session
 * ended may still write (one event: a nested one is dropped).  Only the
 * owner writes the other slots, and only in a later session, after they
 * were zero-filled again. */
static void chunk_trim(mt_rec_chunk *c, uint64_t k)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), at = (uintptr_t)c;
    uintptr_t lo = at + page, hi = (at + MT_RING_CHUNK_BYTES) & ~(page - 1);
    uintptr_t keep_lo = hi, keep_hi = hi;
    if (k < MT_RING_CHUNK) {
        keep_lo = (uintptr_t)&c->ev[k] & ~(page - 1);
        uint64_t last = k + 1 < MT_RING_CHUNK ? k + 1 : k;
        keep_hi = ((uintptr_t)(&c->ev[last] + 1) + page - 1) & ~(page - 1);
    }
    if (keep_lo > lo)
        madvise((void *)lo, keep_lo - lo, MADV_DONTNEED);
    if (hi > keep_hi && keep_hi > lo)
        madvise((void *)keep_hi, hi - keep_hi, MADV_DONTNEED);
}

void mt_rings_trim(void)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        mt_rec_chunk *c = r->rchunk; /* the only one left, or the full one before the owner's */
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        if (c && atomic_load_explicit(&r->tail, memory_order_relaxed) == head)
            chunk_trim(c, head - c->base);
    }
}

uint64_t mt_rings_discard_as_lost(unsigned why)
{
    uint64_t total = 0;
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next)
        total += mt_ring_discard_as_lost(r, why);
    return total;
}

void mt_rings_child_reset(void)
{
    tls_ring = tls_retired = NULL;
    tls_taking = 0;
    MT_RESET_ATOMIC(g_free_lock.held, 0); /* only what differs (core_common.h) */
    MT_RESET(g_free, NULL);
    MT_RESET(g_bare, NULL);
    MT_RESET(g_nfree, 0);
    MT_RESET_ATOMIC(g_chunks, 0);
    mt_rec_lost_zero(&g_unowned);
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        /* The parent's writer or threads may have been moving chunks when
         * the fork happened: forget them (the child's copies leak,
         * copy-on-write) rather than trust the queues. */
        r->wchunk = r->rchunk = NULL;
        atomic_store_explicit(&r->spare, NULL, memory_order_relaxed);
        atomic_store_explicit(&r->nchunks, 0, memory_order_relaxed);
        atomic_store_explicit(&r->tail, atomic_load_explicit(&r->head, memory_order_relaxed),
                              memory_order_relaxed);
        mt_rec_lost_zero(&r->lost);
        r->busy = 0;
        atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
        uint64_t st = atomic_load_explicit(&r->state, memory_order_relaxed);
        atomic_store_explicit(&r->state, (MT_RING_GEN(st) + 1) << 2 | MT_RING_FREE,
                              memory_order_relaxed);
        push_bare(r);
    }
}
