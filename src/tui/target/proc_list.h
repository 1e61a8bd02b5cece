/* proc_list.h -- the processes memtop can attach to: every segment in the
 * segment directory, with its state, live heap, uptime and command.  Used
 * by `memtop --list` and by the viewer's process picker. */
#ifndef MEMTOP_PROC_LIST_H
#define MEMTOP_PROC_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memtop_ipc.h"

typedef struct mt_proc_entry {
    int pid;
    bool ok;           /* the segment opened; else `why` says what is wrong */
    const char *state; /* "running", "exited", "stale", "denied", "starting", "invalid",
                        * "foreign" (owner is not the process's user), "unknown"
                        * (another user's, which we may not read, of no process
                        * here: ended, or in another PID namespace) */
    const char *shown; /* what --list and the picker show: state, or for a running
                        * process that a signal or a debugger stopped (/proc/PID/stat
                        * T or t) "stopped" or "traced" */
    bool have_totals;  /* live_bytes and uptime_s are known */
    uint64_t live_bytes;
    uint64_t uptime_s;
    char cmd[MT_CMDLINE_MAX]; /* sanitized: no control characters; "[pid N in
                               * pid:[INODE]] " first for a process in another
                               * PID namespace, else "[fork of PPID] " for a
                               * forked child that has not exec'd */
    /* A recording running in the target (ok only): its bytes so far, and
     * whether a viewer holds it (a lease: it stops when that viewer is
     * gone) or not (MEMTOP_RECORD, an older viewer: it runs until stopped). */
    bool recording;
    bool rec_held;
    uint64_t rec_bytes;
    dev_t dev; /* the segment file (ok only), to list it once */
    ino_t ino;
    char why[256];
    mt_errc rc; /* not ok: why in a word (MT_E_FULL: it cannot create or grow
                 * its segment); MT_OK when ok */
} mt_proc_entry;

typedef struct mt_proc_list {
    mt_proc_entry *items;
    size_t count;
} mt_proc_list;

/* Read every pid's segment of dir (mt_segment_open_pid: one entry per pid,
 * the file that may stand for it), then of every process whose maps show a
 * segment of its own that is not listed yet, in a directory of dir's name
 * in its own mount namespace (containers: mt_maps_segment; all of them as
 * root, else the caller's own), each under its pid as we see it,
 * ascending.  MT_E_NOENT when dir does not exist and no process
 * maps a segment. */
mt_errc mt_proc_list_read(const char *dir, mt_proc_list *out, mt_err *err);
void mt_proc_list_free(mt_proc_list *l);

#endif
