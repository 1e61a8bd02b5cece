/* record_buffer.h -- per-thread event buffers of a recording.
 *
 * Each thread that allocates while a recording runs owns one ring of raw,
 * fixed-size events (single producer: that thread; single consumer: the
 * record writer).  The hooks append without a lock; the writer encodes and
 * compresses.
 *
 * A ring is a queue of chunks of MT_RING_CHUNK events (256 KiB each, from
 * mmap): the thread writes into its newest chunk and, when it is full,
 * links another one -- the spare the writer handed back, else a new one
 * -- so a thread's buffer grows when the writer falls behind (it waits for
 * a core, the disk is slow) instead of dropping.  The bound: at most
 * MT_RING_CHUNKS_MAX chunks per thread (8 MiB, 262,144 events) and
 * MT_RING_EXTRA_MAX chunks beyond each thread's first in the process
 * (128 MiB).  Only at the bound does the drop policy apply: the hook
 * sleeps (on a futex the writer wakes when it moves the ring's tail, which
 * it does after every chunk it encoded) until the writer hands a chunk
 * back -- unless the disk cannot keep up (record_disk.c: the writer sleeps
 * in a write(2) that has lasted 100 ms, and slept in writes for half of
 * the last 2 s or more), and at most 1 s per event while the writer
 * sleeps, 5 s while it works (runs or waits for a core: record_buffer.c's
 * wait_capped) -- else drops the event
 * and counts it (LOST records, events_dropped; by cause in the session's
 * last MEMTOP_LOG=info line: disk behind, wait cap, could not wait, no
 * buffer).  A writer that only waits for a core, or met one slow write,
 * is waited for: the sleeping hooks give it a core.  The writer
 * unmaps the chunks it has drained beyond one spare per ring, so the
 * memory goes back once the burst is written.
 *
 * Life of a ring (its state word is generation << 2 | MT_RING_*):
 *   OWNED     its thread appends;
 *   RETIRING  its thread is exiting (core_thread_state.c's key destructor calls
 *             mt_ring_retire_mine; release): the writer drains it, then
 *   FREE      the writer made it free (CAS, acq_rel, generation + 1) and
 *             drained what was left: it goes on a free list, which a new
 *             thread takes it from (lock), or, beyond MT_RING_FREE_MAX free
 *             rings, its chunks are unmapped.
 * An exiting thread that allocates again after its key destructor (other
 * keys' destructors run later) takes its own ring back (CAS RETIRING ->
 * OWNED with the same generation: fails once the writer made it free, and
 * then every event of it is written already) and retires it again after
 * the event.  Ring headers (small) are therefore never unmapped; only the
 * chunks are.  Memory: one header per ring ever needed at once, one chunk
 * (plus a spare, plus what a backlog needs) per thread alive -- after a
 * session, that one chunk mapped with ~3 of its pages resident
 * (mt_rings_trim) --, plus
 * retiring ones the writer has not reached yet, plus at most
 * MT_RING_FREE_MAX free rings with one chunk each.
 */
#ifndef MT_RECORD_BUFFER_H
#define MT_RECORD_BUFFER_H

#include "core_common.h"
#include "core_state.h"
#include "dat_format.h"
#include "sample_weight.h"
#include "table_trace.h"

#include <stdbool.h>

#define MT_RING_CHUNK 8192u    /* events per chunk, a power of two */
#define MT_RING_CHUNKS_MAX 32u /* chunks per ring */
#define MT_RING_EXTRA_MAX 512u /* chunks beyond each ring's first, all rings */
#define MT_RING_FREE_MAX 8u    /* free rings kept with a chunk */

/* One raw event: 32 bytes (a fifth fewer cache lines written by the hook
 * and crossing to the writer's core than the 40 of the plain struct),
 * encoded by the writer (dat_format.h).  Packed:
 *   sizek: the block's size | (kind | flags << 1) << MT_REV_SIZE_BITS
 *     (kind MT_DAT_EV_*, flags MT_DAT_EVF_* of a free; a live block is
 *     smaller than the 2^56-byte user address space of any Linux)
 *   tb: trace | birth_ms << MT_REV_TRACE_BITS (a free: its block's birth
 *     in ms of the clock, whose zero is the process's start: 42 bits
 *     hold 139 years; an allocation: 0)
 * Read them with the mt_rev_* functions below. */
#define MT_REV_SIZE_BITS 56u
#define MT_REV_TRACE_BITS 22u
typedef struct mt_rec_event {
    uint64_t t_ns;
    uint64_t addr; /* the block's address (a free names its block by it) */
    uint64_t sizek;
    uint64_t tb;
} mt_rec_event;

_Static_assert(sizeof(mt_rec_event) == 32, "a ring event is 32 bytes");
_Static_assert(MT_TRACE_MAX <= 1u << MT_REV_TRACE_BITS, "every trace id fits an event");

static inline uint64_t mt_rev_pack_sizek(uint64_t size, unsigned kind, unsigned flags)
{
    return size | (uint64_t)(kind | flags << 1) << MT_REV_SIZE_BITS;
}

static inline uint64_t mt_rev_size(const mt_rec_event *e)
{
    return e->sizek & (((uint64_t)1 << MT_REV_SIZE_BITS) - 1);
}

static inline unsigned mt_rev_kind(const mt_rec_event *e)
{
    return (unsigned)(e->sizek >> MT_REV_SIZE_BITS) & 1u;
}

static inline unsigned mt_rev_flags(const mt_rec_event *e)
{
    return (unsigned)(e->sizek >> (MT_REV_SIZE_BITS + 1));
}

static inline uint32_t mt_rev_trace(const mt_rec_event *e)
{
    return (uint32_t)(e->tb & ((1u << MT_REV_TRACE_BITS) - 1));
}

/* A free's birth as the target charged it: its block's birth ms, or ms(t)
 * when that is later (the same clock tick; the age is then 0). */
static inline uint64_t mt_rev_birth_ms(const mt_rec_event *e)
{
    uint64_t ms = e->t_ns / 1000000u, birth = e->tb >> MT_REV_TRACE_BITS;
    return birth < ms ? birth : ms;
}

/* What an event's block was charged as: 1 and its size, or in sampled
 * mode its weight (sample_weight.h, keyed as the tracker keyed it), so
 * that the events add up to the trace counters they are checked against. */
static inline mt_sample_weight mt_rec_event_weight(const mt_rec_event *e)
{
    if (MT_LIKELY(!mt_g.cfg.sample_rate)) /* exact: no need for the birth (encoded per event) */
        return (mt_sample_weight){mt_rev_size(e), 1};
    uint64_t birth = mt_rev_kind(e) == MT_DAT_EV_FREE ? mt_rev_birth_ms(e) : e->t_ns / 1000000u;
    return mt_sample_weigh(mt_rev_size(e), mt_g.cfg.sample_rate,
                           mt_sample_key(mt_rev_trace(e), birth));
}

enum { MT_RING_FREE = 0, MT_RING_OWNED = 1, MT_RING_RETIRING = 2 };
#define MT_RING_STATE(st) ((unsigned)((st)&3u))
#define MT_RING_GEN(st) ((st) >> 2)

/* Lost counters: alloc count, alloc bytes, free count, free bytes. */
enum { MT_LOST_AC, MT_LOST_AB, MT_LOST_FC, MT_LOST_FB, MT_LOST_N };

/* Events accounted but not recorded, of one ring (or of no ring: events
 * that found none).  A dropper adds to why[cause] (relaxed), then to the
 * bytes and, last, the count (release); the writer takes the counts
 * (acquire), then as many events from why[] (record_events.c), so that
 * each LOST record's causes add up to its events. */
typedef struct mt_rec_lost {
    _Atomic uint64_t n[MT_LOST_N];
    _Atomic uint64_t why[MT_DAT_LOST_CAUSES];
    uint64_t cut[MT_LOST_N]; /* writer only: n when the final state was copied */
} mt_rec_lost;

/* MT_RING_CHUNK events from index `base` on.  The producer fills in base
 * and links the chunk as `next` of its previous one (release) before it
 * publishes an index past that one's end. */
typedef struct mt_rec_chunk {
    uint64_t base;
    struct mt_rec_chunk *_Atomic next;
    char pad[MT_CACHELINE - 2 * sizeof(uint64_t)];
    mt_rec_event ev[MT_RING_CHUNK];
} mt_rec_chunk;

typedef struct mt_rec_ring {
    _Atomic uint64_t head; /* written by the producer (release) */
    char pad0[MT_CACHELINE - sizeof(uint64_t)];
    _Atomic uint64_t tail; /* written by the consumer (release) */
    char pad1[MT_CACHELINE - sizeof(uint64_t)];
    mt_rec_chunk *wchunk;        /* producer: the chunk it writes (NULL: no chunk) */
    uint64_t wbase;              /* producer: wchunk->base */
    mt_rec_chunk *rchunk;        /* consumer: the chunk holding tail (or ending at it) */
    mt_rec_chunk *_Atomic spare; /* a drained chunk for the producer */
    _Atomic uint32_t nchunks;    /* chunks of this ring (queue and spare) */
    /* A producer at the bound sleeps on `handed` (a futex) with `waiting`
     * set; the writer bumps it and wakes it when it moved tail. */
    _Atomic uint32_t handed;
    _Atomic uint32_t waiting;
    volatile int busy;      /* producer is appending: a signal handler must not */
    int tid;                /* owning thread (kernel tid) */
    _Atomic uint64_t state; /* generation << 2 | MT_RING_* */
    /* Events accounted but not recorded (ring full, or nested); the
     * writer takes them with fetch_sub / exchange. */
    mt_rec_lost lost;
    /* Writer only: head when the final state was copied. */
    uint64_t cut;
    struct mt_rec_ring *next;      /* all rings: append-only, never unlinked */
    struct mt_rec_ring *next_free; /* free lists (under their lock) */
} mt_rec_ring;

/* Appends one event to the calling thread's ring (taken on first use).
 * may_wait: the caller holds no lock and is not a signal handler, so it
 * may wait (bounded) for room.  A dropped event is counted (lost).  The
 * hooks' mt_rec_alloc and mt_rec_free (record.h) are defined in
 * record_buffer.c too, with this append inlined. */
void mt_ring_record(const mt_rec_event *e, bool may_wait);

/* The calling thread is exiting (its key destructor): hands its ring to
 * the writer. */
void mt_ring_retire_mine(void);

/* The first ring of the list of all rings (writer side). */
mt_rec_ring *mt_ring_first(void);

static inline uint64_t mt_ring_state(mt_rec_ring *r)
{
    return atomic_load_explicit(&r->state, memory_order_acquire);
}

/* Writer side: the event at index i, tail <= i < head (head read with
 * acquire).  Does not move the reading position. */
static inline const mt_rec_event *mt_ring_at(const mt_rec_ring *r, uint64_t i)
{
    const mt_rec_chunk *c = r->rchunk;
    while (MT_UNLIKELY(i - c->base >= MT_RING_CHUNK))
        c = atomic_load_explicit(&c->next, memory_order_acquire);
    return &c->ev[i - c->base];
}

/* Writer side: the events from index i on (tail <= i, i + n <= head) that
 * lie in i's chunk, contiguous: *len of them (at most n, at least 1 when
 * n is).  An encoder walks a span without a chunk lookup per event. */
static inline const mt_rec_event *mt_ring_span(const mt_rec_ring *r, uint64_t i, uint64_t n,
                                               uint64_t *len)
{
    const mt_rec_chunk *c = r->rchunk;
    while (MT_UNLIKELY(i - c->base >= MT_RING_CHUNK))
        c = atomic_load_explicit(&c->next, memory_order_acquire);
    uint64_t k = i - c->base, room = MT_RING_CHUNK - k;
    *len = n < room ? n : room;
    return &c->ev[k];
}

/* Writer side: the events before upto (<= head) are written: tail =
 * upto, and the chunks wholly before it go back (one spare per ring, the
 * rest unmapped). */
void mt_ring_consumed(mt_rec_ring *r, uint64_t upto);

/* Writer side: st (read with mt_ring_state before draining) says
 * RETIRING: make the ring free (true) unless its thread took it back.
 * The caller then drains what is left and calls mt_ring_recycle. */
bool mt_ring_try_free(mt_rec_ring *r, uint64_t st);
void mt_ring_recycle(mt_rec_ring *r);

/* Writer side: empties r counting its events as lost for `why`
 * (MT_DAT_LOST_*); returns how many. */
uint64_t mt_ring_discard_as_lost(mt_rec_ring *r, unsigned why);

/* Events that found no ring (MT_DROP_NORING), written as LOST of tid 0. */
mt_rec_lost *mt_rings_lost_unowned(void);

/* Zeroes l's counts, no hook counting meanwhile (a fork child's reset). */
void mt_rec_lost_zero(mt_rec_lost *l);

/* Writer side: drops l's counts while hooks may still count (a starting
 * recording's discard, what a final drain leaves), keeping every count's
 * cause (record_buffer.c). */
void mt_rec_lost_discard(mt_rec_lost *l);

/* Writer side: takes the causes of `events` dropped events whose counts
 * were taken from l (record_buffer.c). */
void mt_rec_lost_take_why(mt_rec_lost *l, uint64_t events, uint64_t why[MT_DAT_LOST_CAUSES]);

/* Writer side, during the final state's pause: every ring's cut = head,
 * lost.cut = lost.n, and the unowned lost counts' cut (a copy only). */
void mt_rings_mark_cut(void);

/* fork child: every ring is the parent's; forget the thread binding and
 * make all rings free and empty. */
void mt_rings_child_reset(void);

/* Writer side: empties every ring and zeroes its lost counters (a new
 * recording starts clean). */
void mt_rings_discard(void);

/* Writer side: empties every ring, counting its events as lost for `why`
 * (LOST records follow); returns how many. */
uint64_t mt_rings_discard_as_lost(unsigned why);

/* Writer side, a session ended: every ring's spare chunk unmapped (the
 * chunk a thread appends to stays: only its thread may let it go).  An
 * owner that takes its spare at the same time takes it whole: both sides
 * exchange it. */
void mt_rings_free_spares(void);

/* Writer side, after mt_rings_discard and mt_rings_free_spares: each
 * ring's drained chunk keeps mapped but gives its pages back to the
 * kernel, but for its header and the slots an append in flight may still
 * write (~12 KiB of 256 stay resident per thread that recorded, until it
 * records again).  tracker_bytes counts what is mapped: it does not
 * change. */
void mt_rings_trim(void);

#endif
