/* record_buffer.h -- per-thread event rings of a recording.
 *
 * Each thread that allocates while a recording runs owns one ring of raw,
 * fixed-size events (single producer: that thread; single consumer: the
 * record writer).  The hooks append without a lock; the writer encodes and
 * compresses.  Rings come from mmap, are never freed, and are recycled
 * when their thread has exited, so memory is bounded by the number of
 * allocating threads alive at once.
 */
#ifndef MT_RECORD_BUFFER_H
#define MT_RECORD_BUFFER_H

#include "mt_common.h"

#include <stdbool.h>

#define MT_RING_SLOTS 8192u /* a power of two */

/* One raw event: 32 bytes, encoded by the writer (dat_format.h). */
typedef struct mt_rec_event {
    uint64_t t_ns;
    uint64_t size;
    uint32_t trace;
    uint8_t kind;  /* MT_DAT_EV_ALLOC / MT_DAT_EV_FREE */
    uint8_t flags; /* MT_DAT_EVF_* for frees */
    uint16_t reserved;
    uint64_t age_ms; /* frees: ms(t) - birth_ms */
} mt_rec_event;

enum { MT_RING_FREE = 0, MT_RING_OWNED = 1 };

typedef struct mt_rec_ring {
    _Atomic uint64_t head; /* written by the producer (release) */
    char pad0[MT_CACHELINE - sizeof(uint64_t)];
    _Atomic uint64_t tail; /* written by the consumer (release) */
    char pad1[MT_CACHELINE - sizeof(uint64_t)];
    uint64_t tail_cache; /* producer's copy of tail */
    volatile int busy;   /* producer is appending: a signal handler must not */
    int tid;             /* owning thread (kernel tid) */
    _Atomic int state;   /* MT_RING_* */
    /* Events accounted but not recorded (ring full, or nested); the
     * writer takes them with exchange. */
    _Atomic uint64_t lost_alloc_count, lost_alloc_bytes, lost_free_count, lost_free_bytes;
    struct mt_rec_ring *next; /* all rings, append-only list */
    mt_rec_event ev[MT_RING_SLOTS];
} mt_rec_ring;

/* The calling thread's ring, taken from the pool on first use; NULL if no
 * memory. */
mt_rec_ring *mt_ring_mine(void);

/* Appends one event.  may_wait: the caller holds no lock and is not a
 * signal handler, so it may wait (bounded) for room.  Returns false if the
 * event was dropped (and counted in the ring's lost_* counters). */
bool mt_ring_push(mt_rec_ring *r, const mt_rec_event *e, bool may_wait);

/* The first ring of the list of all rings (writer side). */
mt_rec_ring *mt_ring_first(void);

/* Writer side: gives rings whose thread has exited back to the pool
 * (after the caller drained them). */
void mt_ring_reclaim_dead(void);

/* fork child: every ring is the parent's; forget the thread binding and
 * make all rings free and empty. */
void mt_rings_child_reset(void);

/* Writer side: empties every ring and zeroes its lost counters (a new
 * recording starts clean). */
void mt_rings_discard(void);

/* Writer side: empties every ring, counting its events as lost (LOST
 * records follow); returns how many. */
uint64_t mt_rings_discard_as_lost(void);

#endif
