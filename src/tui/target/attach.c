/* attach.c -- attach by pid with user-level error messages (see attach.h).
 *
 * A process that runs libmemtop.so creates its segment only once it has
 * lived MEMTOP_START_MS (100 ms by default: publish_thread.c, "Short
 * processes"), so a pid without a segment that maps libmemtop.so is waited
 * for like a segment still being set up, unless its library says that it
 * could not create it (preload_probe.h): then that is the reason given;
 * nor is one that started with MEMTOP_DISABLE=1, or a thread's id. */
#include "attach.h"

#include "proc_file.h"
#include "shm_liveness.h"
#include "shm_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ATTACH_TRIES 100
#define ATTACH_PAUSE_NS 20000000L

/* pid is a thread, not a process (its /proc entry exists, hidden from
 * listings, and maps what its process maps): the process's pid, else 0. */
static int process_of_thread(int pid)
{
    char buf[4096];
    const char *p = mt_proc_read(pid, "status", buf, sizeof buf) > 0 ? strstr(buf, "\nTgid:") : 0;
    int tgid = p ? atoi(p + 6) : 0;
    return tgid > 0 && tgid != pid ? tgid : 0;
}

/* pid started with MEMTOP_DISABLE=1 (by its first environment, readable by
 * whoever may attach): its libmemtop.so tracks nothing and never creates a
 * segment, so there is nothing to wait for. */
static bool started_disabled(int pid)
{
    char env[16384];
    ssize_t len = mt_proc_read(pid, "environ", env, sizeof env);
    for (ssize_t i = 0; i < len; i += (ssize_t)strlen(env + i) + 1)
        if (strncmp(env + i, "MEMTOP_DISABLE=", 15) == 0)
            return strcmp(env + i + 15, "1") == 0; /* the first one: the library's */
    return false;
}

/* The segment's pid is now another live process's (not the one that made
 * it: another start time).  A zombie of its own process is not. */
static bool pid_reused(const mt_segment *seg)
{
    uint64_t ticks = 0;
    int pid = seg->host_pid ? seg->host_pid : seg->id.pid;
    return mt_proc_start_ticks(pid, &ticks, NULL) == 0 && ticks != seg->id.proc_start_ticks;
}

/* pid has exited and waits for its parent to reap it. */
static bool is_zombie(int pid)
{
    uint64_t ticks;
    char st = 0;
    return mt_proc_start_ticks(pid, &ticks, &st) == 0 && st == 'Z';
}

static int describe(mt_errc rc, const mt_err *err, const char *dir, const char *path, int pid,
                    char *msg, size_t n)
{
    char why[400] = "", gone[256];
    mt_preload_state lib = rc == MT_E_NOENT ? mt_preload_probe(pid, why, sizeof why, NULL, 0) : 0;
    if (rc == MT_E_NOENT && !mt_pid_exists(pid))
        snprintf(msg, n, "no such process: %d", pid);
    else if (rc == MT_E_NOENT && is_zombie(pid)) /* its maps are empty: not "without the library" */
        snprintf(msg, n,
                 "process %d has exited (a zombie its parent has not reaped): its segment "
                 "went with it",
                 pid);
    else if (rc == MT_E_NOENT && mt_maps_segment_deleted(pid, gone, sizeof gone))
        snprintf(msg, n,
                 "process %d publishes into %s, but that file was removed or replaced (by hand, "
                 "or by an older libmemtop.so in a process with the same pid in another PID "
                 "namespace sharing the directory): restart it to attach",
                 pid, gone);
    else if (rc == MT_E_NOENT && lib == MT_PRELOAD_FAILED)
        snprintf(msg, n, "process %d runs libmemtop.so but has no segment: %s", pid, why);
    else if (rc == MT_E_NOENT && lib != MT_PRELOAD_ABSENT && started_disabled(pid))
        snprintf(msg, n,
                 "process %d runs libmemtop.so with MEMTOP_DISABLE=1: it tracks nothing and "
                 "creates no segment",
                 pid);
    else if (rc == MT_E_NOENT && lib != MT_PRELOAD_ABSENT)
        snprintf(msg, n,
                 "process %d runs libmemtop.so but has no segment in %s yet (it creates it "
                 "MEMTOP_START_MS after its start, 100 ms by default)%s%s",
                 pid, dir, why[0] ? "; " : "", why);
    else if (rc == MT_E_NOENT)
        snprintf(msg, n,
                 "process %d is not running with libmemtop.so (no segment in %s, none "
                 "mapped)",
                 pid, dir);
    else
        snprintf(msg, n, "%s: %s", path, err->msg);
    return -1;
}

/* pid maps libmemtop.so and has not given up creating its segment: it is
 * yet to come. */
static bool segment_to_come(int pid)
{
    char why[8];
    mt_preload_state st = mt_preload_probe(pid, why, sizeof why, NULL, 0);
    return (st == MT_PRELOAD_PENDING || st == MT_PRELOAD_UNKNOWN) && !started_disabled(pid);
}

/* Open and read once; MT_E_NOTREADY / MT_E_EMPTY mean "try again". */
static mt_errc try_once(mt_view *v, const char *dir, int pid, mt_err *err)
{
    mt_errc rc = mt_view_attach_pid(v, dir, pid, err);
    if (!rc)
        rc = mt_view_refresh(v, err);
    if (rc)
        mt_view_detach(v);
    return rc;
}

int mt_attach_pid(mt_view *v, const char *dir, int pid, bool stale_ok, char *msg, size_t n)
{
    mt_err err = {MT_OK, ""};
    mt_errc rc = MT_OK;
    int process = process_of_thread(pid);
    for (int i = 0; i < ATTACH_TRIES; i++) {
        rc = try_once(v, dir, pid, &err);
        if (rc != MT_E_NOTREADY && rc != MT_E_EMPTY &&
            (rc != MT_E_NOENT || process || !segment_to_come(pid)))
            break;
        struct timespec ts = {0, ATTACH_PAUSE_NS};
        nanosleep(&ts, NULL);
    }
    if (rc == MT_E_NOENT && process) {
        snprintf(msg, n, "%d is a thread of process %d: memtop -p %d", pid, process, process);
        return -1;
    }
    if (rc)
        return describe(rc, &err, dir, v->path, pid, msg, n);
    /* A stale segment is shown only while its pid is its process's (gone,
     * or a zombie not yet reaped): once the pid is another live process's,
     * that process may be about to publish its own, and the file is left
     * to --clean. */
    if (mt_view_state(v) == MT_STATE_STALE && (!stale_ok || pid_reused(&v->seg))) {
        snprintf(msg, n,
                 "%s is stale: process %d is gone or its pid was reused (memtop --clean "
                 "removes it)",
                 v->path, pid);
        mt_view_detach(v);
        return -1;
    }
    return 0;
}
