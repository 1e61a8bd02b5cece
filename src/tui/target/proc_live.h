/* proc_live.h -- what /proc says about a target now.  The segment header
 * keeps the command line and the clock of the moment tracking started: a
 * forked child (a postgres backend) has its parent's argv and tracking
 * time there, and a process that rewrites its argv (setproctitle) shows
 * the old one.  While the process that made the segment runs, the viewer,
 * --list and the reports show these instead; the header's values remain
 * the fallback for processes that are gone, and the header's command line
 * stays for a segment marked exec'd (/proc names the program after it). */
#ifndef MEMTOP_PROC_LIVE_H
#define MEMTOP_PROC_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtop_ipc.h"

typedef struct mt_proc_live {
    bool valid;                   /* seg's creator runs: the fields below are its own */
    char cmdline[MT_CMDLINE_MAX]; /* arguments joined by spaces; "" if empty */
    uint64_t uptime_s;            /* since the process started */
    uint64_t uptime_ns;           /* the same in ns (to the clock tick of its start) */
    char state;                   /* /proc/PID/stat's state letter: 'T' stopped, 't' traced... */
} mt_proc_live;

/* Fill live for the process seg stands for (mt_segment_pid), if it is the
 * one that created seg (same start time); else live->valid is false. */
void mt_proc_live_read(const mt_segment *seg, mt_proc_live *live);

#endif
