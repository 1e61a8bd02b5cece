/* cmd_list.c -- `memtop --list` (what can be attached) and `memtop --clean`
 * (remove segments whose process is gone). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "format.h"
#include "memtop_ipc.h"

static void list_row(const char *path, int pid)
{
    mt_segment seg;
    mt_err err = {MT_OK, ""};
    mt_errc rc = mt_segment_open_path(&seg, path, &err);
    if (rc) {
        const char *st = rc == MT_E_PERM ? "denied" : rc == MT_E_NOTREADY ? "starting" : "invalid";
        printf("%8d  %-8s %10s %8s  (%s)\n", pid, st, "-", "-", err.msg);
        return;
    }
    mt_snapshot snap;
    char live[32] = "-", up[32] = "-", cmd[MT_CMDLINE_MAX];
    if (mt_snapshot_read(&seg, MT_SNAP_TOTALS_ONLY, &snap, NULL) == MT_OK) {
        mt_fmt_bytes(snap.slot.totals.live_bytes, live, sizeof live);
        mt_fmt_duration(snap.slot.t_ns / 1000000000ull, up, sizeof up);
    }
    snprintf(cmd, sizeof cmd, "%s", seg.id.cmdline[0] ? seg.id.cmdline : seg.id.exe);
    printf("%8d  %-8s %10s %8s  %s\n", pid, mt_state_name(mt_segment_state(&seg)), live, up,
           mt_fmt_sanitize(cmd));
    mt_segment_close(&seg);
}

/* Why the segment at path may be removed, or NULL to keep it. */
static const char *clean_reason(const char *path, int pid, const struct stat *st)
{
    if (st->st_uid != geteuid())
        return NULL;
    mt_segment seg;
    mt_errc rc = mt_segment_open_path(&seg, path, NULL);
    if (rc)
        return rc != MT_E_NOENT && rc != MT_E_PERM && !mt_pid_exists(pid) ? "invalid, no process"
                                                                          : NULL;
    mt_state state = mt_segment_state(&seg);
    bool owner_gone = !mt_pid_exists(seg.id.pid) && !mt_pid_exists(seg.id.ppid);
    mt_segment_close(&seg);
    if (state == MT_STATE_STALE)
        return "stale";
    return state == MT_STATE_EXITED && owner_gone ? "exited, not collected" : NULL;
}

static int clean_one(const char *path, int pid, int *removed)
{
    struct stat before, now;
    if (lstat(path, &before) != 0)
        return 0;
    const char *why = clean_reason(path, pid, &before);
    if (!why || lstat(path, &now) != 0 || now.st_ino != before.st_ino)
        return 0;
    if (unlink(path) != 0) {
        mt_errorf("cannot remove %s: %s", path, strerror(errno));
        return -1;
    }
    printf("removed %s (%s)\n", path, why);
    (*removed)++;
    return 0;
}

static int for_each(const char *dir, const mt_pid_list *l, bool clean)
{
    int rc = MT_EXIT_OK, removed = 0;
    char path[4096];
    if (!clean && l->count)
        printf("%8s  %-8s %10s %8s  %s\n", "PID", "STATE", "LIVE", "UPTIME", "COMMAND");
    for (size_t i = 0; i < l->count; i++) {
        if (mt_shm_path(dir, l->pids[i], path, sizeof path) != 0)
            continue;
        if (!clean)
            list_row(path, l->pids[i]);
        else if (clean_one(path, l->pids[i], &removed) != 0)
            rc = MT_EXIT_FAIL;
    }
    if (clean && !removed)
        printf("no stale segments in %s\n", dir);
    if (!clean && !l->count)
        printf("no processes running with libmemtop.so (no segments in %s)\n", dir);
    return rc;
}

int mt_cmd_list(const mt_opts *o)
{
    const char *dir = mt_shm_dir();
    int rc = MT_EXIT_OK;
    for (int pass = 0; pass < 2; pass++) {
        bool clean = pass == 0;
        if (clean ? !o->clean : !o->list)
            continue;
        mt_pid_list l;
        mt_err err;
        mt_errc e = mt_shm_list(dir, &l, &err);
        if (e && e != MT_E_NOENT) {
            mt_errorf("%s", err.msg);
            return MT_EXIT_FAIL;
        }
        if (for_each(dir, &l, clean) != MT_EXIT_OK)
            rc = MT_EXIT_FAIL;
        mt_pid_list_free(&l);
    }
    return rc;
}
