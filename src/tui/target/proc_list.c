/* proc_list.c -- attachable processes (see proc_list.h). */
#include "proc_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static void read_entry(const char *dir, int pid, mt_proc_entry *e)
{
    memset(e, 0, sizeof *e);
    e->pid = pid;
    mt_segment seg;
    mt_err err = {MT_OK, ""};
    mt_errc rc = mt_segment_open_pid(&seg, dir, pid, &err);
    if (rc) {
        e->state = rc == MT_E_PERM        ? "denied"
                   : rc == MT_E_NOTREADY  ? "starting"
                   : rc == MT_E_UNTRUSTED ? "foreign"
                                          : "invalid";
        snprintf(e->why, sizeof e->why, "%s", err.msg);
        return;
    }
    e->ok = true;
    e->state = mt_state_label(mt_segment_state(&seg), mt_segment_flags(&seg));
    mt_snapshot snap;
    if (mt_snapshot_read(&seg, MT_SNAP_TOTALS_ONLY, &snap, NULL) == MT_OK) {
        e->have_totals = true;
        e->live_bytes = snap.slot.totals.live_bytes;
        e->uptime_s = snap.slot.t_ns / 1000000000ull;
    }
    snprintf(e->cmd, sizeof e->cmd, "%s", seg.id.cmdline[0] ? seg.id.cmdline : seg.id.exe);
    mt_fmt_sanitize(e->cmd);
    mt_segment_close(&seg);
}

mt_errc mt_proc_list_read(const char *dir, mt_proc_list *out, mt_err *err)
{
    memset(out, 0, sizeof *out);
    mt_pid_list pids;
    mt_errc rc = mt_shm_list(dir, &pids, err);
    if (rc)
        return rc;
    if (pids.count && !(out->items = calloc(pids.count, sizeof *out->items))) {
        mt_pid_list_free(&pids);
        return mt_err_set(err, MT_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < pids.count; i++)
        read_entry(dir, pids.pids[i], &out->items[out->count++]);
    mt_pid_list_free(&pids);
    return MT_OK;
}

void mt_proc_list_free(mt_proc_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
