/* export.h -- writing one snapshot to a file, in the format named by the
 * file's extension: .json, .csv, .folded (collapsed stacks), .tree.json (the
 * call tree, export_tree.c), .pb.gz or .pprof (pprof), anything else text.
 * Every trace is written, unless --top bounds the rows: then the top ones,
 * and the others summed into one "(other)" row (mt_rows_cut_at). */
#ifndef MEMTOP_EXPORT_H
#define MEMTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_options.h"
#include "dat_reader.h"
#include "location.h"
#include "view.h"

/* Where a snapshot of a recording comes from, for the exports to say (the
 * JSON "recording" object, the text export's "recording:" and "warning:"
 * lines; CSV and .folded have no room for it). */
typedef struct mt_export_rec {
    const char *file;
    uint64_t cursor_ns;       /* the snapshot's moment, since the recording began */
    uint64_t duration_ns;     /* the recording's length */
    bool finalized;           /* it has its END record */
    const char *end_reason;   /* "stopped", "exited", "exec", "disk_full", "write_error",
                               * "lease_expired",
                               * "unknown"; NULL when not finalized */
    bool truncated;           /* the file was cut: its end is its last complete frame */
    bool invalid_tail;        /* bytes after the last complete frame are not a frame */
    uint64_t truncated_bytes; /* bytes after the last complete frame, ignored */
    uint64_t events_dropped;  /* events the target could not record */
    /* the same by cause (dat_reader.h MT_DAT_LOST_*, OTHER, NOT_SAID) */
    uint64_t dropped_why[MT_DAT_LOST_WHY_N];
    bool inexact_start; /* a mid-run recording without its initial state */
    uint64_t cull_ms;   /* a culled recording's threshold, else 0 */
    bool tick_order;    /* within a clock tick, a thread's events are sorted */
    /* The cursor is inside a silence (replay_silence.h): no record at all
     * from silent_from_ns to silent_to_ns (since the recording began), the
     * process did not run: it was stopped. */
    bool silent;
    uint64_t silent_from_ns, silent_to_ns;
} mt_export_rec;

/* What a silence means, for people (--batch, the text export). */
#define MT_SILENT_NOTE                                                                             \
    "no allocation, free or TOTALS record (written every second while it runs): the process "      \
    "did not run; rates across it are averages over the stop"

/* What tick order means, for people (the text export, --batch). */
#define MT_TICK_ORDER_NOTE                                                                         \
    "order: within a clock tick (1-10 ms) each thread's events are sorted, not in the order "      \
    "made (totals exact; a peak inside a tick is not seen)"

/* A culled recording's live blocks are inexact at this snapshot: before
 * its end, or at the end of a file that was not finalized (young blocks
 * not written).  Its totals are exact. */
static inline bool mt_export_rec_culled_inexact(const mt_export_rec *r)
{
    return r->cull_ms && !(r->finalized && r->cursor_ns >= r->duration_ns);
}

/* The word for the process in a snapshot's headline for people (--batch,
 * the text export, the pprof comment; JSON keeps the state's label, a
 * value programs compare, beside recording.finalized): a recording's
 * moment inside a silence is
 * "stopped"; the end of a recording that was not finalized is "not
 * finalized" (the process was killed, or is still recording: "stale" read
 * as a process gone, or a viewer's data out of date); else the state's
 * label (running, exited, exec'd, stale). */
static inline const char *mt_export_state_word(mt_state st, uint32_t flags,
                                               const mt_export_rec *rec)
{
    if (rec && rec->silent)
        return "stopped";
    if (rec && st == MT_STATE_STALE)
        return "not finalized";
    return mt_state_label(st, flags);
}

typedef struct mt_export_src {
    const mt_view *v; /* with a snapshot */
    mt_state state;
    const mt_locator *loc;
    mt_sort_key sort;         /* row order of the csv and text formats */
    const mt_export_rec *rec; /* a recording's snapshot, or NULL (a live target) */
    long top;         /* rows written at most (--top), the rest as one "(other)" row; 0: all */
    bool reverse;     /* FILE.tree.json: bottom-up (--reverse) */
    double threshold; /* FILE.tree.json: live bytes under which nodes fold (--threshold) */
} mt_export_src;

/* Whether path names standard output: "-" (text), or "-" and a format's
 * extension ("-.json", "-.pb.gz"...); ./-.json is a file. */
bool mt_export_stdout(const char *path);

/* Writes to a file the user named (created 0600, or replacing an existing
 * regular file of the user's: out_file.h's mt_out_open_whole), whole or
 * not at all (a failed export leaves no file, and an older one as it
 * was; but an older file of the user's in a directory that refuses a
 * temporary file is written in place, not atomically), or to standard
 * output (mt_export_stdout).  0, or -1 with a one-line message in err. */
int mt_export_file(const char *path, const mt_export_src *src, char *err, size_t n);
/* The same into fd, a new empty file (taken over: closed); path gives the
 * format and the messages. */
int mt_export_fd(int fd, const char *path, const mt_export_src *src, char *err, size_t n);

void mt_export_json(FILE *f, const mt_export_src *src);
void mt_export_csv(FILE *f, const mt_export_src *src);
void mt_export_text(FILE *f, const mt_export_src *src);
void mt_export_folded(FILE *f, const mt_export_src *src); /* export_folded.c */
/* export_tree.c: the call tree as JSON, and as text (`--batch --tree`, after
 * the header; sorted by src->sort).  Out of memory: says so in the output. */
void mt_export_tree_json(FILE *f, const mt_export_src *src);
void mt_export_tree_text(FILE *f, const mt_export_src *src);
/* .pb.gz, .pprof: gzip'd pprof profile.proto; 0, or -1 with errno */
int mt_export_pprof(FILE *f, const mt_export_src *src); /* export_pprof.c */

#endif
