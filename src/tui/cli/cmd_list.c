/* cmd_list.c -- `memtop --list` (what can be attached), after `--clean`
 * (cmd_clean.c) when both are given. */
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "memtop_ipc.h"
#include "proc_list.h"

/* The REC column: "-", or the running recording's bytes so far, with a
 * '*' when a viewer holds it (the note under the table says what). */
static const char *rec_cell(const mt_proc_entry *e, char *buf, size_t n)
{
    char size[32];
    if (!e->ok || !e->recording)
        return "-";
    snprintf(buf, n, "%s%s", mt_fmt_bytes(e->rec_bytes, size, sizeof size), e->rec_held ? "*" : "");
    return buf;
}

static void list_row(const mt_proc_entry *e)
{
    char live[32] = "-", up[32] = "-", rec[40];
    if (!e->ok) {
        printf("%8d  %-8s %10s %8s %11s  (%s)\n", e->pid, e->shown, "-", "-", "-", e->why);
        return;
    }
    if (e->have_totals) {
        mt_fmt_bytes(e->live_bytes, live, sizeof live);
        mt_fmt_duration(e->uptime_s, up, sizeof up);
    }
    printf("%8d  %-8s %10s %8s %11s  %s\n", e->pid, e->shown, live, up,
           rec_cell(e, rec, sizeof rec), e->cmd);
}

static int list(const char *dir)
{
    mt_proc_list l;
    mt_err err;
    mt_errc e = mt_proc_list_read(dir, &l, &err);
    if (e && e != MT_E_NOENT) {
        mt_errorf("%s", err.msg);
        return MT_EXIT_FAIL;
    }
    if (l.count)
        printf("%8s  %-8s %10s %8s %11s  %s\n", "PID", "STATE", "LIVE", "UPTIME", "REC", "COMMAND");
    else
        printf("no processes running with libmemtop.so (no segments in %s)\n", dir);
    bool recording = false;
    for (size_t i = 0; i < l.count; i++) {
        list_row(&l.items[i]);
        recording |= l.items[i].ok && l.items[i].recording;
    }
    if (recording)
        printf("REC: a recording runs (bytes so far); *: a viewer holds it, it stops when that "
               "viewer is gone; else it runs until stopped (MEMTOP_RECORD, or an older memtop or "
               "libmemtop.so)\n");
    mt_proc_list_free(&l);
    return MT_EXIT_OK;
}

int mt_cmd_list(const mt_opts *o)
{
    const char *dir = mt_shm_dir();
    int rc = o->clean ? mt_cmd_clean(o) : MT_EXIT_OK;
    if (o->list && list(dir) != MT_EXIT_OK)
        rc = MT_EXIT_FAIL;
    return rc;
}
