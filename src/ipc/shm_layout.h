/* shm_layout.h -- the shared-memory segment that libmemtop.so publishes into.
 *
 * This is the contract between the target process (writer: the publisher
 * thread of libmemtop.so) and any number of viewers (readers: memtop).  It is
 * versioned; docs/shm-protocol.md explains it in prose.  Everything here is
 * plain data with fixed sizes, native byte order (x86-64 little endian; the
 * header records the byte order and word size so a foreign segment is
 * rejected rather than misread).
 *
 * Segment file: $MEMTOP_SHM_DIR/memtop-<pid> (default dir /dev/shm), mode 0600.
 *
 *   offset 0          mt_shm_header            (MT_HEADER_BYTES, incl. control)
 *   defs_off          trace definitions        (append-only records)
 *   modules_off       module map               (append-only records)
 *   slot_off[i]       MT_SLOTS snapshot slots  (seqlock-protected)
 *
 * The file is created sparse at its full size (ftruncate); tmpfs backs pages
 * only when they are touched.  The writer commits (fallocates) each region
 * before touching it, so a full /dev/shm gives the writer an error instead of
 * a SIGBUS.  Readers must never touch bytes beyond min(file size, committed).
 *
 * Memory ordering (see docs/shm-protocol.md):
 *  - defs_used / modules_used: the writer fills records, then stores the new
 *    length with release; readers load it with acquire and read only below.
 *  - slots: classic seqlock.  Writer: seq = odd (relaxed) ; release fence ;
 *    write payload ; seq = even (release).  Reader: s1 = seq (acquire); skip
 *    if odd; copy payload out; acquire fence; s2 = seq (relaxed); valid iff
 *    s1 == s2.  A writer killed mid-write leaves seq odd forever: readers
 *    fall back to the slot before.
 *  - latest_slot is stored with release after the slot's seq became even.
 */
#ifndef MEMTOP_SHM_LAYOUT_H
#define MEMTOP_SHM_LAYOUT_H

#include <stdint.h>

#define MT_SHM_MAGIC 0x31534d54504f4d4dULL /* "MMOPTMS1" as little-endian bytes */
#define MT_SHM_VERSION 1u
/* A segment of a sampled target (MEMTOP_SAMPLE): the layout of version 1
 * plus header.sample_rate_bytes, and figures that are estimates.  A reader
 * that does not know sampling refuses it instead of showing estimates as
 * exact; an exact target still writes version 1. */
#define MT_SHM_VERSION_SAMPLED 2u
#define MT_SHM_ENDIAN_MARK 0x01020304u
#define MT_SHM_PREFIX "memtop-"
#define MT_SHM_DEFAULT_DIR "/dev/shm"

#define MT_HEADER_BYTES 16384u
#define MT_SLOTS 3u
#define MT_MAX_DEPTH 128u
#define MT_PATH_MAX 512u
#define MT_CMDLINE_MAX 1024u
#define MT_BUILD_ID_MAX 40u
#define MT_TIMELINE_POINTS 1024u
#define MT_CKPTS 3u       /* growth checkpoints: short, medium, long window */
#define MT_AGE_BUCKETS 8u /* <1s <10s <1m <10m <1h <6h <1d >=1d */
#define MT_CTRL_ARG_MAX 1024u
#define MT_CTRL_MSG_MAX 1024u

/* A value the target could not determine (e.g. allocator_bytes when the real
 * allocator is not glibc's). */
#define MT_UNKNOWN UINT64_MAX

/* Header flags (mt_shm_header.flags, atomic). */
enum {
    MT_FLAG_EXITED = 1u << 0,       /* final snapshot published at exit */
    MT_FLAG_SEGMENT_FULL = 1u << 1, /* a region ran out of room; data dropped */
    MT_FLAG_FORK_CHILD = 1u << 2,   /* this process was forked from a tracked one */
    /* With MT_FLAG_EXITED: the final snapshot was published before an exec;
     * the process runs on as another program, which did not load
     * libmemtop.so (if it had, it would have replaced this segment). */
    MT_FLAG_EXECED = 1u << 3,
    /* The trace table reached its bound (MEMTOP_MAX_TRACES, slot.max_traces):
     * backtraces seen since have no trace of their own, their blocks are
     * counted in the overflow trace (id 0).  Added in version 1 without a
     * bump: older targets never set it. */
    MT_FLAG_TRACES_FULL = 1u << 4,
};

/* Control channel commands (viewer -> target). */
enum {
    MT_CMD_NONE = 0,
    MT_CMD_PING = 1,         /* answer "pong" */
    MT_CMD_PUBLISH_NOW = 2,  /* publish a snapshot now; answer after it is visible */
    MT_CMD_RECORD_START = 3, /* arg: absolute path of a new .dat file; answer OK with the path,
                              * or FAILED with the reason (exists, EACCES, already recording) */
    MT_CMD_RECORD_STOP = 4,  /* finalize the recording; answer OK with the bytes written.
                              * arg "" or MT_CTRL_STOP_RECORDING N: only if the
                              * running one is recording.recordings N (added
                              * without a bump: an older target ignores arg) */
    /* As RECORD_START (same arg and answer), but the recording is held by
     * the viewer that asked: it must bump header.rec_lease_beat, or the
     * target stops it after header.rec_lease_ms (docs/shm-protocol.md,
     * "Recording lease").  Added without a bump: an older target answers
     * MT_CTRL_UNKNOWN_CMD, and the viewer falls back to RECORD_START. */
    MT_CMD_RECORD_START_LEASED = 5,
};

/* MT_CMD_RECORD_START's arg: [thread-order SP] [cull[=SECS] SP] /path
 * (docs/shm-protocol.md). */
#define MT_CTRL_THREAD_ORDER "thread-order"
/* MT_CMD_RECORD_STOP's arg, followed by N in decimal (N > 0). */
#define MT_CTRL_STOP_RECORDING "recording="

/* Control channel status (target -> viewer). */
enum {
    MT_CTRL_OK = 0,
    MT_CTRL_UNKNOWN_CMD = 1,
    MT_CTRL_FAILED = 2,
};

/* The control area.  A viewer takes `lock` by CAS 0 -> its pid (a lock
 * whose pid is dead may be stolen), writes cmd/arg, then stores req_seq =
 * resp_seq + 1 with release.  The publisher polls req_seq (acquire) at least
 * every 50 ms, validates and executes the command, writes status/msg, and
 * stores resp_seq = req_seq with release.  The target never waits on it. */
typedef struct mt_shm_control {
    uint32_t lock; /* atomic; 0 or the owning viewer's pid */
    uint32_t cmd;
    uint64_t req_seq;  /* atomic */
    uint64_t resp_seq; /* atomic */
    int32_t status;
    uint32_t reserved;
    char arg[MT_CTRL_ARG_MAX];
    char msg[MT_CTRL_MSG_MAX];
} mt_shm_control;

/* Recording status (header.recording), written by the target only: the
 * viewer shows it.  All-zero (MT_REC_STATE_OFF) in a segment whose target
 * has never recorded, and in segments of targets built before recordings
 * existed (the header area beyond `control` was always zero).  `state` is
 * stored last with release after the other fields, all under the seqlock
 * header.rec_seq (with rec_dropped_why); numbers only grow while a
 * recording runs.  docs/recording-format.md describes the file. */
enum {
    MT_REC_STATE_OFF = 0,     /* never recorded */
    MT_REC_STATE_ON = 1,      /* recording into `path` */
    MT_REC_STATE_STOPPED = 2, /* finalized; the figures are final */
    MT_REC_STATE_FAILED = 3,  /* stopped by an error: see error / message */
};

#define MT_REC_MSG_MAX 256u
/* A leased recording (MT_CMD_RECORD_START_LEASED) ends when its viewer
 * has not renewed the lease for this long (the target's
 * MEMTOP_TEST_LEASE_MS in tests): room for a viewer on a loaded machine
 * (it renews every MT_REC_LEASE_RENEW_MS), and a bound on what a dead
 * viewer's recording writes to the disk. */
#define MT_REC_LEASE_MS_DEFAULT 10000u
#define MT_REC_LEASE_RENEW_MS 250u
#define MT_REC_WHY_MAX 8u /* causes of dropped events in the header (rec_dropped_why) */

typedef struct mt_shm_recording {
    uint32_t state;               /* atomic; MT_REC_STATE_* */
    int32_t error;                /* errno of a failure, else 0 */
    uint64_t start_unix_ns;       /* when the recording began */
    uint64_t bytes_written;       /* file bytes so far (compressed) */
    uint64_t events_written;      /* allocation and free events recorded */
    uint64_t events_dropped;      /* events the writer could not keep: inexact if > 0 */
    uint64_t recordings;          /* recordings started by this process so far */
    char path[MT_PATH_MAX];       /* NUL-terminated */
    char message[MT_REC_MSG_MAX]; /* NUL-terminated, e.g. "disk full (ENOSPC)" */
} mt_shm_recording;

/* Allocators found in the target (header.allocators), written by the
 * target only.  Every module's symbol tables are scanned at start and at
 * each dlopen for allocator entry points (docs/allocators.md); each
 * allocator found is one entry, saying whether memtop hooks it.  An entry
 * with MT_ALLOC_INEXACT set has a `note` saying what memtop cannot see
 * ("statically linked jemalloc (_rjem_) in /usr/bin/x not hooked"): the
 * data is NOT exact while any entry has it.  `seq` is a seqlock word (odd
 * while the target writes; 0 in a segment of a target built before this
 * area existed, which reads as "not known").  Added in version 1 without
 * a bump, like `recording`: the header area beyond it was always zero. */
enum {
    MT_ALLOC_KIND_GLIBC = 1,
    MT_ALLOC_KIND_JEMALLOC = 2,
    MT_ALLOC_KIND_MIMALLOC = 3,
    MT_ALLOC_KIND_TCMALLOC = 4,
    MT_ALLOC_KIND_PYMALLOC = 5, /* CPython's arena allocator on top of malloc */
    MT_ALLOC_KIND_OTHER = 6,    /* a module that defines malloc itself */
    MT_ALLOC_KIND_MAX = 6,
};

enum {
    MT_ALLOC_STATIC = 1u << 0,  /* linked into a module (no shared library of its own) */
    MT_ALLOC_HOOKED = 1u << 1,  /* memtop sees its allocations and frees */
    MT_ALLOC_INEXACT = 1u << 2, /* something memtop cannot see: `note` says what */
    MT_ALLOC_STATS = 1u << 3,   /* `allocated`..`mapped` hold the allocator's own view */
    /* hooked by redirecting its entry points in memory (docs/allocators.md);
     * a hooked jemalloc without it is hooked through its hook API */
    MT_ALLOC_REDIRECTED = 1u << 4,
    /* the bits this reader knows; it ignores the others (informational
     * flags added without a version bump; docs/shm-protocol.md) */
    MT_ALLOC_KNOWN_FLAGS = (MT_ALLOC_REDIRECTED << 1) - 1,
};

#define MT_ALLOC_MAX 8u
#define MT_ALLOC_NOTE_MAX 192u

typedef struct mt_shm_allocator {
    uint32_t kind;                /* MT_ALLOC_KIND_* */
    uint32_t flags;               /* MT_ALLOC_* */
    char prefix[16];              /* of its entry points ("_rjem_", "je_", "mi_"), NUL-terminated */
    char version[32];             /* e.g. "5.3.0-0-g54eaed1d8b56...", or "" */
    char module[256];             /* the file it lives in, NUL-terminated (maybe truncated) */
    char note[MT_ALLOC_NOTE_MAX]; /* why not exact, NUL-terminated, or "" */
    /* The allocator's own view (MT_ALLOC_STATS): bytes allocated by the
     * program, in active pages, resident, mapped.  MT_UNKNOWN otherwise. */
    uint64_t allocated, active, resident, mapped;
    /* Its stats.allocated when memtop installed its hooks (jemalloc), or
     * MT_UNKNOWN.  For a linked-in allocator these are blocks in no trace
     * (allocated before memtop started); for a shared one, memtop's malloc
     * hook may have seen them. */
    uint64_t before_hooks;
} mt_shm_allocator;

typedef struct mt_shm_allocators {
    uint32_t seq;     /* atomic seqlock word, see above */
    uint32_t count;   /* entries used, <= MT_ALLOC_MAX */
    uint32_t inexact; /* entries with MT_ALLOC_INEXACT (0: nothing unseen found) */
    uint32_t more;    /* allocators found beyond MT_ALLOC_MAX (each one inexact) */
    mt_shm_allocator a[MT_ALLOC_MAX];
} mt_shm_allocators;

typedef struct mt_shm_slot_ref {
    uint64_t seq; /* atomic seqlock word; odd while being written */
    uint64_t off; /* byte offset of the slot in the segment */
    uint64_t cap; /* bytes reserved for the slot */
} mt_shm_slot_ref;

typedef struct mt_shm_header {
    uint64_t magic;
    uint32_t version;
    uint32_t endian_mark;
    uint32_t header_bytes;  /* sizeof the header area, MT_HEADER_BYTES */
    uint32_t word_bits;     /* 64 */
    uint64_t segment_bytes; /* the file's full (sparse) size */

    /* Who: fixed at creation. */
    int32_t pid;
    uint32_t uid;
    int32_t ppid;
    uint32_t grow_errno;       /* errno of the first failure to grow the file (full
                                * /dev/shm), 0 if none; stored before the
                                * MT_FLAG_SEGMENT_FULL it comes with (release) */
    uint64_t proc_start_ticks; /* field 22 of /proc/self/stat: tells pid reuse */
    uint64_t start_unix_ns;    /* when tracking began (CLOCK_REALTIME) */
    char exe[MT_PATH_MAX];
    char cmdline[MT_CMDLINE_MAX]; /* argv joined by spaces, truncated */

    /* Settings in force. */
    uint32_t max_depth;
    uint32_t publish_interval_ms;
    uint64_t temporary_ns; /* "temporary" = freed within this lifetime */

    /* Live state (atomics). */
    uint32_t flags;             /* MT_FLAG_* */
    uint32_t latest_slot;       /* index of the newest complete slot */
    uint64_t publish_count;     /* snapshots published so far */
    uint64_t heartbeat_unix_ns; /* time of the last publish */

    /* Regions: offsets and capacities are fixed at creation; *_used and
     * *_count grow (release stores). */
    uint64_t defs_off, defs_cap, defs_used, defs_count;
    uint64_t modules_off, modules_cap, modules_used, modules_count;
    mt_shm_slot_ref slots[MT_SLOTS];

    mt_shm_control control;
    mt_shm_recording recording;   /* added in version 1 without a bump: see above */
    mt_shm_allocators allocators; /* likewise */
    /* Version MT_SHM_VERSION_SAMPLED only (0 in version 1): the mean bytes
     * between samples (MEMTOP_SAMPLE).  Per-trace figures, live, peak,
     * temporary and free bytes are then estimates (sample_weight.h);
     * totals.alloc_count, alloc_bytes and free_count stay exact. */
    uint64_t sample_rate_bytes;
    /* Added without a bump, like `recording` (0 in a segment of an older
     * target: the causes are not known): recording.events_dropped by
     * cause, indexed by dat_format.h's MT_DAT_LOST_* (the rest 0), written
     * by the target with `recording`. */
    uint64_t rec_dropped_why[MT_REC_WHY_MAX];
    /* Added without a bump too (0 in an older target's segment): a seqlock
     * word over `recording` and rec_dropped_why, odd while the publisher
     * writes them, so that a viewer reads a set of figures that existed
     * together (docs/shm-protocol.md, "Recording status"). */
    uint64_t rec_seq;
    /* Added without a bump too (0 in an older target's segment: taken with
     * the slot): when the newest slot's totals.allocator_bytes and
     * allocator_inuse_bytes were taken, in slot.t_ns's clock.  glibc's
     * figures come from a walk of its arenas that holds each arena's lock,
     * so the target takes them at a pace and they can be older than the
     * slot (docs/shm-protocol.md, "The allocator's figures, at a pace").
     * Stored before the slot is published: a viewer that reads it after
     * its slot may see a newer slot's, by at most one interval. */
    uint64_t allocator_at_ns;
    /* Recording lease (docs/shm-protocol.md, "Recording lease"); added
     * without a bump too (0 in an older target's segment: no lease, end
     * reason not known).  rec_lease_beat: written by the viewer that holds
     * the lease (an atomic relaxed add of 1, at least once a second), read
     * by the target's publisher (relaxed) on its own clock: a value that
     * has not changed for rec_lease_ms ends the recording
     * (MT_DAT_END_LEASE).  Only its changes count, never its value: no
     * clock or pid is shared.  rec_lease_ms and rec_end_reason are written
     * by the target with `recording`, under rec_seq: the bound of the
     * running (or last) recording, 0 when it has no lease (MEMTOP_RECORD,
     * RECORD_START); the MT_DAT_END_* the last recording ended with, 0
     * while none has ended. */
    uint64_t rec_lease_beat;
    uint32_t rec_lease_ms;
    uint32_t rec_end_reason;
} mt_shm_header;

_Static_assert(sizeof(mt_shm_header) <= MT_HEADER_BYTES, "header must fit its area");

/* A backtrace definition, appended once when the trace is first published.
 * Followed by nframes uint64_t call-site addresses (return address - 1),
 * innermost first.  Records are 8-byte aligned and packed back to back; ids
 * are dense and appear in increasing order (id n is the n-th record). */
typedef struct mt_shm_def {
    uint32_t id;
    uint16_t nframes;
    uint16_t flags; /* MT_DEF_TRUNCATED when the stack was deeper */
    uint64_t hash;
    uint64_t first_seen_ns; /* monotonic ns since tracking start */
} mt_shm_def;

enum { MT_DEF_TRUNCATED = 1u << 0 };

/* A loaded module (executable, shared object, vdso).  Appended when first
 * seen; unload_seq is set (atomic store) when it disappears.  An address
 * belongs to a module if start <= addr < end; `offset` = addr - bias is the
 * ELF virtual address inside the module's file.  unload_trace (added in
 * version 1 without a bump: older targets leave it 0) is the next trace id
 * when the target saw the module gone, stored (atomic) before unload_seq:
 * every trace whose frames the module holds has a smaller id, so a trace
 * whose address two modules covered in turn is named from the right one
 * (docs/shm-protocol.md, "Modules").  0: not known. */
typedef struct mt_shm_module {
    uint64_t bias;
    uint64_t start, end;
    uint64_t load_seq;   /* publish_count when first seen */
    uint64_t unload_seq; /* atomic; 0 while loaded */
    uint32_t build_id_len;
    uint8_t build_id[MT_BUILD_ID_MAX];
    uint32_t unload_trace;  /* atomic; 0 while loaded or not known (was `reserved`) */
    char path[MT_PATH_MAX]; /* "[vdso]" etc. for modules without a file */
} mt_shm_module;

/* Process-wide totals in a snapshot.  live/alloc/free/temporary figures are
 * the sums over every trace the target holds, published or not: exact
 * whatever was dropped.  Traces without a record of their own are folded
 * into the record of the overflow trace (id 0), so the records of a slot
 * sum to its totals. */
typedef struct mt_shm_totals {
    uint64_t live_bytes, live_count;
    uint64_t alloc_count, alloc_bytes;
    uint64_t free_count, free_bytes;
    uint64_t temporary_count, temporary_bytes;
    uint64_t peak_live_bytes;       /* process-wide peak, exact */
    uint64_t unknown_free_count;    /* frees of pointers memtop never saw */
    uint64_t untracked_alloc_count; /* allocations made where tracking was not possible */
    uint64_t missed_free_count;     /* blocks whose free was not seen (address reused) */
    uint64_t dropped_traces;        /* traces not published (segment full): folded into id 0 */
    uint64_t allocator_bytes;       /* bytes the allocator holds from the kernel, or MT_UNKNOWN */
    uint64_t allocator_inuse_bytes; /* bytes in use per the allocator, or MT_UNKNOWN */
    uint64_t rss_bytes;
    uint64_t tracker_bytes; /* memtop's own bookkeeping memory in the target */
    uint64_t trace_count;
    uint64_t thread_count; /* threads that allocated and have not exited */
} mt_shm_totals;

/* One point of the process timeline.  Old points are downsampled (every
 * other point dropped when the buffer is full), so the timeline always
 * covers the whole life of the process. */
typedef struct mt_shm_point {
    uint64_t t_ns; /* monotonic ns since tracking start */
    uint64_t live_bytes, live_count;
    uint64_t alloc_count, alloc_bytes, free_count;
    uint64_t allocator_bytes, rss_bytes;
} mt_shm_point;

/* Per-trace counters in a snapshot. */
typedef struct mt_shm_trace {
    uint32_t id;
    uint32_t reserved;
    uint64_t alloc_count, alloc_bytes;
    uint64_t free_count, free_bytes;
    uint64_t live_count, live_bytes;
    uint64_t peak_live_bytes;
    uint64_t temporary_count, temporary_bytes;
    uint64_t ckpt_live_bytes[MT_CKPTS]; /* live bytes at slot.ckpt_ns[i] */
    uint64_t oldest_birth_ns; /* of a live allocation, as of age_scan_ns; MT_UNKNOWN if none */
    uint64_t age_bytes[MT_AGE_BUCKETS]; /* live bytes by age, as of age_scan_ns */
} mt_shm_trace;

/* A snapshot slot: this header, then `ntimeline` points, then `ntraces`
 * trace records.  Everything is covered by the slot's seqlock. */
typedef struct mt_shm_slot {
    uint64_t publish_seq; /* header.publish_count when written */
    uint64_t t_ns;        /* monotonic ns since tracking start */
    uint64_t unix_ns;
    uint64_t ckpt_ns[MT_CKPTS]; /* when each growth checkpoint was taken; 0 = none yet */
    uint64_t age_scan_ns;       /* when ages were last computed; 0 = never */
    mt_shm_totals totals;
    uint32_t ntimeline;
    uint32_t max_traces; /* MEMTOP_MAX_TRACES in force; 0 from older targets (was reserved) */
    uint64_t ntraces;
    uint64_t timeline_step_ns; /* spacing of timeline points */
    uint64_t defs_count;       /* defs visible when this slot was written */
    uint64_t modules_count;
} mt_shm_slot;

/* Region capacities chosen by the writer (readers take them from the
 * header and validate them, never from here). */
#define MT_DEFS_CAP (256ull << 20)
#define MT_MODULES_CAP (8ull << 20)
#define MT_SLOT_CAP (256ull << 20)

static inline uint64_t mt_def_bytes(uint32_t nframes)
{
    return sizeof(mt_shm_def) + (uint64_t)nframes * sizeof(uint64_t);
}

#endif
