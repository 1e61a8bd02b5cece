/* export_job.h -- `e` in the viewer: write the snapshot on screen to a file
 * without freezing the screen.  Symbolizing every trace of a large process
 * can take seconds, so the export runs in a forked child with a symbolizer
 * of its own (the viewer's copy of the data is the child's, copy-on-write);
 * the viewer polls for the result. */
#ifndef MEMTOP_EXPORT_JOB_H
#define MEMTOP_EXPORT_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli_options.h"
#include "export.h"
#include "view.h"

typedef struct mt_export_job {
    pid_t pid; /* 0: none running */
    int fd;    /* read end of the child's message pipe */
    char path[4096];
} mt_export_job;

typedef enum mt_job_state { MT_JOB_IDLE, MT_JOB_RUNNING, MT_JOB_DONE, MT_JOB_FAILED } mt_job_state;

/* A likely-free absolute file name for a recording of pid made now:
 * memtop-PID-YYYYmmdd-HHMMSS<ext> (or -2, -3, ... before <ext>) in the
 * current directory if it is writable, else in $TMPDIR or /tmp.  The
 * target creates it exclusively. */
void mt_export_default_path(int pid, const char *ext, char *buf, size_t n);

/* Creates a new file with such a name for an export, exclusively
 * (O_EXCL|O_NOFOLLOW, 0600: the next name if one is taken, nothing
 * followed).  The descriptor, with the name in buf, or -errno. */
int mt_export_create_default(int pid, const char *ext, char *buf, size_t n);

/* How to write it: the row order, names or module+offset, and for a
 * FILE.tree.json the call tree view's direction and fold threshold. */
typedef struct mt_export_how {
    mt_sort_key sort;
    bool symbols;
    bool reverse;     /* bottom-up */
    double threshold; /* live bytes under which tree nodes fold; 0: none */
} mt_export_how;

/* Start writing v's snapshot into out, a new file named path (rec: the
 * recording it comes from, or NULL; the format follows path's extension,
 * mt_export_fd); out is taken over (closed here).  0, or -1 with a
 * message. */
int mt_export_start(mt_export_job *j, const mt_view *v, mt_state st, const mt_export_rec *rec,
                    const mt_export_how *how, int out, const char *path, char *msg, size_t n);

/* Check on a running export; DONE or FAILED once (msg filled), then IDLE. */
mt_job_state mt_export_poll(mt_export_job *j, char *msg, size_t n);

/* Wait for a running export to finish (at quit). */
void mt_export_finish(mt_export_job *j);

#endif
