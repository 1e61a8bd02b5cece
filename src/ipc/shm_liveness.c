/* shm_liveness.c -- running / exited / stale (see shm_liveness.h). */
#include "shm_liveness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_maps.h"
#include "proc_file.h"
#include "proc_stat.h"

int mt_proc_start_ticks(int pid, uint64_t *ticks, char *state)
{
    char buf[2048];
    if (mt_proc_read(pid, "stat", buf, sizeof buf) < 0)
        return -1;
    const char *st = mt_stat_field(buf, MT_STAT_STATE);
    if (!st || mt_stat_number(buf, MT_STAT_START_TICKS, ticks) != 0)
        return -1;
    if (state)
        *state = *st;
    return 0;
}

bool mt_pid_exists(int pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

mt_state mt_segment_state(const mt_segment *seg)
{
    return mt_segment_state_flags(seg, mt_segment_flags(seg));
}

mt_state mt_segment_state_flags(const mt_segment *seg, uint32_t flags)
{
    if (flags & MT_FLAG_EXITED)
        return MT_STATE_EXITED;
    uint64_t ticks;
    char st;
    int pid = seg->host_pid > 0 ? seg->host_pid : seg->id.pid;
    if (mt_proc_start_ticks(pid, &ticks, &st) == 0 && ticks == seg->id.proc_start_ticks &&
        st != 'Z' && st != 'X')
        return MT_STATE_RUNNING;
    /* The header's pid may be another namespace's: the creator is whoever
     * maps this very file and started at the recorded time. */
    if (seg->ino && mt_maps_holder(seg->dev, seg->ino, seg->id.proc_start_ticks) > 0)
        return MT_STATE_RUNNING;
    return MT_STATE_STALE;
}

bool mt_state_execd(mt_state st, uint32_t flags)
{
    return st == MT_STATE_EXITED && (flags & MT_FLAG_EXECED);
}

const char *mt_state_label(mt_state st, uint32_t flags)
{
    return mt_state_execd(st, flags) ? "exec'd" : mt_state_name(st);
}

const char *mt_state_name(mt_state st)
{
    switch (st) {
    case MT_STATE_RUNNING:
        return "running";
    case MT_STATE_EXITED:
        return "exited";
    default:
        return "stale";
    }
}
