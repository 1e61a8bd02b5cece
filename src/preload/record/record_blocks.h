/* record_blocks.h -- the writer's side of the EVENTS2 frame context
 * (dat_format.h): which frees can name their block instead of repeating
 * its trace, size and age, and which sizes can be left out.
 *
 * Why: a free names "the r-th newest allocation of its trace in this zstd
 * frame" (FREE_REF) or "... in the frame before" (FREE_PREV) in a byte or
 * two, where a full free takes four or more.  The writer keeps an address
 * -> block map of the allocations it wrote in the current frame (trace,
 * per-trace serial, size, birth ms), per trace the count of allocations
 * and the last size written, and, for the frame before, its map as it
 * was at its end and each trace's count there.  Ending a frame makes the
 * current map the previous frame's and gives the frame after an empty
 * one; a new file (a session, a rewind) empties both,
 * so a reader can restart at any frame with the frame before it.
 *
 * Exactness: a free is written as a reference only when the map entry at
 * its address holds exactly the trace, size and birth ms the target
 * charged, and the entry is then dead (record_blocks.c); an allocation
 * at an address replaces the entry.  So every reference resolves, in the reader, to the
 * very values the free charged, whatever the order in which the writer
 * drained the threads' rings (a free of an old block after the new block
 * at its address: the values differ and the free is written in full).
 *
 * Memory: 16 bytes per map slot (a block whose address, size or birth
 * does not fit one is not kept: its free is written in full), at most
 * 70 % full, for the distinct addresses of the blocks allocated in the
 * current frame (a free leaves a dead entry): at most 2^21 slots, 32
 * MiB; the previous frame's map, that frame's map as it was at its end;
 * 32 bytes per trace.  All from mmap, the maps on huge pages from 2 MiB
 * on.  At a frame boundary the two maps change places, and the one that
 * becomes current is emptied, or replaced by one of the size the frame
 * that ended wants.  Writer thread only (the writer's lock held).
 */
#ifndef MT_RECORD_BLOCKS_H
#define MT_RECORD_BLOCKS_H

#include "core_common.h"
#include "dat_format.h"

#include <stdbool.h>

/* Per trace, for the current frame. */
typedef struct mt_rb_trace {
    uint32_t epoch;      /* the frame these fields belong to */
    uint32_t has_size;   /* last_size is set */
    uint32_t count;      /* allocations of the trace written in this frame */
    uint32_t prev_count; /* ... in the frame before: p(trace), dat_format.h */
    uint64_t last_size;  /* size of the trace's previous event in this frame */
    uint32_t next;       /* next(trace) + 1 in this frame (dat_format.h), 0: none */
} mt_rb_trace;

_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= UINT32_MAX, "a frame's count fits 32 bits");

/* What the writer did with frees, for the log and the tests. */
typedef struct mt_rb_stats {
    uint64_t refs;       /* frees that named their block */
    uint64_t prev_refs;  /* ... a block of the frame before */
    uint64_t not_found;  /* no entry at the address in this frame */
    uint64_t mismatched; /* the entry at the address was another block */
} mt_rb_stats;

/* A new frame begins: the current frame's context becomes the frame
 * before's, and the current one is empty. */
void mt_rb_new_frame(void);

/* A new frame with no frame before it (a new file, or the file cut back
 * to a frame end other than the last one's): both are empty. */
void mt_rb_new_file(void);

/* fork child: forgets the tables without unmapping them (the parent's
 * writer may have been replacing one when the fork happened). */
void mt_rb_child_reset(void);

/* Unmaps the map and the trace array (a session ended): the next
 * session's first frame maps them again. */
void mt_rb_release(void);

/* A slot of the address map (record_blocks.c packs a block into it). */
typedef struct mt_rb_slot {
    uint64_t key;
    uint64_t val;
} mt_rb_slot;

/* The fields the encoder reads for every event, so that the calls below
 * are inline in record_events.c (out of line, the three cost ~30
 * instructions per event: docs/performance.md, "Recording"); the rest of
 * the context is record_blocks.c's own.  Writer only (its lock held). */
typedef struct mt_rb_hot {
    mt_rb_slot *map;
    unsigned bits;         /* the map has 2^bits slots */
    mt_rb_slot *pmap;      /* the frame before's blocks, or NULL when none */
    unsigned pbits;        /* pmap has 2^pbits slots */
    uint32_t epoch;        /* the frame's number, for the trace array */
    mt_rb_trace *traces;   /* per trace, for the current frame */
    uint32_t ntraces;      /* capacity */
    uint64_t frame_allocs; /* allocation events written in this frame */
} mt_rb_hot;

extern mt_rb_hot mt_rb_h;

/* Counts an allocation event written in this frame; false (not counted)
 * when the frame already holds MT_DAT_FRAME_ALLOCS_MAX of them: the
 * caller then ends the frame first (readers reject more). */
static inline bool mt_rb_count_alloc(void)
{
    if (mt_rb_h.frame_allocs >= MT_DAT_FRAME_ALLOCS_MAX)
        return false;
    mt_rb_h.frame_allocs++;
    return true;
}

/* mt_rb_trace_get when the trace has no state of this frame yet. */
mt_rb_trace *mt_rb_trace_slow(uint32_t trace);

/* The trace's state in this frame (reset lazily), or NULL when no memory
 * could hold it (then: no SAME_SIZE, no reference for that trace). */
static inline mt_rb_trace *mt_rb_trace_get(uint32_t trace)
{
    if (MT_LIKELY(trace < mt_rb_h.ntraces && mt_rb_h.traces[trace].epoch == mt_rb_h.epoch))
        return &mt_rb_h.traces[trace];
    return mt_rb_trace_slow(trace);
}

/* An allocation at addr was written: block (trace, serial) of size bytes
 * born at birth_ms.  Keeps it findable by a later free at addr. */
void mt_rb_note_alloc(uint64_t addr, uint32_t trace, uint64_t serial, uint64_t size,
                      uint64_t birth_ms);

/* A free at addr that charged (trace, size, birth_ms): if it may name its
 * block, removes it from the map and returns true with *serial set. */
bool mt_rb_take(uint64_t addr, uint32_t trace, uint64_t size, uint64_t birth_ms, uint64_t *serial);

/* A free at addr that no entry of this frame names (mt_rb_take false),
 * of a trace with prev_count allocations in the frame before: if it may
 * name its block of that frame, removes it from the previous frame's map
 * and returns true with *serial (< prev_count) set. */
bool mt_rb_take_prev(uint64_t addr, uint32_t trace, uint64_t size, uint64_t birth_ms,
                     uint32_t prev_count, uint64_t *serial);

/* The home slot of addr in a map of 2^bits slots (Fibonacci hashing). */
static inline uint64_t mt_rb_home(uint64_t addr, unsigned bits)
{
    return (addr * 0x9e3779b97f4a7c15ull) >> (64u - bits);
}

/* Start loading the map slot of addr and the state of trace (the encoder
 * looks a few events ahead).  always_inline: GCC 12 counts a prefetch as
 * no side effect, so an out-of-line copy looks pure and its calls are
 * dropped (as the reader's were: docs/performance.md, "Reading, fifth
 * round"). */
static inline __attribute__((always_inline)) void mt_rb_prefetch(uint64_t addr, uint32_t trace)
{
    if (mt_rb_h.map)
        __builtin_prefetch(&mt_rb_h.map[mt_rb_home(addr, mt_rb_h.bits)]);
    if (trace < mt_rb_h.ntraces)
        __builtin_prefetch(&mt_rb_h.traces[trace]);
}

/* The same for a free's slot in the previous frame's map, where it looks
 * when this frame's map does not name its block. */
static inline __attribute__((always_inline)) void mt_rb_prefetch_prev(uint64_t addr)
{
    if (mt_rb_h.pmap)
        __builtin_prefetch(&mt_rb_h.pmap[mt_rb_home(addr, mt_rb_h.pbits)]);
}

/* Counters since the session began; mt_rb_reset_stats at its start. */
const mt_rb_stats *mt_rb_get_stats(void);
void mt_rb_reset_stats(void);

/* Bytes the context holds (maps and trace array). */
uint64_t mt_rb_bytes(void);

#endif
