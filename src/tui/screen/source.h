/* source.h -- where the viewer's data comes from: a running process found
 * by pid, or PROG started by memtop itself.  It keeps the mt_view fresh,
 * notices when the target exits (keeping its final state: what is live at
 * exit is what leaked), and in launch mode owns PROG: its output file, its
 * exit status, and ending it when the user quits. */
#ifndef MEMTOP_SOURCE_H
#define MEMTOP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "launch.h"
#include "replay.h"
#include "view.h"

typedef enum mt_src_phase {
    MT_SRC_WAITING, /* launch mode: PROG has no segment yet */
    MT_SRC_LIVE,    /* attached to a running target */
    MT_SRC_EXITED,  /* the final snapshot is on screen */
    MT_SRC_GONE,    /* the target ended without a final snapshot */
    MT_SRC_REPLAY,  /* a recording, at the cursor */
} mt_src_phase;

typedef struct mt_source {
    mt_view view;
    int pid;
    mt_src_phase phase;
    bool launched;
    mt_child child;
    char out_path[4096]; /* launch mode: PROG's stdout and stderr */
    char error[4700];    /* the last hard error, for the status line */
    char note[4700];     /* mt_source_close: PROG's recording may not be finalized */
    int failures;        /* consecutive failed refreshes */
    uint64_t version;    /* increases with every new state in view */
    uint64_t image;      /* increases when the target's segment is a new one (exec) */
    mt_replay *replay;   /* -f: the recording; view holds the state at its cursor */
    mt_rec_lease lease;  /* the recording `r` started, held and renewed (shm_lease.h) */
} mt_source;

void mt_source_init(mt_source *s);

/* Attach to a running process: 0, or -1 with a one-line message. */
int mt_source_attach(mt_source *s, int pid, char *msg, size_t n);

/* Start argv with libmemtop.so (lib) preloaded, its output in out_path
 * ("%p" = its pid; NULL = $TMPDIR/memtop-%p.out, created exclusively).
 * 0; -1 (memtop's error) or -2 (PROG could not be run), with a message. */
int mt_source_launch(mt_source *s, char **argv, const char *lib, const char *out_path, char *msg,
                     size_t n);

/* Open a recording and put its end state in view: 0, or -1 with a message. */
int mt_source_open_replay(mt_source *s, const char *path, char *msg, size_t n);

/* Move a recording's cursor to t_ns (UINT64_MAX: the end): true if the
 * state changed; false with a message if the seek failed. */
bool mt_source_seek(mt_source *s, uint64_t t_ns, char *msg, size_t n);

/* Take the newest snapshot if the target published one.  True when the
 * data on screen changed (a new snapshot, or the target's end). */
bool mt_source_poll(mt_source *s);

/* The target's published snapshot count: cheap, for "is there news?". */
bool mt_source_ready(const mt_source *s);

/* Detach; in launch mode end PROG if it still runs (its recording stopped
 * first, rec_stop.h: if that failed, note says so; then SIGTERM, SIGKILL after
 * grace_s), remove its segment, and return its exit status as memtop's;
 * -1 when memtop chose the status (PROG was ended by quitting, or there
 * was no PROG). */
int mt_source_close(mt_source *s, double grace_s);

#endif
