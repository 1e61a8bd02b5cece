/* proc_list.c -- attachable processes (see proc_list.h). */
#include "proc_list.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "proc_live.h"
#include "shm_lock.h"

/* Whether a recording runs in the target, how big, and whether a viewer
 * holds it (shm_recording.h); a status not known now reads as none. */
static void read_recording(const mt_segment *seg, mt_proc_entry *e)
{
    mt_shm_recording r;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info li;
    mt_err err;
    if (mt_segment_recording_lease(seg, &r, why, &li, &err) != MT_OK || r.state != MT_REC_STATE_ON)
        return;
    e->recording = true;
    e->rec_held = li.ms != 0;
    e->rec_bytes = r.bytes_written;
}

/* Whether a running process holds seg's file lock (shm_lock.h): the
 * segment of a process this viewer cannot see, in another PID namespace
 * sharing the directory (a pod's /dev/shm), judged stale by pid alone.
 * The exclusive try lets go at once when it is granted (a leftover). */
static bool held_by_a_process(const mt_segment *seg)
{
    bool busy;
    int fd = mt_shm_lock_leftover(AT_FDCWD, seg->path, &busy);
    if (fd >= 0)
        close(fd);
    return busy;
}

/* A segment we may not read (MT_E_PERM), another user's (its owner, or
 * root), of no process of its pid here: the file of one that ended (a
 * crash, kill -9: its owner or root removes it), or of one in another PID
 * namespace sharing the directory, whose liveness only the file's lock
 * would tell (held_by_a_process), which we cannot open.  Say both, not
 * "denied" to something that may be gone.  A running one stays denied,
 * its message naming the user to run as. */
static void perm_entry(const mt_segment *seg, int pid, mt_proc_entry *e)
{
    uid_t ruid, euid;
    if (seg->owner == geteuid() || mt_proc_uids(pid, &ruid, &euid) == 0)
        return;
    e->state = e->shown = "unknown";
    snprintf(e->why, sizeof e->why,
             "another user's (uid %u) segment, and no process %d here: left by one that ended "
             "(uid %u or root removes it: memtop --clean), or one in another PID namespace",
             (unsigned)seg->owner, pid, (unsigned)seg->owner);
}

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
        e->shown = e->state;
        e->rc = rc;
        snprintf(e->why, sizeof e->why, "%s", err.msg);
        if (rc == MT_E_PERM)
            perm_entry(&seg, pid, e);
        return;
    }
    e->ok = true;
    uint32_t flags = mt_segment_flags(&seg); /* one read: state and label agree */
    e->state = mt_state_label(mt_segment_state_flags(&seg, flags), flags);
    if (mt_segment_grow_error(&seg, e->why, sizeof e->why)) {
        e->ok = false; /* shown with its reason: a full /dev/shm */
        e->rc = MT_E_FULL;
    }
    mt_proc_live live;
    mt_proc_live_read(&seg, &live);
    bool halted = live.valid && strcmp(e->state, "running") == 0 &&
                  (live.state == 'T' || live.state == 't'); /* the viewer's STOPPED (T) */
    e->shown = !halted ? e->state : live.state == 'T' ? "stopped" : "traced";
    bool unseen = strcmp(e->state, "stale") == 0 && held_by_a_process(&seg);
    if (unseen) /* a pod neighbour: its pid is another PID namespace's */
        e->shown = "running";
    mt_snapshot snap;
    if (mt_snapshot_read(&seg, MT_SNAP_TOTALS_ONLY, &snap, NULL) == MT_OK) {
        e->have_totals = true;
        e->live_bytes = snap.slot.totals.live_bytes;
        e->uptime_s = live.valid ? live.uptime_s : snap.slot.t_ns / 1000000000ull;
    }
    read_recording(&seg, e);
    e->dev = seg.dev;
    e->ino = seg.ino;
    const char *cmd = live.valid && live.cmdline[0] ? live.cmdline
                      : seg.id.cmdline[0]           ? seg.id.cmdline
                                                    : seg.id.exe;
    uint64_t ns = mt_proc_pidns(pid);
    if (unseen)
        snprintf(e->cmd, sizeof e->cmd, "[pid %d of a PID namespace not seen here] %.960s",
                 (int)seg.id.pid, cmd);
    else if (seg.id.pid != pid || (ns && ns != mt_proc_pidns(getpid())))
        snprintf(e->cmd, sizeof e->cmd, "[pid %d in pid:[%llu]] %.960s", (int)seg.id.pid,
                 (unsigned long long)ns, cmd);
    else if (flags & MT_FLAG_FORK_CHILD) /* a pre-fork server's workers share its command */
        snprintf(e->cmd, sizeof e->cmd, "[fork of %d] %.960s", (int)seg.id.ppid, cmd);
    else
        snprintf(e->cmd, sizeof e->cmd, "%s", cmd);
    mt_fmt_sanitize(e->cmd);
    mt_segment_close(&seg);
}

static int push_entry(mt_proc_list *l, size_t *cap)
{
    if (l->count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    mt_proc_entry *p = realloc(l->items, ncap * sizeof *p);
    if (!p)
        return -1;
    l->items = p;
    *cap = ncap;
    return 0;
}

/* The entry that already shows this file or pid, or NULL. */
static mt_proc_entry *listed(mt_proc_list *l, int pid, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->items[i].pid == pid ||
            (l->items[i].ok && l->items[i].dev == dev && l->items[i].ino == ino))
            return &l->items[i];
    return NULL;
}

/* True if mapped, "/proc/<pid>/root<path>", is in a directory named dir
 * in pid's mount namespace: the processes of every container that
 * publishes where we look (/dev/shm by default), not those of another
 * MEMTOP_SHM_DIR. */
static bool in_dir(const char *mapped, int pid, const char *dir)
{
    char root[64];
    int r = snprintf(root, sizeof root, "/proc/%d/root", pid);
    const char *p = mapped + r, *base = strrchr(mapped, '/');
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(mapped, root, (size_t)r) == 0 && base == p + n && strncmp(p, dir, n) == 0;
}

/* A row for pid, which runs libmemtop.so but could not create its
 * segment in a directory of dir's name (why: preload_probe.h), unless it
 * is listed already; -1 if out of memory. */
static int add_failed(const char *dir, int pid, mt_proc_list *l, size_t *cap)
{
    char why[256], path[MT_STATUS_PATH_MAX], mapped[MT_STATUS_PATH_MAX + 64];
    if (mt_preload_probe(pid, why, sizeof why, path, sizeof path) != MT_PRELOAD_FAILED ||
        listed(l, pid, 0, 0))
        return 0;
    /* path is the file's name in the target's mount namespace */
    snprintf(mapped, sizeof mapped, "/proc/%d/root%s", pid, path);
    if (path[0] && !in_dir(mapped, pid, dir))
        return 0;
    if (push_entry(l, cap) != 0)
        return -1;
    mt_proc_entry *e = &l->items[l->count++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    e->state = e->shown = "running";
    e->rc = MT_E_FULL;
    snprintf(e->why, sizeof e->why, "%s", why);
    return 0;
}

/* Every process that maps a segment of its own: one not in dir (another
 * mount namespace) is added; one that is, under a pid from another PID
 * namespace, is read again under the pid we see.  And every process whose
 * libmemtop.so could not create its segment (add_failed). */
static mt_errc add_mapped(const char *dir, mt_proc_list *l, size_t *cap, mt_err *err)
{
    DIR *d = opendir("/proc");
    if (!d)
        return MT_OK;
    struct dirent *de;
    mt_errc rc = MT_OK;
    while (rc == MT_OK && (de = readdir(d))) {
        char *end, path[4096];
        long pid = strtol(de->d_name, &end, 10);
        dev_t dev;
        ino_t ino;
        if (*end || pid <= 0 || pid > INT_MAX)
            continue;
        bool preload;
        if (mt_maps_segment((int)pid, path, sizeof path, &dev, &ino, &preload) != 0) {
            if (preload && add_failed(dir, (int)pid, l, cap) != 0)
                rc = mt_err_set(err, MT_E_NOMEM, "out of memory");
            continue;
        }
        mt_proc_entry *e = listed(l, (int)pid, dev, ino);
        if (!e && !in_dir(path, (int)pid, dir))
            continue;
        if (e && e->pid != pid)
            read_entry(dir, (int)pid, e);
        else if (!e && push_entry(l, cap) != 0)
            rc = mt_err_set(err, MT_E_NOMEM, "out of memory");
        else if (!e)
            read_entry(dir, (int)pid, &l->items[l->count++]);
    }
    closedir(d);
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    int x = ((const mt_proc_entry *)a)->pid, y = ((const mt_proc_entry *)b)->pid;
    return (x > y) - (x < y);
}

mt_errc mt_proc_list_read(const char *dir, mt_proc_list *out, mt_err *err)
{
    memset(out, 0, sizeof *out);
    mt_pid_list pids = {NULL, 0};
    mt_err derr;
    mt_errc drc = mt_shm_list(dir, &pids, &derr);
    if (drc && drc != MT_E_NOENT) {
        *err = derr;
        return drc;
    }
    size_t cap = pids.count;
    if (pids.count && !(out->items = calloc(pids.count, sizeof *out->items))) {
        mt_pid_list_free(&pids);
        return mt_err_set(err, MT_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < pids.count; i++)
        read_entry(dir, pids.pids[i], &out->items[out->count++]);
    mt_pid_list_free(&pids);
    mt_errc rc = add_mapped(dir, out, &cap, err);
    if (rc) {
        mt_proc_list_free(out);
        return rc;
    }
    if (out->count)
        qsort(out->items, out->count, sizeof *out->items, cmp_entry);
    if (drc && !out->count) {
        *err = derr; /* no directory, and nothing mapped either */
        return drc;
    }
    return MT_OK;
}

void mt_proc_list_free(mt_proc_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
