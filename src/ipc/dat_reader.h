/* dat_reader.h -- reading a recording (.dat: docs/recording-format.md,
 * dat_format.h) as a stream of validated events.
 *
 * Why it exists: the viewer's replay (src/tui/replay) turns the events into
 * snapshots; this layer owns every byte-level check.  It decompresses the
 * zstd frames as a stream (memory: zstd's window, one record and, for
 * version-2 EVENTS2 records, the live blocks of the current frame --
 * dat_reader_blocks.h; never proportional to the file), resolves the frees
 * that name their block, validates every length, count, id and varint
 * of every record, skips record types it does not know, and reads a file
 * cut short up to its last complete frame (mt_dat_get_info says how many
 * bytes it dropped).  A foreign or corrupt file is an error with a
 * one-line message.
 *
 * Records holding many items (EVENTS, EVENTS2, TRACE_STATES, LIVE_BLOCKS)
 * come out one item per event. */
#ifndef MEMTOP_DAT_READER_H
#define MEMTOP_DAT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "dat_lost.h"
#include "shm_error.h"
#include "shm_layout.h"

typedef enum mt_dat_kind {
    MT_DAT_PROCESS,     /* who was recorded (u.proc); always the first event */
    MT_DAT_MODULE,      /* a module (u.mod) */
    MT_DAT_UNLOAD,      /* module u.unload.index was unloaded (u.unload) */
    MT_DAT_DEF,         /* a backtrace definition (u.def) */
    MT_DAT_ALLOC,       /* an allocation (u.ev) */
    MT_DAT_FREE,        /* a free, charged to the allocating trace (u.ev) */
    MT_DAT_TOTALS,      /* periodic process figures (u.totals) */
    MT_DAT_STATE_BEGIN, /* a state set begins (u.state.kind) */
    MT_DAT_TRACE_STATE, /* one trace's counters in a state set (u.ts) */
    MT_DAT_LIVE_BLOCK,  /* live blocks in a state set (u.lb) */
    MT_DAT_STATE_END,   /* the state set is complete (u.state) */
    MT_DAT_LOST,        /* events the target could not record (u.lost) */
    MT_DAT_END,         /* the recording was finalized (u.end) */
    MT_DAT_CULLED,      /* version 3: one trace's blocks culled since the last (u.culled) */
} mt_dat_kind;

typedef struct mt_dat_process {
    int32_t pid, ppid;
    uint32_t uid;
    uint64_t proc_start_ticks;
    uint64_t start_unix_ns;  /* when tracking began */
    uint64_t record_start;   /* when the recording began (tracking clock) */
    uint64_t record_unix_ns; /* the same, wall clock */
    uint32_t max_depth, publish_interval_ms;
    uint64_t temporary_ns;
    uint64_t flags;       /* MT_DAT_PROC_* */
    uint32_t record_mode; /* MT_DAT_MODE_* (version 3; else full) */
    uint64_t cull_ms;     /* culled: the lifetime threshold, 1..MT_DAT_CULL_MS_MAX */
    uint64_t young_max;   /* culled: the writer's bound on young blocks */
    char exe[MT_PATH_MAX];
    char cmdline[MT_CMDLINE_MAX];
    uint64_t sample_rate_bytes; /* version 3: > 0, the events are samples; else 0 (exact) */
    bool tick_order; /* version 5 on: within a tick, a thread's events are sorted, not in order */
} mt_dat_process;

typedef struct mt_dat_module {
    uint64_t index;            /* dense */
    uint64_t bias, start, end; /* start < end */
    uint32_t build_id_len;     /* <= MT_BUILD_ID_MAX */
    uint8_t build_id[MT_BUILD_ID_MAX];
    char path[MT_PATH_MAX]; /* NUL-terminated */
} mt_dat_module;

typedef struct mt_dat_def {
    uint32_t id;             /* dense: the n-th definition has id n */
    uint16_t nframes, flags; /* nframes <= MT_MAX_DEPTH; MT_DEF_* */
    uint64_t hash;
    uint64_t frames[MT_MAX_DEPTH]; /* innermost first */
} mt_dat_def;

typedef struct mt_dat_ev {
    uint32_t tid;
    uint32_t trace; /* < definitions seen so far */
    uint64_t size;
    uint32_t flags;    /* free: MT_DAT_EVF_* */
    uint32_t deferred; /* with mt_dat_defer_blocks: 1 if the block is one of the frame's, its
                        * live group left to the frame's end (see there); else 0 */
    uint64_t birth_ms; /* the block's birth, ms of the tracking clock */
} mt_dat_ev;

typedef struct mt_dat_totals {
    uint64_t unix_ns;
    uint32_t nfields;                 /* fields present (the rest are 0) */
    uint64_t f[MT_DAT_TOTALS_FIELDS]; /* mt_shm_totals, in its order */
    uint64_t events_written, events_dropped;
} mt_dat_totals;

typedef struct mt_dat_trace_state {
    uint32_t id;
    uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
    uint64_t temporary_count, temporary_bytes, peak_live_bytes;
} mt_dat_trace_state;

typedef struct mt_dat_live_block {
    uint32_t trace;
    uint64_t birth_ms, size, count;
} mt_dat_live_block;

typedef struct mt_dat_lost {
    uint32_t tid;
    uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
    /* The events by cause (MT_DAT_LOST_* and the two above), summing to
     * alloc_count + free_count (a sum past 2^64 - 1 is corrupt). */
    uint64_t why[MT_DAT_LOST_WHY_N];
} mt_dat_lost;

/* count blocks of trace id (bytes in all, temporary_* of them temporary)
 * were allocated and freed within the threshold; written_early, young:
 * the record's figures (dat_format.h, CULLED). */
typedef struct mt_dat_culled {
    uint32_t id;
    uint64_t count, bytes, temporary_count, temporary_bytes;
    uint64_t written_early, young;
} mt_dat_culled;

typedef struct mt_dat_end {
    uint64_t unix_ns;
    uint32_t reason; /* MT_DAT_END_* */
    uint32_t error;  /* errno for MT_DAT_END_ERROR */
    uint64_t events_written, events_dropped;
} mt_dat_end;

typedef struct mt_dat_event {
    mt_dat_kind kind;
    uint64_t t_ns; /* ns since tracking began; records without a time: the newest seen */
    union {
        mt_dat_process proc;
        mt_dat_module mod;
        struct {
            uint64_t index;      /* the module's */
            uint32_t next_trace; /* the next trace id at its unload; 0: not known (older files) */
        } unload;
        mt_dat_def def;
        mt_dat_ev ev;
        mt_dat_totals totals;
        struct {
            uint32_t kind; /* MT_DAT_STATE_* */
            uint64_t unix_ns;
            uint64_t ntraces, nlive; /* STATE_END */
        } state;
        mt_dat_trace_state ts;
        mt_dat_live_block lb;
        mt_dat_lost lost;
        mt_dat_end end;
        mt_dat_culled culled;
    } u;
} mt_dat_event;

/* An allocation or a free (kind MT_DAT_ALLOC or MT_DAT_FREE) as
 * mt_dat_next_batch gives it: the fields of its mt_dat_event. */
typedef struct mt_dat_hev {
    mt_dat_kind kind;
    uint64_t t_ns;
    mt_dat_ev ev;
} mt_dat_hev;

/* A restartable position: the start of a zstd frame, outside any state
 * set, with the number of definitions and modules read before it. */
#define MT_DAT_NO_FRAME UINT64_MAX

typedef struct mt_dat_pos {
    uint64_t offset;
    uint64_t prev_frame; /* where the frame before it begins, or MT_DAT_NO_FRAME */
    uint64_t ndefs, nmodules;
    uint64_t t_ns;
    uint64_t lost_events; /* LOST records' events before it */
    bool started;         /* the PROCESS record was read */
    /* what it said, which the records after it are read by (a reader
     * opened afresh and sent here has not read it) */
    bool culled, tick_order;
} mt_dat_pos;

typedef struct mt_dat_info {
    uint64_t file_bytes;
    uint64_t data_end;      /* end of the last complete frame */
    uint64_t frames;        /* complete zstd frames */
    bool truncated;         /* the file ends inside a frame, or in a bad tail */
    bool invalid_tail;      /* bytes after the last complete frame are not a frame */
    uint64_t dropped_bytes; /* bytes after the last complete frame */
    uint64_t created_unix_ns;
    uint32_t version; /* of the file: MT_DAT_VERSION_MIN .. MT_DAT_VERSION */
} mt_dat_info;

typedef struct mt_dat_reader mt_dat_reader;

/* Open path ("-": standard input's recording, dat_stdin.h), check the
 * file header and find the complete frames.  NULL
 * with a one-line message in err (MT_E_NOENT, MT_E_PERM, MT_E_IO,
 * MT_E_NOTMEMTOP, MT_E_FOREIGN, MT_E_TRUNCATED, MT_E_CORRUPT, MT_E_NOMEM). */
mt_dat_reader *mt_dat_open(const char *path, mt_err *err);

/* Same on an open descriptor, which the reader takes over (closed on
 * failure too); label names it in messages. */
mt_dat_reader *mt_dat_open_fd(int fd, const char *label, mt_err *err);

void mt_dat_close(mt_dat_reader *r);

/* The allocators of the last ALLOCATORS record read so far (validated as
 * a segment's are: shm_allocators.h; their figures MT_UNKNOWN), or NULL
 * when none was (an older writer).  The record gives no event. */
const mt_shm_allocators *mt_dat_allocators(const mt_dat_reader *r);
/* The list of the newest ALLOCATORS record at or before t_ns (of those
 * read so far: the whole file's after a first reading to its end), or
 * NULL when none is (before the first one, or an older writer): what the
 * target had found by then, not what it found later. */
const mt_shm_allocators *mt_dat_allocators_at(const mt_dat_reader *r, uint64_t t_ns);

const mt_dat_info *mt_dat_get_info(const mt_dat_reader *r);

/* The next event: MT_OK with *ev filled, MT_E_EMPTY after the last
 * complete frame, or an error (MT_E_CORRUPT, MT_E_IO, MT_E_NOMEM; the
 * reader is then unusable). */
mt_errc mt_dat_next(mt_dat_reader *r, mt_dat_event *ev, mt_err *err);

/* The next events of the EVENTS2 record in progress, up to max of them,
 * into out[0..*n): what as many mt_dat_next calls would give, in one
 * call.  *n is 0 when no EVENTS2 record is in progress (mt_dat_next
 * starts each record and gives its first event).  An error as
 * mt_dat_next's, after the *n events before it. */
mt_errc mt_dat_next_batch(mt_dat_reader *r, mt_dat_hev *out, size_t max, size_t *n, mt_err *err);

/* Deferred frame blocks, for a pass that keeps live blocks by group
 * (the replay's first pass).  Most blocks of an EVENTS2 frame are freed
 * within it, and the reader tracks the frame's live blocks anyway (its
 * frame context): from now on, the allocations and the frees naming
 * their block (FREE_REF) of a frame come with ev.deferred = 1, which
 * says "leave this block out of your groups": the blocks still live at
 * mt_dat_flush_blocks, which the reader also calls before it starts the
 * next frame and at a seek, are given to fn (trace, size, birth), once
 * each, up to MT_DAT_BLOCKS_PER_CALL per call (so that fn can prefetch
 * what each will touch),
 * and the frees of blocks given come with deferred = 0.  So a
 * caller that adds what fn gives and skips the deferred events holds the
 * same groups as one that adds every event, wherever it has called
 * mt_dat_flush_blocks.  fn returns nonzero when out of memory (the
 * reader's call then fails with MT_E_NOMEM).  fn NULL: off (the blocks
 * not given yet are dropped); turned on within a frame that has had
 * allocations, it starts with the next frame. */
#define MT_DAT_BLOCKS_PER_CALL 64u
typedef struct mt_dat_block {
    uint32_t trace;
    uint64_t size, birth_ms;
} mt_dat_block;
typedef int (*mt_dat_block_fn)(void *ctx, const mt_dat_block *b, size_t n);
void mt_dat_defer_blocks(mt_dat_reader *r, mt_dat_block_fn fn, void *ctx);

/* Give fn now the live blocks of the frame whose allocations were
 * deferred and not given yet.  MT_OK when deferral is off. */
mt_errc mt_dat_flush_blocks(mt_dat_reader *r, mt_err *err);

/* True (and *pos filled) when the reader stands at a frame boundary with
 * no record pending and outside any state set (the start of the frames
 * included): a place mt_dat_seek can come back to. */
bool mt_dat_tell(const mt_dat_reader *r, mt_dat_pos *pos);

/* Continue reading at a position mt_dat_tell gave. */
mt_errc mt_dat_seek(mt_dat_reader *r, const mt_dat_pos *pos, mt_err *err);

/* From one other thread while the reader's own reads on: decompress a
 * chunk of the recording ahead of it, if one is free and no one else
 * decompresses (dat_zstream.h); true if it did.  What the reader gives is
 * the same either way.  Never while the reader is opened, sought or
 * closed. */
bool mt_dat_decode_ahead(mt_dat_reader *r);

/* Records of types this reader does not know, skipped so far. */
uint64_t mt_dat_records_skipped(const mt_dat_reader *r);

#endif
