/* view.h -- memtop's private copy of one target: the mapped segment, the
 * latest and previous snapshots, the trace definitions and the module map,
 * refreshed together so they always agree with each other. */
#ifndef MEMTOP_VIEW_H
#define MEMTOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "memtop_ipc.h"
#include "proc_live.h"

/* The process's rates over the last window_s seconds: from the newest
 * point the viewer holds (its previous snapshot or a point of the
 * segment's timeline) at least MT_RATE_WINDOW_MS and one publish interval
 * older than the snapshot, less a tenth of an interval for the
 * publisher's jitter.  A snapshot published on demand (an export's) comes
 * milliseconds after the one before: two such points make a burst or 0,
 * not a rate.  Without such a point (a target younger than the window),
 * over the target's whole life (whole_life), and each output says which. */
#define MT_RATE_WINDOW_MS 1000u
typedef struct mt_rates {
    bool valid;
    bool whole_life; /* window_s is the target's whole life */
    double window_s;
    /* A replay: how much of window_s the target did not run (stopped,
     * replay_silence.h): the rates are averages over that too. */
    double stopped_s;
    double allocs_per_s, alloc_bytes_per_s, frees_per_s;
} mt_rates;

typedef struct mt_view {
    char path[4096]; /* the segment file, kept across re-attaching */
    const char *dir; /* with pid > 0: the target, found again at re-attaching */
    int pid;
    mt_segment seg;
    bool attached;
    mt_defs defs;
    mt_modules mods;
    mt_snapshot snap, prev;
    bool have_snap, have_prev;
    mt_rates rates;
    /* The allocators the target found (seq 0: not known), read with each
     * snapshot; a busy read keeps the previous copy. */
    mt_shm_allocators allocs;
    mt_proc_live live; /* the running target's own argv and uptime, read
                        * with each snapshot */
    /* Sampled only: totals.alloc_count, alloc_bytes and free_count are
     * estimates too (a sampled recording at a cursor where the file holds
     * no exact counts: replay_snap.c).  Ask mt_view_totals_exact. */
    bool counts_estimated;
    /* The memory the segment holds (mt_segment_held_bytes), read with each
     * snapshot: memtop's cost in the target beside totals.tracker_bytes.
     * MT_UNKNOWN for a recording (not stored) or before a snapshot. */
    uint64_t segment_bytes;
    /* When the process began on the snapshot's clock (slot.t_ns, which
     * counts from when tracking began): 0, but a fork child's clock is its
     * parent's, so a fork child's recording sets its own start here (the
     * recording's, replay_snap.c).  mt_view_uptime_* count from it. */
    uint64_t start_ns;
} mt_view;

void mt_view_init(mt_view *v);

/* Whether the figures are exact (0) or estimates from a sampled target or
 * recording (the mean bytes between samples, MEMTOP_SAMPLE).  The one
 * place every report, export and screen asks. */
static inline uint64_t mt_view_sample_rate(const mt_view *v)
{
    return v->seg.id.sample_rate_bytes;
}

/* Whether the process totals of allocations and frees (totals.alloc_count,
 * alloc_bytes, free_count) are exact: always in exact mode and for a live
 * sampled target (counted on its fast path); in a sampled recording where
 * the file holds them (at the end of a complete FINAL state set), not
 * elsewhere.  The one place every report, export and screen asks whether
 * to mark them "~" (docs/sampling.md). */
static inline bool mt_view_totals_exact(const mt_view *v)
{
    return !mt_view_sample_rate(v) || !v->counts_estimated;
}

/* How many whole seconds old the snapshot's allocator figures are, when
 * at least MT_VIEW_ALLOCATOR_STALE_S (glibc's are taken at a pace:
 * docs/shm-protocol.md, "The allocator's figures, at a pace"), else 0.  The one place every report,
 * export and screen asks whether to say so. */
#define MT_VIEW_ALLOCATOR_STALE_S 2u
static inline uint64_t mt_view_allocator_age_s(const mt_view *v)
{
    uint64_t ns = mt_snapshot_allocator_age_ns(&v->snap), s = ns / 1000000000u;
    return v->have_snap && ns != MT_UNKNOWN && s >= MT_VIEW_ALLOCATOR_STALE_S ? s : 0;
}

/* A running target that publishes nothing new: stopped (SIGSTOP, state
 * T), held by a debugger (t), or hung (a deadlock inside malloc stops its
 * publishing thread too).  Its snapshot stays readable and looks like any
 * other, so every output asks here and says how old it is instead of
 * showing its rates as current.  Stale when the target's last publish
 * (the header's heartbeat) is MT_VIEW_STALE_INTERVALS publish intervals
 * old (MEMTOP_INTERVAL_MS) and at least MT_VIEW_STALE_MIN_MS: a busy
 * target may be late by an interval, never by three.  Only a live
 * target's: an exited or gone process and a recording have their own
 * states.  The one definition every screen, report, export and the
 * exporter use; the outputs call it "not publishing" ("stale" is the
 * state of a process gone without its final snapshot). */
#define MT_VIEW_STALE_INTERVALS 3u
#define MT_VIEW_STALE_MIN_MS 3000u

/* How long v's target may publish nothing before it counts as stale. */
uint64_t mt_view_stale_after_ns(const mt_view *v);

typedef struct mt_staleness {
    bool stale;         /* running, yet nothing published for the threshold */
    uint64_t silent_ns; /* since the target's last publish (0: not known) */
    uint64_t age_ns;    /* of the snapshot held, by the wall clock */
    char proc_state;    /* /proc/PID/stat's state at the last refresh; 0: not known */
    /* Why the rates and growth are not the present ones, as "until it ..."
     * goes on: "exited", "died" (gone without its final snapshot),
     * "stopped" (stale: stopped, traced or hung); NULL while it runs and
     * publishes.  A dead process allocates nothing: its rates are none; a
     * stopped one's unknown; the growth of either is its last window's. */
    const char *ended;
} mt_staleness;

/* The staleness of v's snapshot now (all zero without one). */
mt_staleness mt_view_staleness(const mt_view *v);

/* Why a stale target publishes nothing, as far as /proc says:
 * "stopped (state T)", "traced (state t)", else "not publishing"; why an
 * ended one does not: "exited", "gone without a final snapshot". */
const char *mt_staleness_why(const mt_staleness *s);

/* The same as the viewer's state: "STOPPED (T)", "TRACED (t)", else
 * "NOT PUBLISHING". */
const char *mt_staleness_label(const mt_staleness *s);

/* "snapshot #199 is 12 s old, none published since: process stopped
 * (state T)": what --batch, the text export and messages say. */
void mt_staleness_text(const mt_view *v, const mt_staleness *s, char *buf, size_t n);

/* Open the segment at path (validated).  For a file the caller made or
 * chose; a target found by pid goes through mt_view_attach_pid. */
mt_errc mt_view_attach(mt_view *v, const char *path, mt_err *err);

/* Set the target to pid's segment in dir (dir must outlive v) without
 * attaching: the next refresh attaches (launch mode). */
void mt_view_target(mt_view *v, const char *dir, int pid);

/* Attach to pid's segment in dir (dir must outlive v): the file
 * mt_shm_locate finds, refused (MT_E_UNTRUSTED) unless its owner is the
 * process's user or root and its header names pid (mt_segment_check_owner).
 * Re-attaching after an exec finds the file again the same way. */
mt_errc mt_view_attach_pid(mt_view *v, const char *dir, int pid, mt_err *err);

/* Read the newest snapshot and what it refers to.  Re-attaches when the
 * segment was replaced (the target exec'd) or an earlier attach failed;
 * MT_E_NOENT / MT_E_NOTREADY / MT_E_EMPTY / MT_E_BUSY are transient. */
mt_errc mt_view_refresh(mt_view *v, mt_err *err);

/* Read what /proc says of the target now (v->live: its command line,
 * uptime and state) without a new snapshot: a target that publishes
 * nothing (stopped, hung) is still shown as it is. */
void mt_view_refresh_live(mt_view *v);

/* Unmaps and frees everything but the target (path, dir, pid). */
void mt_view_detach(mt_view *v);

/* True for the errors of a segment that is being (re)created or written. */
bool mt_view_transient(mt_errc rc);

mt_state mt_view_state(const mt_view *v);

/* The command line to show: the running target's own (/proc), else the
 * header's, else its executable. */
const char *mt_view_cmdline(const mt_view *v);

/* Seconds the target has run: its own (/proc) while it runs, else the
 * snapshot's time since tracking started. */
uint64_t mt_view_uptime_s(const mt_view *v);
/* The same in nanoseconds: /proc's, to the clock tick, else the snapshot's
 * exact time since tracking started. */
uint64_t mt_view_uptime_ns(const mt_view *v);

#endif
