/* proc_live.c -- a target's own command line and uptime, now (see
 * proc_live.h). */
#include "proc_live.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t read_small(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got >= 0)
        buf[got] = '\0';
    return got;
}

static void read_cmdline(int pid, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    ssize_t got = read_small(path, buf, n);
    if (got <= 0) {
        buf[0] = '\0';
        return;
    }
    while (got > 0 && buf[got - 1] == '\0')
        got--; /* trailing NULs (setproctitle pads with them) */
    for (ssize_t i = 0; i < got; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[got] = '\0';
}

/* Seconds since boot (/proc/uptime), or -1. */
static double boot_uptime(void)
{
    char buf[64];
    return read_small("/proc/uptime", buf, sizeof buf) > 0 ? strtod(buf, NULL) : -1.0;
}

void mt_proc_live_read(const mt_segment *seg, mt_proc_live *live)
{
    memset(live, 0, sizeof *live);
    int pid = mt_segment_pid(seg);
    uint64_t ticks;
    char st;
    long hz = sysconf(_SC_CLK_TCK);
    if (mt_proc_start_ticks(pid, &ticks, &st) != 0 || ticks != seg->id.proc_start_ticks ||
        st == 'Z' || st == 'X' || hz <= 0)
        return;
    double up = boot_uptime() - (double)ticks / (double)hz;
    read_cmdline(pid, live->cmdline, sizeof live->cmdline);
    /* After an exec /proc names the new program, while an exec'd segment
     * holds the old one's state: keep the segment's own name.  Read after
     * the command line: the old image marks the segment before it execs,
     * so a new command line implies the mark is visible here. */
    if (mt_segment_flags(seg) & MT_FLAG_EXECED)
        live->cmdline[0] = '\0';
    live->uptime_s = up > 0 ? (uint64_t)up : 0;
    live->uptime_ns = up > 0 ? (uint64_t)(up * 1e9) : 0;
    live->state = st;
    live->valid = true;
}
