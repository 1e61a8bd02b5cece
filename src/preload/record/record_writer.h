/* record_writer.h -- the recording session: the .dat file, its zstd stream
 * and the background thread that drains the per-thread rings into it:
 * record_zstd.c (file output), record_thread.c (the writer thread) and
 * record_session.c (begin, end, seal, fork) share this state.
 *
 * One session at a time per process.  Everything that writes the file
 * holds `lock` (a spinlock: the writer thread's cycle, start, finalize, and
 * a hook draining synchronously before the writer thread exists).  Memory
 * (buffers, the zstd context) comes from mmap; zstd never calls the hooked
 * malloc.
 */
#ifndef MT_RECORD_WRITER_H
#define MT_RECORD_WRITER_H

#include "dat_format.h"
#include "publish_modules.h"
#include "record_encode.h"
#include "core_spinlock.h"

#include <stdbool.h>
#include <sys/types.h>

#define MT_RECW_MODULES_MAX 4096u

typedef struct mt_recw_module {
    uint64_t bias, start, ident; /* ident: mt_module_scan_run's */
    uint32_t index;
    uint32_t seen;
    bool loaded;
} mt_recw_module;

/* The columns of an EVENTS2 record (dat_format.h), in file order. */
enum { MT_COL_TAGS, MT_COL_TIMES, MT_COL_TRACES, MT_COL_SIZES, MT_COL_REFS, MT_COL_AGES, MT_COL_N };
#define MT_RR_EVENTS_MAX 16384u /* events per EVENTS2 record */

/* The EVENTS2 record being built (record_events.c): one thread's events,
 * their columns in mt_recw.cols. */
typedef struct mt_rr_open {
    uint32_t n; /* events in it; 0: none open */
    uint32_t tid;
    uint64_t base, prev_t, prev_trace;
    uint32_t col_trace; /* the trace the traces column gave last (0: none yet) */
    unsigned prev_kind; /* the previous event's kind (of this record): MT_DAT_EV_* */
    uint64_t prev_ref;  /* ... its ref, when a reference */
    uint64_t opened_ns; /* mt_now_ns() when it was opened */
} mt_rr_open;

/* Why the hooks dropped events (record_buffer.c's drop policy): the file's
 * causes (dat_format.h MT_DAT_LOST_*) of the drops a hook decides. */
enum {
    MT_DROP_DISK = MT_DAT_LOST_DISK,        /* the disk is behind: waiting would not help */
    MT_DROP_CAP = MT_DAT_LOST_WAIT_CAP,     /* waited the longest a hook may for the writer */
    MT_DROP_NOWAIT = MT_DAT_LOST_NOWAIT,    /* could not wait: signal handler, nested, loader
                                             * lock, stopping */
    MT_DROP_NORING = MT_DAT_LOST_NO_BUFFER, /* no buffer (out of memory, or a handler took the
                                             * thread's first) */
    MT_DROP_N
};

typedef struct mt_recw {
    mt_spinlock lock;
    bool open; /* a file is being written */
    int fd;
    pid_t pid;       /* the process that owns the file (a fork child never writes it) */
    int err;         /* errno of the first write error */
    void *cctx;      /* ZSTD_CCtx, from mmap */
    mt_rec_buf out;  /* whole records not yet given to zstd */
    mt_rec_buf pay;  /* one record's payload */
    mt_rec_buf zbuf; /* compressed bytes */
    /* The EVENTS2 record being built: tags in cols[MT_COL_TAGS][0]; each
     * varint column's lead bytes in [c][0], tail bytes in [c][1]. */
    mt_rec_buf cols[MT_COL_N][2];
    mt_rr_open open_rec;
    /* this session writes each run of one time in tick order (record_tick.h);
     * never a culled one (reset_session) */
    bool tick_order;
    /* this session writes version 8 (MT_DAT_VERSION_PAIRS): version 7's
     * runs of references and rising sizes, and paired tags (TAG_PAIRS,
     * EVENTS2's tags_len: record_tag_pairs.h); in tick order only, every
     * other recording version 6 (reset_session) */
    bool runs;
    bool frame_open;
    /* Records go to `out` only: never compressed or written (lock held).
     * A pass on the program's thread that must not wait for the disk
     * (mt_rec_dlclose_modules); it checks the room first (mt_recw_room). */
    bool no_io;
    uint64_t frame_t0;    /* when the open frame got its first record */
    uint64_t frame_raw;   /* uncompressed bytes given to the open frame */
    bool small;           /* the open frame uses the strong level (slow stream) */
    uint64_t bytes;       /* file bytes written */
    uint64_t frame_mark;  /* file bytes up to the end of the last complete frame */
    uint64_t prev_mark;   /* ... of the complete frame before it (at first: the header's end) */
    bool reserve;         /* keep MT_RECW_END_RESERVE bytes allocated past the end */
    uint64_t reserved_to; /* file offset allocated up to (FALLOC_FL_KEEP_SIZE) */
    uint32_t defs;        /* traces defined in the file so far */
    uint64_t last_totals_ns;
    uint64_t allocs_hash; /* of the last ALLOCATORS record written; 0: none yet */
    /* Module map of the file: the modules loaded (and slots of unloaded
     * ones, taken again by the next new module: a service that loads and
     * unloads a plugin all day writes a MODULE per load, and must not run
     * out of slots), and the MODULE records written (the next index). */
    mt_module_scan modscan;
    uint32_t nmodules;
    uint32_t module_records;
    mt_recw_module modules[MT_RECW_MODULES_MAX];
    /* Shared with the hooks and the status. */
    _Atomic uint64_t events;
    _Atomic uint64_t dropped;
    /* Why (MT_DROP_*; their sum is at most dropped: the rest are a
     * mid-run start's approximations), the longest a hook waited at the
     * buffer's bound, and the longest write(2) to the file (ns). */
    _Atomic uint64_t dropped_why[MT_DROP_N];
    _Atomic uint64_t stall_max_ns;
    _Atomic uint64_t write_max_ns;
    _Atomic uint64_t write_since;           /* CLOCK_MONOTONIC ns a write(2) began; 0: none */
    _Atomic int write_tid;                  /* the thread making it */
    _Atomic int thread_tid;                 /* the writer thread's; 0: none */
    uint64_t writer_run_ns, writer_wait_ns; /* its schedstat, once a second (lock held) */
    _Atomic bool thread_running;
    _Atomic bool thread_stop;
    /* A mid-run start's pause: the gate gives up at pause_until (mt_now_ns
     * clock) and counts it; approx: events counted as dropped because the
     * initial state may or may not include them. */
    _Atomic uint64_t pause_until;
    _Atomic uint64_t gate_giveups;
    uint64_t approx; /* a hint field (MT_HINT_SET): the status reads it */
    /* The final state's excess counted as dropped (LOST of tid 0, cause
     * MT_DAT_LOST_UNSEEN); a hint field too. */
    uint64_t unseen;
    /* What the file accounts for, per MT_LOST_* field (alloc count, alloc
     * bytes, free count, free bytes): the initial state, the events
     * written, the LOST records.  The final state's excess over their sum
     * is written as a LOST record too (record_session.c, final state). */
    uint64_t sum_initial[4], sum_events[4], sum_lost[4];
    uint64_t sum_why[MT_DAT_LOST_CAUSES]; /* the LOST records' events by cause */
    /* exec: the final state and END are written (sealed) but cut off again
     * (file truncated to seal_mark) if the exec fails. */
    bool sealed;
    uint64_t seal_mark;
    uint64_t seal_lost[4];                 /* sum_lost at seal_mark */
    uint64_t seal_why[MT_DAT_LOST_CAUSES]; /* sum_why at seal_mark */
    uint64_t seal_excess;                  /* dropped counted by the sealed final state */
} mt_recw;

extern mt_recw mt_w;

/* Used by the rings. */
bool mt_recw_active(void);
bool mt_recw_thread_running(void);
bool mt_recw_drain_sync(void);
void mt_recw_note_dropped(uint64_t n);
/* A hook dropped one event, for reason why (MT_DROP_*). */
void mt_recw_note_drop_why(unsigned why);
/* A hook waited ns at the buffer's bound. */
void mt_recw_note_stall(uint64_t ns);
/* A write(2) to the file lasted ns (writer). */
void mt_recw_note_write(uint64_t ns);
/* The disk cannot keep up (record_disk.c): the writer sleeps in a
 * write(2) to the file that has lasted 100 ms, and slept inside writes
 * for at least half of the last 1-2 s.  now: CLOCK_MONOTONIC ns. */
bool mt_recw_disk_behind(uint64_t now);
/* A write(2) to the file has been under way for 100 ms or longer and the
 * writer sleeps in it (a slow disk, not a writer waiting for a core; now:
 * CLOCK_MONOTONIC ns). */
bool mt_recw_write_slow(uint64_t now);
/* Whether the writer thread works -- runs, or waits for a core -- rather
 * than sleeps (record_disk.c): a hook at its buffer's bound waits longer
 * for a writer that works (record_buffer.c).  A look at its schedstat
 * (CLOCK_MONOTONIC ns, the writer's ns running or waiting for a core);
 * mt_recw_worked: it is runnable now, or worked at least half of the time
 * since the look (false if unknown: no writer thread, or it changed). */
typedef struct mt_recw_look {
    uint64_t t, busy;
    int tid;
} mt_recw_look;
void mt_recw_look_take(mt_recw_look *l, uint64_t now);
bool mt_recw_worked(const mt_recw_look *l, uint64_t now);
/* Wakes the writer thread if it sleeps (a ring is filling up). */
void mt_recw_kick(void);

/* Session control (record_control.c), all with lock NOT held. */
/* Takes over fd (a new, empty file); writes the header, the process
 * record and, if mid_run, the definitions and the initial state; then
 * switches recording on.  False (fd closed, *err set) on failure. */
bool mt_recw_begin(int fd, bool mid_run, bool fork_child, int *err);
/* Finalizes: final state, END(reason), close.  Returns the bytes written. */
uint64_t mt_recw_end(unsigned reason);
/* exec: writes the final state and END(reason) but keeps the file open;
 * the writer writes nothing more.  False if there was nothing to seal or
 * a write error happened (then finalize with mt_recw_end). */
bool mt_recw_seal(unsigned reason);
/* The exec failed: cuts the final state and END off again and resumes.
 * False if impossible (the file is then closed and recording is off). */
bool mt_recw_unseal(void);
bool mt_recw_start_thread(void);
void mt_recw_child_reset(void);

/* One write(2) to the file, timed (record_disk.c), lock held: begin
 * before it, end after it. */
typedef struct mt_recw_wtime {
    uint64_t t0, run, wait; /* CLOCK_MONOTONIC; the thread's CPU and run-queue ns */
    bool sched;             /* run and wait from schedstat (else run: CPU time) */
} mt_recw_wtime;
void mt_recw_write_begin(mt_recw_wtime *w);
void mt_recw_write_end(const mt_recw_wtime *w);
void mt_recw_disk_reset(void); /* a new session: no history */
/* Thread tid's (0: the caller's) ns on a CPU and waiting for one. */
bool mt_recw_sched_times(int tid, uint64_t *run, uint64_t *wait);

/* Output stage (record_zstd.c), lock held. */
void mt_recw_emit(unsigned type); /* the payload in mt_w.pay becomes a record */
/* `out` has room for a record of this payload without compressing. */
bool mt_recw_room(size_t payload);
/* A record whose payload is mt_w.pay followed by the n parts (not
 * copied: zstd reads them where they are when the record is large),
 * compressed so that a zstd block ends after each part marked `cut`:
 * zstd codes the literals of a block with one entropy table, and columns
 * of one kind of field compress better with a table of their own. */
typedef struct mt_recw_part {
    const unsigned char *p;
    size_t len;
    bool cut;
} mt_recw_part;
void mt_recw_emit_parts(unsigned type, const mt_recw_part *parts, unsigned n);
void mt_recw_end_frame(void);
uint64_t mt_recw_now(void);

/* Record builders (record_records.c, record_state.c), lock held. */
void mt_rr_process(bool mid_run, bool fork_child, uint64_t now);
void mt_rr_modules(uint64_t now);
void mt_rr_defs(void);
/* Events of the rings that are due (all: every ring, to its head); true
 * if any event was written.  Recycles retired rings (record_events.c). */
bool mt_rr_drain_rings(bool all);
/* Writes the open EVENTS2 record, if any (before a frame ends). */
void mt_rr_flush_events(void);
/* The final state's drain: each ring's events up to its cut, and its lost
 * counts up to its cut (mt_rec_lost); the rest is left in the ring (a failed exec
 * resumes) or, if drop_rest, discarded uncounted. */
void mt_rr_drain_cut(bool drop_rest);
/* A LOST record of thread tid (0: no thread) for lost[MT_LOST_*], dropped
 * for the causes why[MT_DAT_LOST_*] (counts summing to lost's events). */
void mt_rr_lost(uint32_t tid, const uint64_t lost[4], const uint64_t why[MT_DAT_LOST_CAUSES]);
/* An ALLOCATORS record, if the allocators found differ from the last one
 * written (the first time: if any were found). */
void mt_rr_allocators(uint64_t now);
/* TOTALS read now: each trace's counters once (mt_rr_trace_copy), summed. */
void mt_rr_totals(uint64_t now);
/* TOTALS from the sums f[0..7] of traces [0, count) read by the caller
 * (mt_rr_totals_add), so that they are the sums of what it wrote; the
 * process counters read now. */
void mt_rr_totals_live(uint64_t now, uint64_t *f, uint32_t count);
/* TOTALS with f[0..12], f[17], f[18] given; the process figures read now. */
void mt_rr_totals_emit(uint64_t now, uint64_t *f);
void mt_rr_state(unsigned kind, uint64_t now); /* counters now (fallback FINAL) */

/* A copy of the state, taken during a mid-run start's pause. */
typedef struct mt_rr_tcopy {
    uint64_t ac, ab, fc, fb, tc, tb, peak; /* TRACE_STATES fields of one trace */
} mt_rr_tcopy;
typedef struct mt_rr_bcopy {
    uint64_t key; /* birth_ms << MT_RR_TRACE_BITS | trace */
    uint64_t size;
} mt_rr_bcopy;
#define MT_RR_TRACE_BITS 22u /* MT_TRACE_MAX == 1 << 22 */
/* One trace's TRACE_STATES fields read now (mt_trace_read: one consistent
 * copy, alloc_count >= free_count), for a copy or for a state set read live. */
void mt_rr_trace_copy(uint32_t id, mt_rr_tcopy *o);
/* Adds one trace's fields to TOTALS' sums f[0..7]. */
void mt_rr_totals_add(uint64_t *f, const mt_rr_tcopy *t);
/* A state set of `kind` from a copy; totals (if not NULL): a TOTALS record
 * in the set (mt_rr_totals_emit's f). */
void mt_rr_state_copy(unsigned kind, uint64_t now, const mt_rr_tcopy *tr, uint32_t ntraces,
                      const mt_rr_bcopy *bl, uint64_t nblocks, uint64_t *totals);

/* A copy of the state taken in a pause (record_initial.c), lock held:
 * prepare before pausing (memory; blocks: the live blocks too, for an
 * initial state), take during the pause (copy only: no lock outside
 * memtop, no I/O), write after the pause.  sums: the copy's totals per
 * MT_LOST_* field (alloc count, alloc bytes, free count, free bytes). */
bool mt_rr_capture_prepare(bool blocks);
void mt_rr_capture_take(void);
uint64_t mt_rr_capture_skipped(void);
void mt_rr_capture_sums(uint64_t sums[4]);
void mt_rr_capture_write(unsigned kind); /* MT_DAT_STATE_INITIAL or _FINAL */
void mt_rr_capture_release(void);
void mt_rr_state_release(void); /* a session ended: the state sets' buffer unmapped */
void mt_rr_end(unsigned reason, int error, uint64_t now); /* error: errno for MT_DAT_END_ERROR */

#endif
