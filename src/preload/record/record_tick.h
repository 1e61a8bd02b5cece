/* record_tick.h -- the order in which a recording in tick order (the
 * default; MEMTOP_RECORD_ORDER) writes the events of one thread that carry
 * the same time: a *run*, at most one tick of the hooks' coarse clock.
 *
 * Why: every event of a run has the same time, and the per-trace counters
 * at the run's end are the same in any order; only the order within the
 * tick is lost (docs/recording-format.md, "Tick order").  Sorted by trace,
 * the run's events name their trace once per trace instead of once per
 * event, which is most of what an exact, ordered recording spends
 * (docs/performance.md, "Tick order").
 *
 * The order: the frees of blocks allocated before the run, by trace; then
 * the blocks both allocated and freed in the run, by trace, each
 * allocation followed at once by its free; then the run's other
 * allocations, by trace.  Within a trace, events keep the thread's order.
 * So every free still comes after its block's allocation, and the frame
 * context (record_blocks.h) names blocks as it does in thread order.  A
 * free is paired with the run's allocation at its address only if it
 * charged that block's trace, size and birth; a free that is not paired
 * goes first and, when its block was allocated in the run after all, is
 * written in full (record_blocks.h: the map does not hold it yet), which
 * costs bytes, never accuracy.
 *
 * Version 7 (docs/recording-format.md, 13 EVENTS2): each trace's
 * allocations, the short-lived and the others, by ascending size (a size
 * above the last one is written as the gap); the frees are sorted by what
 * they name later, once their blocks are looked up (record_events.c).
 *
 * Memory: 928 KiB from mmap on a session's first use (MT_RING_CHUNK
 * events; 256 KiB of it sort keys), unmapped when the session ends.  Writer thread only (the
 * writer's lock held).
 */
#ifndef MT_RECORD_TICK_H
#define MT_RECORD_TICK_H

#include "record_buffer.h"

#include <stdbool.h>

/* Room for the events of one chunk (what encode_events takes per call). */
#define MT_RT_EVENTS_MAX MT_RING_CHUNK

/* Copies of the events being ordered; NULL until mt_rt_ready. */
mt_rec_event *mt_rt_events(void);

/* Maps the scratch memory; false when there is none (then: thread order). */
bool mt_rt_ready(void);

/* Unmaps it: a session ended (record_session.c, mt_recw_free_memory). */
void mt_rt_release(void);

/* The indexes of ev[0..n), one run (every t_ns the same, n <=
 * MT_RT_EVENTS_MAX), in tick order; valid until the next call.  by_size
 * (version 7): each trace's allocations, the short-lived (with their
 * frees) and the others, by ascending size.  *nfrees: the run's frees of
 * older blocks, which come first (record_events.c sorts each trace's by
 * what it names once their blocks are looked up). */
const uint32_t *mt_rt_order(const mt_rec_event *ev, uint32_t n, bool by_size, uint32_t *nfrees);

/* A sort key and the index it belongs to. */
typedef struct mt_rt_key {
    uint64_t key;
    uint32_t idx;
} mt_rt_key;

/* Room for MT_RT_EVENTS_MAX keys; NULL until mt_rt_ready. */
mt_rt_key *mt_rt_keys(void);

/* Sorts a[0..n) (mt_rt_keys(), or fewer than 32 keys anywhere) by key,
 * stably. */
void mt_rt_sort(mt_rt_key *a, uint32_t n);

#endif
