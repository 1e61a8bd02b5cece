/* dat_format.h -- the recording file format (.dat): the contract between the
 * writer inside libmemtop.so (src/preload/record_*.c) and the reader
 * (src/ipc/dat_reader*).  docs/recording-format.md explains it in prose;
 * this header holds the constants and the fixed-size file header.
 *
 * A recording is:
 *
 *   offset 0   mt_dat_file_header (MT_DAT_HEADER_BYTES, uncompressed)
 *   then       zstd frames, back to back (each with a content checksum)
 *
 * The frames, decompressed and concatenated, are a sequence of records.  A
 * record never spans two frames, so every complete frame decodes on its
 * own into whole records, and a file cut anywhere (SIGKILL, full disk) is
 * readable up to its last complete frame.  A finalized file ends with an
 * MT_DAT_REC_END record; a file without one was cut short.
 *
 * Record = varint type, varint payload length, payload.  Readers skip
 * record types they do not know, and ignore payload bytes after the fields
 * they know (new fields are only ever appended to a payload).
 *
 * Integers in payloads are unsigned LEB128 varints ("v" below) unless said
 * otherwise; "z" is a zigzag-encoded signed varint (0,-1,1,-2 -> 0,1,2,3);
 * "s" is a byte string: v length, then the bytes (no NUL).  Times "t" are
 * nanoseconds of CLOCK_MONOTONIC since tracking began in the process (the
 * same clock as the shared-memory segment's t_ns); "ms" times are
 * floor(t / 1000000).
 */
#ifndef MEMTOP_DAT_FORMAT_H
#define MEMTOP_DAT_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

/* "MTREC\r\n\x1a": a text-mode transfer or a truncation at byte level shows */
#define MT_DAT_MAGIC "MTREC\r\n\x1a"
#define MT_DAT_MAGIC_BYTES 8u
#define MT_DAT_VERSION 8u /* the newest: every recording in tick order written now */
/* Older versions, still read: 2 a full, exact recording, 3 a sampled or a
 * culled one (PROCESS's appended fields), both without NEXT_TRACE; 4 any
 * recording in the threads' order (the first with NEXT_TRACE); 5 one in
 * tick order (the first with PROCESS's order field); both without
 * FREE_PREV. */
#define MT_DAT_VERSION_ORDERED 4u
#define MT_DAT_VERSION_TICKS 5u
#define MT_DAT_VERSION_PREV 6u /* the first with FREE_PREV */
/* the first with runs of references and rising sizes
 * (docs/recording-format.md, 13 EVENTS2, "Version 7") */
#define MT_DAT_VERSION_RUNS 7u
/* the first with TAG_PAIRS and paired tags (13 EVENTS2, "Version 8") */
#define MT_DAT_VERSION_PAIRS 8u
#define MT_DAT_VERSION_FULL 2u
#define MT_DAT_VERSION_MODES 3u
#define MT_DAT_VERSION_MIN 1u /* the oldest version readers still read */
#define MT_DAT_ENDIAN_MARK 0x01020304u
#define MT_DAT_HEADER_BYTES 32u
#define MT_DAT_SUFFIX ".dat"

/* The format's limits: defined here only.  A reader rejects anything
 * larger as corrupt; the writer (src/preload/record_*.c) stays within each
 * one, checked at compile time where its own bound is a constant
 * (_Static_assert next to it) and at run time where it counts
 * (MT_DAT_FRAME_ALLOCS_MAX, MT_DAT_STRING_MAX).  "At most": a value equal
 * to the limit is valid, one more is not; tests/recording/test_reader_limits.c
 * and test_writer_frames.c check both sides at the limit and one past it. */
#define MT_DAT_RECORD_MAX (16u << 20) /* payload bytes of one record */
#define MT_DAT_STRING_MAX 4096u       /* bytes of one string field */
#define MT_DAT_EVENTS_MAX 65536u      /* events in one MT_DAT_REC_EVENTS / _EVENTS2 */
#define MT_DAT_ENTRIES_MAX 65536u     /* entries in TRACE_STATES / LIVE_BLOCKS / CULLED */
#define MT_DAT_CULL_MS_MAX (7ull * 24 * 3600 * 1000) /* a culled recording's threshold: a week */
#define MT_DAT_CULL_MS_DEFAULT 10000u /* not a limit: the threshold writers use unless told */
/* A culled recording writes a young block's allocation (at its own time)
 * within cull_ms + this of that time, unless the writer is behind: readers
 * look this much further for late events. */
#define MT_DAT_CULL_LATE_NS 1000000000ull
#define MT_DAT_TOTALS_FIELDS_MAX 1024u /* values in one TOTALS record */
/* Version 8's TAG_PAIRS: pairs of one context (codes 0..254), and the
 * code that says the two tags follow as they are. */
#define MT_DAT_TAG_PAIRS_MAX 255u
#define MT_DAT_TAG_ESCAPE 255u
#define MT_DAT_TAG_CONTEXTS 256u /* contexts in one TAG_PAIRS: one per tag value */
/* Allocation events in one zstd frame of EVENTS2 records: bounds the
 * frame context (the blocks a free may name) on both sides, whatever the
 * allocation rate.  A writer ends the frame when it is reached: an
 * allocation counts in the frame whose record holds it. */
#define MT_DAT_FRAME_ALLOCS_MAX (1u << 19)
/* zstd window of a frame: log2 of its bytes (a reader refuses frames that
 * need a larger one: memory). */
#define MT_DAT_WINDOW_LOG_MAX 27
/* Frames per TRACE record, and bytes of a build id: MT_MAX_DEPTH and
 * MT_BUILD_ID_MAX (shm_layout.h), shared with the segment. */

/* The uncompressed file header, little-endian, 32 bytes. */
typedef struct mt_dat_file_header {
    uint8_t magic[MT_DAT_MAGIC_BYTES]; /* MT_DAT_MAGIC */
    uint32_t version;                  /* MT_DAT_VERSION */
    uint32_t header_bytes;             /* MT_DAT_HEADER_BYTES: zstd frames start here */
    uint32_t endian_mark;              /* MT_DAT_ENDIAN_MARK */
    uint32_t flags;                    /* MT_DAT_FILE_*; unknown bits: ignore */
    uint64_t created_unix_ns;          /* when the file was created */
} mt_dat_file_header;

enum {
    MT_DAT_FILE_ZSTD = 1u << 0, /* always set: records are in zstd frames */
};

/* Record types.  Numbers are never reused.  Fields, in order, after the
 * type and length (see docs/recording-format.md for the meaning of each). */
enum {
    /* v pid, v ppid, v uid, v proc_start_ticks, v tracking_start_unix_ns,
     * t record_start, v record_start_unix_ns, v max_depth, v temporary_ns,
     * v publish_interval_ms, v flags (MT_DAT_PROC_*), s exe, s cmdline,
     * then (versions 3 and 4) v record_mode (MT_DAT_MODE_*), v cull_ms (lifetime
     * threshold of a culled recording, else 0), v young_max (its bound on
     * young blocks, else 0), v sample_rate_bytes (MEMTOP_SAMPLE: > 0 when
     * the events are samples, 0 when exact).  A reader that does not know
     * version 3 must refuse it: its events may be samples or culled.
     * Version 5 appends v order (MT_DAT_ORDER_*).
     * Exactly one, the first record of the file. */
    MT_DAT_REC_PROCESS = 1,
    /* v index, t seen, v bias, v start, v end, s build_id (raw bytes, <= 40),
     * s path.  index: dense, 0, 1, 2, ... in file order. */
    MT_DAT_REC_MODULE = 2,
    /* v index, t seen: the module was unloaded (dlclose). */
    MT_DAT_REC_MODULE_UNLOAD = 3,
    /* v id, v flags (MT_DEF_*), t first_seen, v hash, v nframes, then
     * frames: v frame[0], z (frame[i] - frame[i-1]) for i >= 1 (as
     * wrapping 64-bit differences).  Ids are dense: the n-th TRACE record
     * has id n, starting with id 0 (the overflow trace, no frames).  A trace
     * is defined before any record refers to it. */
    MT_DAT_REC_TRACE = 4,
    /* v tid, t base, v nevents, then nevents events (see MT_DAT_EV_*).
     * The events of one thread, in the order that thread made them. */
    MT_DAT_REC_EVENTS = 5,
    /* t now, v unix_ns, v nfields, then nfields v values in the order of
     * mt_shm_totals (shm_layout.h: live_bytes, live_count, ..., thread_count:
     * 19 fields; MT_UNKNOWN is written as is), then v events_written,
     * v events_dropped (of this recording, so far).  At least once a second
     * while recording, and once in the final state. */
    MT_DAT_REC_TOTALS = 6,
    /* v kind (MT_DAT_STATE_*), t now, v unix_ns: a state set follows. */
    MT_DAT_REC_STATE_BEGIN = 7,
    /* v n, then n entries: v id_delta (id - previous entry's id; the first
     * entry's previous id is 0), v alloc_count, v alloc_bytes, v free_count,
     * v free_bytes, v temporary_count, v temporary_bytes, v peak_live_bytes. */
    MT_DAT_REC_TRACE_STATES = 8,
    /* v n, then n entries: z trace_delta, z birth_ms_delta (from the previous
     * entry; the first entry's previous values are 0), v size, v count:
     * `count` live blocks of `size` bytes each, allocated by `trace` at
     * birth_ms. */
    MT_DAT_REC_LIVE_BLOCKS = 9,
    /* v kind, v ntraces, v nlive (entries written in this state set): the
     * set is complete. */
    MT_DAT_REC_STATE_END = 10,
    /* t now, v tid, v alloc_count, v alloc_bytes, v free_count, v free_bytes:
     * events of thread tid that were accounted by the target but could not
     * be recorded (writer too slow; see the drop policy), since the last
     * LOST record of that thread.  Then (newer writers; absent
     * in older files: the cause is not known) v ncauses, and ncauses pairs
     * v cause (MT_DAT_LOST_*, strictly ascending, <= MT_DAT_LOST_CAUSE_MAX),
     * v count (>= 1): why the events were dropped, the counts summing to
     * alloc_count + free_count. */
    MT_DAT_REC_LOST = 11,
    /* t now, v unix_ns, v reason (MT_DAT_END_*), v error (errno, 0),
     * v events_written, v events_dropped.  The last record of a finalized
     * file, after the final state set. */
    MT_DAT_REC_END = 12,
    /* Version 2: the events of one thread in columns, frees naming their
     * block (see "EVENTS2" below).  v tid, t base, v nevents, then for
     * each varint column -- times, traces, sizes, refs, ages -- v lead_len,
     * v tail_len; then the tags column (nevents bytes) and each varint
     * column's lead and tail bytes, in that order.  A version-2 writer
     * writes these instead of MT_DAT_REC_EVENTS.  Version 4 adds
     * MT_DAT_EV_NEXT_TRACE (below). */
    MT_DAT_REC_EVENTS2 = 13,
    /* Versions 3 and 4 (culled recordings, PROCESS record_mode MT_DAT_MODE_CULLED):
     * t now, v written_early, v young, v n, then n entries: v id_delta
     * (id - previous entry's id; the first entry's previous id is 0; ids
     * strictly ascending), v count, v bytes, v temporary_count,
     * v temporary_bytes: `count` blocks of trace id, `bytes` in all, were
     * allocated and freed within the cull threshold since the previous
     * CULLED record (none of their events is written; temporary_*: those
     * of them counted temporary).  written_early: young blocks written
     * before their threshold (buffer full, address reused) so far;
     * young: blocks young (not written, not culled) at `now`. */
    MT_DAT_REC_CULLED = 14,
    /* Any version (no bump: older readers skip it, losing only the
     * names): t now, v count (<= MT_ALLOC_MAX), v inexact, v more, then
     * count entries: v kind (MT_ALLOC_KIND_*), v flags (MT_ALLOC_*),
     * s prefix, s version, s module, s note (each shorter than its
     * mt_shm_allocator field).  The allocators the target found, as its
     * segment's header.allocators says (shm_layout.h), without their
     * figures; written when the list changes (at a TOTALS, and before the
     * final state set), so the last one is the list at the end. */
    MT_DAT_REC_ALLOCATORS = 15,
    /* Version 8: a table of tag pairs for EVENTS2's tags column (see
     * "Version 8" below).  v ncontexts (<= 256), then per context,
     * contexts strictly ascending: v context (a tag, <= 255), v npairs
     * (1..MT_DAT_TAG_PAIRS_MAX), then npairs values v pair (the first tag
     * | the second tag << 8, <= 0xffff).  ncontexts 0 is a table without
     * pairs; bytes after the last context are ignored (appended fields).
     * It holds for the EVENTS2 records after it in its zstd frame, up to
     * the next TAG_PAIRS; a frame starts with none (a reader restarting at
     * a frame decodes the frame before's TAG_PAIRS with its EVENTS2).  In
     * a file of an earlier version: skipped (unknown). */
    MT_DAT_REC_TAG_PAIRS = 16,
};

/* Why events were dropped (LOST's causes).  Numbers are never reused; a
 * reader counts a cause it does not know as "other". */
enum {
    MT_DAT_LOST_DISK = 0,      /* the disk was behind: the writer slept in its writes */
    MT_DAT_LOST_WAIT_CAP = 1,  /* a hook waited its cap for the writer (record_buffer.c) */
    MT_DAT_LOST_NOWAIT = 2,    /* the hook could not wait: a signal handler, a lock, stopping */
    MT_DAT_LOST_NO_BUFFER = 3, /* no buffer for the thread (out of memory) */
    MT_DAT_LOST_CAPTURE = 4, /* made during a mid-run start's capture: maybe in the INITIAL state */
    MT_DAT_LOST_UNSEEN = 5,  /* the FINAL state counts them, no buffer had them (tid 0) */
    MT_DAT_LOST_CAUSES = 6,  /* causes this version defines */
};
#define MT_DAT_LOST_CAUSE_MAX 63u /* a larger cause is corrupt */

/* PROCESS record_mode (appended field; absent: full). */
enum {
    MT_DAT_MODE_FULL = 0,   /* every event written */
    MT_DAT_MODE_CULLED = 1, /* short-lived blocks counted in CULLED records */
};

/* PROCESS order (version 5's appended field; absent: the threads' order). */
enum {
    MT_DAT_ORDER_THREAD = 0, /* each thread's events in the order it made them */
    MT_DAT_ORDER_TICK = 1,   /* within a tick, sorted (EVENTS2 "Tick order") */
};

/* MT_DAT_REC_PROCESS flags. */
enum {
    MT_DAT_PROC_MID_RUN = 1u << 0,    /* started after tracking began: an initial state follows */
    MT_DAT_PROC_FORK_CHILD = 1u << 1, /* the process was forked from a tracked one */
};

/* State set kinds. */
enum {
    MT_DAT_STATE_INITIAL = 1, /* counters and live blocks when the recording began */
    MT_DAT_STATE_FINAL = 2,   /* counters when the recording ended (no live blocks) */
};

/* End reasons. */
enum {
    MT_DAT_END_STOP = 1,  /* stopped through the control channel */
    MT_DAT_END_EXIT = 2,  /* the process exited (exit, return from main, _exit) */
    MT_DAT_END_EXEC = 3,  /* the process called exec */
    MT_DAT_END_ERROR = 4, /* a write error (error = errno, e.g. ENOSPC) */
    /* the viewer that started it stopped renewing its lease (it died, hung
     * or was stopped: docs/shm-protocol.md, "Recording lease"); older
     * readers call it an unknown end */
    MT_DAT_END_LEASE = 5,
};

/* One event inside MT_DAT_REC_EVENTS (version 1 layout; EVENTS2 below).
 * It starts with a tag byte:
 *
 *   bits 0-1  kind: MT_DAT_EV_ALLOC or MT_DAT_EV_FREE (2, 3: reserved)
 *   bit 2     MT_DAT_EV_SAME_TIME: dt omitted (0)
 *   bit 3     MT_DAT_EV_SAME_TRACE: trace omitted (= the previous event's
 *             trace in this record)
 *   bits 4-6  flags: free only (MT_DAT_EVF_*), 0 for an allocation
 *   bit 7     reserved, 0
 *
 * then: v dt (unless SAME_TIME; t = previous event's t + dt, the first
 * event's previous t is the record's base), v trace (unless SAME_TRACE),
 * v size, and for a free: v age_ms (ms(t) - birth_ms of the freed block).
 *
 * An allocation's birth_ms is ms(t).  A free carries everything the target
 * charged: the trace that allocated the block, its size, whether it was
 * temporary, and when it was born, so a reader needs no addresses. */
enum {
    MT_DAT_EV_ALLOC = 0,
    MT_DAT_EV_FREE = 1,
    MT_DAT_EV_FREE_REF = 2,  /* EVENTS2 only: a free naming its block */
    MT_DAT_EV_FREE_PREV = 3, /* EVENTS2, version 6: one naming a block of the frame before */
    MT_DAT_EV_KIND_MASK = 3,
    MT_DAT_EV_SAME_TIME = 1u << 2,
    MT_DAT_EV_SAME_TRACE = 1u << 3,
    MT_DAT_EV_FLAGS_SHIFT = 4,
    MT_DAT_EV_RESERVED = 1u << 7,   /* EVENTS: reserved, 0 */
    MT_DAT_EV_SAME_SIZE = 1u << 7,  /* EVENTS2: size omitted (see below) */
    MT_DAT_EV_NEXT_TRACE = 1u << 4, /* EVENTS2, version 4, ALLOC only: see below */
};

/* EVENTS2 (MT_DAT_REC_EVENTS2).  The same tag byte, in the tags column,
 * with these differences:
 *
 *   bits 0-1  kind: ALLOC, FREE, FREE_REF, or (version 6) FREE_PREV
 *   bit 3     SAME_TRACE, on any kind: the trace of the previous event in
 *             this record (for a FREE_REF or FREE_PREV, its block's trace)
 *   bit 7     MT_DAT_EV_SAME_SIZE (ALLOC, FREE): size omitted, it is the
 *             last size of this trace in this frame; 0 on a FREE_REF or
 *             a FREE_PREV
 *   bit 4     MT_DAT_EV_NEXT_TRACE (version 4; ALLOC, whose bits 4-6 are
 *             otherwise 0, right after an ALLOC of the same record, without
 *             SAME_TRACE): trace omitted, it is next(P) of that ALLOC's
 *             trace P (below)
 *
 * Fields go to their columns: dt (unless SAME_TIME) to times, trace
 * (unless SAME_TRACE) to traces, size (ALLOC and FREE, unless SAME_SIZE)
 * to sizes, ref (FREE_REF, FREE_PREV) to refs, age_ms (FREE) to ages.  A varint
 * column is stored split: the first byte of each of its varints in its
 * lead part, the other bytes of each, in order, in its tail part (so the
 * low 7 bits and the high bits of the values compress apart).
 *
 * The frame context: decoding an EVENTS2 record depends on the EVENTS2
 * records before it in the same zstd frame and (version 6) on the live
 * blocks of the frame right before it in the file, never on an earlier
 * one (so a frame decodes given the definitions and the frame before):
 *   - n(T): the allocations of trace T in this frame so far, in file
 *     order; an ALLOC of T is the block (T, n(T)), then n(T) += 1;
 *   - the last size of T: the size of the previous event of T in this
 *     frame (an ALLOC, FREE, or the size of the block a FREE_REF names;
 *     a FREE_PREV leaves it, so that a frame's decoding depends on the
 *     frame before only for the blocks FREE_PREV names);
 *   - the live blocks: every (T, k) allocated in this frame that no
 *     FREE_REF has named yet, with its size and birth_ms;
 *   - next(P) (version 4): the trace Q != P of the last ALLOC in this
 *     frame that came right after an ALLOC of P in the same record; none
 *     at the start of the frame.
 * A FREE_REF of trace T with ref r names the block (T, n(T) - 1 - r),
 * which must be live; the target charged the free of exactly that size
 * and birth to T, and the block is no longer live.  A FREE_PREV of T
 * with ref r (version 6) names the block (T, p(T) - 1 - r) of the frame
 * before, p(T) being n(T) at that frame's end; the block must still be
 * live there (no FREE_REF named it in its frame, no FREE_PREV since), and
 * it is then no longer live.  The first frame of a file has no frame
 * before.  A FREE carries its size and age as in EVENTS (its block was
 * allocated earlier, before the recording, or was not found) and changes
 * no live block.
 *
 * Version 7 (MT_DAT_VERSION_RUNS): a reference counts among every
 * thread's blocks of the trace, as in version 6 (tag bit 7 on a FREE_REF
 * or FREE_PREV is still a bad tag), and
 *   - runs of references: a FREE_REF or FREE_PREV with SAME_TIME and
 *     SAME_TRACE right after an event of the same kind in the record has
 *     ref = that event's ref + 1 + v (v: the column's value); else ref =
 *     v;
 *   - rising sizes: an ALLOC with SAME_TIME and SAME_TRACE, without
 *     SAME_SIZE, of a trace with a last size s in this frame has size =
 *     s + 1 + v; else size = v.
 * An overflow of ref or size is corrupt.
 *
 * Version 8 (MT_DAT_VERSION_PAIRS): version 7, and
 *   - EVENTS2's head gives the tags column's length: v tid, t base,
 *     v nevents, v tags_len, then the other columns' lengths as before;
 *   - paired tags: while a TAG_PAIRS holds (in the record's frame, before
 *     the record), the tags column holds codes, each for the next two
 *     tags.  c, the context, is 0 at the record's start.  While two or
 *     more tags are left: a code x < MT_DAT_TAG_ESCAPE is pair x of
 *     context c in the table (x < its npairs, else corrupt: a context the
 *     table lacks has none); x = MT_DAT_TAG_ESCAPE is followed by the two
 *     tags as they are.  Then c = the second tag.  A last, odd tag is
 *     written as it is.  The codes must take tags_len bytes exactly.
 *     Without a table, tags_len = nevents (the tags as they are).
 * The tags then mean what they mean in version 7. */

/* Free flags (tag bits 4-6, after shifting down by MT_DAT_EV_FLAGS_SHIFT). */
enum {
    MT_DAT_EVF_TEMPORARY = 1u << 0, /* counted as temporary */
    MT_DAT_EVF_REALLOC = 1u << 1,   /* the free half of a realloc (never temporary) */
    MT_DAT_EVF_MISSED = 1u << 2,    /* charged when the address was reused: free not seen */
};

/* Number of fields a writer puts in TOTALS: the 19 of mt_shm_totals, then
 * the number of allocators memtop cannot see in the process
 * (docs/allocators.md; older writers wrote 19 fields: not known), then how
 * old fields 13 and 14 are in ms (older writers wrote 20: taken with it). */
#define MT_DAT_TOTALS_FIELDS 21u
#define MT_DAT_TOTALS_ALLOC_INEXACT 19u
#define MT_DAT_TOTALS_ALLOCATOR_AGE 20u /* ms: how old fields 13 and 14 are (0 before it) */
_Static_assert(MT_DAT_TOTALS_FIELDS <= MT_DAT_TOTALS_FIELDS_MAX, "TOTALS within its limit");

/* Tick order's traces column (EVENTS2 in a version-5 file in tick order):
 * each trace as its difference from the trace the column gave before in
 * the record (0 before the first), zigzag-encoded as "z". */
static inline uint64_t mt_dat_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* The trace that column value v gives after prev: false unless it is in
 * [0, ndefs) (any v, from an untrusted file, is safe). */
static inline bool mt_dat_trace_step(uint32_t prev, uint64_t v, uint64_t ndefs, uint32_t *trace)
{
    uint64_t m = (v >> 1) + (v & 1); /* |difference| (odd v: -(v >> 1) - 1) */
    uint64_t t = v & 1 ? (uint64_t)prev - m : (uint64_t)prev + m;
    if (v & 1 ? m > prev : m >= ndefs || t >= ndefs)
        return false;
    *trace = (uint32_t)t;
    return true;
}

#endif
