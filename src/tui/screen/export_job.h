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

/* Where an export goes: written into tmp, then given the first free name
 * of dir/stem<ext>, -2, -3... once whole (out_file.h). */
typedef struct mt_export_dest {
    char tmp[4096], dir[4096];
    char stem[64], ext[16];
} mt_export_dest;

typedef struct mt_export_job {
    pid_t pid; /* 0: none running */
    int fd;    /* read end of the child's message pipe */
    char path[4096];
    mt_export_dest dest;
} mt_export_job;

typedef enum mt_job_state { MT_JOB_IDLE, MT_JOB_RUNNING, MT_JOB_DONE, MT_JOB_FAILED } mt_job_state;

/* A likely-free absolute file name for a recording of pid made now:
 * memtop-PID-YYYYmmdd-HHMMSS<ext> (or -2, -3, ... before <ext>) in the
 * current directory if it is writable, else in $TMPDIR or /tmp.  The
 * target creates it exclusively. */
void mt_export_default_path(int pid, const char *ext, char *buf, size_t n);

/* Creates the temporary file of an export of pid in the directory of
 * mt_export_default_path (out_file.h's mt_out_temp: random,
 * O_EXCL|O_NOFOLLOW, 0600), where it is written and then named
 * memtop-PID-YYYYmmdd-HHMMSS<ext> (or -2, -3, ...) once whole.  The
 * descriptor with d filled and the name it should take in path, or
 * -errno. */
int mt_export_create_default(int pid, const char *ext, mt_export_dest *d, char *path, size_t n);

/* How to write it: the row order, names or module+offset, and for a
 * FILE.tree.json the call tree view's direction and fold threshold. */
typedef struct mt_export_how {
    mt_sort_key sort;
    bool symbols;
    bool reverse;     /* bottom-up */
    double threshold; /* live bytes under which tree nodes fold; 0: none */
} mt_export_how;

/* Start writing v's snapshot into out, d's temporary file, to be named
 * path or the next free name once whole (rec: the recording it comes
 * from, or NULL; the format follows path's extension, mt_export_fd); out
 * and d's temporary file are taken over (closed, and removed unless the
 * export succeeds).  0, or -1 with a message. */
int mt_export_start(mt_export_job *j, const mt_view *v, mt_state st, const mt_export_rec *rec,
                    const mt_export_how *how, int out, const mt_export_dest *d, const char *path,
                    char *msg, size_t n);

/* Check on a running export; DONE (msg: the file's name) or FAILED (msg:
 * why; no file left) once, then IDLE. */
mt_job_state mt_export_poll(mt_export_job *j, char *msg, size_t n);

/* Wait for a running export to finish (at quit). */
void mt_export_finish(mt_export_job *j);

#endif
