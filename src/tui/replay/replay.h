/* replay.h -- a recording opened for viewing: the state at any time of the
 * run, as the same mt_view the live viewer and every report use.
 *
 * Opening reads the whole recording once (streaming: memory follows the
 * live blocks and traces, never the file): it validates it, learns the
 * duration, the peak and the timeline, and keeps bounded checkpoints
 * (replay_ckpt.h) along the way.  It ends positioned at the end, so a
 * report of the end state costs nothing more.  mt_replay_seek moves the
 * cursor: forwards by replaying on, backwards from the nearest checkpoint;
 * either reads up to ~2 s of the recording past the cursor.
 *
 * Time is nanoseconds since tracking started (the recording's clock): the
 * cursor's range is [info.start_ns, info.duration_ns].  The state at t is
 * every event with a time <= t.  At the end of a finalized recording the
 * traces show its FINAL state set (the target's own counters).
 *
 * A view filled by mt_replay_seek borrows the replay's defs and mods: free
 * it with mt_replay_view_free, never mt_view_detach, and not after
 * mt_replay_close. */
#ifndef MEMTOP_REPLAY_H
#define MEMTOP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_reader.h"
#include "memtop_ipc.h"
#include "view.h"

typedef struct mt_replay mt_replay;

typedef struct mt_replay_info {
    const char *path;
    int32_t pid, ppid;
    const char *exe, *cmdline;
    uint64_t start_unix_ns; /* when tracking began (time 0) */
    uint64_t start_ns;      /* when the recording began */
    uint64_t duration_ns;   /* time of the last event: the end of the cursor's range */
    uint64_t events;        /* allocation and free events */
    uint64_t allocs, frees;
    uint64_t peak_live_bytes, peak_t_ns;  /* the highest live bytes within the recording, when */
    uint64_t dropped_events;              /* events the target could not record */
    uint64_t lost_events;                 /* the same, from LOST records read */
    uint64_t lost_why[MT_DAT_LOST_WHY_N]; /* lost_events by cause (dat_reader.h) */
    bool truncated;                       /* the file ends inside a frame */
    uint64_t dropped_bytes;               /* bytes after the last complete frame */
    bool finalized;                       /* an END record: the recording was finished */
    uint32_t end_reason, end_error;       /* MT_DAT_END_*, errno */
    bool final_state;                     /* a complete FINAL state set (used at the end) */
    uint64_t final_mismatches;            /* traces whose replay differs from FINAL */
    /* peak_t_ns is the first TOTALS that showed the peak: the target's own
     * figure, which the replayed events do not reach. */
    bool peak_t_by;
    /* The target's lifetime peak when it was higher and reached before a
     * mid-run recording began, else 0. */
    uint64_t process_peak_before;
    /* A mid-run recording without its complete initial state: blocks live
     * before it began are missing. */
    bool inexact_start;
    /* The bytes after the last complete frame are not a frame (a bad tail,
     * as a power loss leaves): ignored, like a cut one (truncated). */
    bool invalid_tail; /* after a finalized recording: junk after its end (not truncated) */
    uint64_t file_bytes;
    size_t checkpoints;
    uint64_t skipped_records; /* of unknown types */
    /* A culled recording (MT_DAT_MODE_CULLED): its threshold, the blocks
     * counted without events, the young blocks written early (buffer
     * full or address reused: exact, only a bigger file). */
    bool culled;
    uint64_t cull_ms, culled_blocks, written_early;
    /* Tick order (format version 5 on): within a clock tick each thread's
     * events are sorted, not in the order made (peaks within it unseen). */
    bool tick_order;
} mt_replay_info;

/* Open and read through path.  NULL with a one-line message in err. */
mt_replay *mt_replay_open(const char *path, mt_err *err);
void mt_replay_close(mt_replay *r);

const mt_replay_info *mt_replay_get_info(const mt_replay *r);

/* The process timeline over the whole recording (for a graph with a time
 * cursor): *n points, oldest first, at most 4096. */
const mt_shm_point *mt_replay_timeline(const mt_replay *r, size_t *n);

/* Move the cursor to t_ns (UINT64_MAX or anything >= duration_ns = the
 * end) and fill out with the state there: out->snap (totals, timeline up
 * to the cursor, one trace per definition, growth checkpoints, ages as of
 * the cursor), out->defs, out->mods, out->seg.id, have_snap = true,
 * attached = false.  out must be mt_view_init'ed or a previous seek's
 * output (its snapshot is replaced; free with mt_replay_view_free). */
mt_errc mt_replay_seek(mt_replay *r, uint64_t t_ns, mt_view *out, mt_err *err);

/* The cursor's time for --at S (seconds from the recording's start, S >= 0):
 * 0 with *t_ns, or -1 with a one-line message in msg when S is past the
 * end (the batch and the viewer both say it so). */
int mt_replay_at(const mt_replay *r, double at_s, uint64_t *t_ns, char *msg, size_t n);

/* The cursor's time after the last seek (the end right after opening). */
uint64_t mt_replay_cursor(const mt_replay *r);

/* True when the cursor is at the end of the recording. */
bool mt_replay_at_end(const mt_replay *r);

/* What the reports should call the process's state at the cursor:
 * exited at the end of a recording that ended with the process (exit or
 * exec), stale at the end of one that was cut short (no END record), else
 * running. */
mt_state mt_replay_state(const mt_replay *r);
/* Whether the cursor is inside a silence: a stretch of at least 2 s with
 * no record at all (no allocation, free or TOTALS), in which the target
 * did not run: it was stopped (replay_silence.h).  *from_ns and *to_ns:
 * the silence's ends, on the cursor's clock. */
bool mt_replay_silent(const mt_replay *r, uint64_t *from_ns, uint64_t *to_ns);
/* The segment flags a snapshot at the cursor carries: MT_FLAG_EXITED when
 * exited, with MT_FLAG_EXECED when the process exec'd (the reports then
 * say "exec'd"). */
uint32_t mt_replay_flags(const mt_replay *r);

/* Why the blocks live at the end of the recording are not leaks, or NULL
 * when they are: the file is finalized and its END says the process ended
 * the recording (exit, _exit, exec).  E.g. "the recording was stopped while
 * the process ran", "the file is not finalized". */
const char *mt_replay_not_leaked_why(const mt_replay *r);

/* The recording ended because the disk (or the user's quota) was full:
 * END(ERROR) with ENOSPC or EDQUOT. */
bool mt_replay_disk_full(const mt_replay_info *in);

/* What makes the recording's data inexact, for the viewer's data health:
 * "N events dropped " (events the target could not record) and "start
 * inexact " (a mid-run recording without its initial state), "culled <10 s:
 * live misses young blocks " (a culled recording: blocks younger than the
 * threshold at the cursor that die young are in no event), or "". */
const char *mt_replay_inexact_text(const mt_replay *r, char *buf, size_t n);
/* The recording's dropped events with their causes, "5 events dropped:
 * disk behind 3, writer stalled (wait cap) 2" (dat_reader.h's words), or
 * "" when none was dropped. */
const char *mt_replay_dropped_text(const mt_replay_info *in, char *buf, size_t n);
/* The events dropped: the larger of TOTALS'/END's count and the LOST
 * records'. */
uint64_t mt_replay_dropped(const mt_replay_info *in);
/* A culled recording's threshold as "10 s" / "0.500 s". */
const char *mt_replay_cull_secs(const mt_replay_info *in, char *buf, size_t n);

/* Free what mt_replay_seek put in out (defs and mods are the replay's own
 * and stay with it). */
void mt_replay_view_free(mt_view *out);

#endif
