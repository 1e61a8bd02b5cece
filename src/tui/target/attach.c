/* attach.c -- attach by pid with user-level error messages (see attach.h).
 *
 * A process that runs libmemtop.so creates its segment only once it has
 * lived MEMTOP_START_MS (100 ms by default: publish_thread.c, "Short
 * processes"), so a pid without a segment that maps libmemtop.so is waited
 * for like a segment still being set up, unless its library says that it
 * could not create it (preload_probe.h): then that is the reason given. */
#include "attach.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define ATTACH_TRIES 100
#define ATTACH_PAUSE_NS 20000000L

static int describe(mt_errc rc, const mt_err *err, const char *dir, const char *path, int pid,
                    char *msg, size_t n)
{
    char why[400] = "";
    mt_preload_state lib = rc == MT_E_NOENT ? mt_preload_probe(pid, why, sizeof why, NULL, 0) : 0;
    if (rc == MT_E_NOENT && !mt_pid_exists(pid))
        snprintf(msg, n, "no such process: %d", pid);
    else if (rc == MT_E_NOENT && lib == MT_PRELOAD_FAILED)
        snprintf(msg, n, "process %d runs libmemtop.so but has no segment: %s", pid, why);
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
    return st == MT_PRELOAD_PENDING || st == MT_PRELOAD_UNKNOWN;
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

int mt_attach_pid(mt_view *v, const char *dir, int pid, char *msg, size_t n)
{
    mt_err err = {MT_OK, ""};
    mt_errc rc = MT_OK;
    for (int i = 0; i < ATTACH_TRIES; i++) {
        rc = try_once(v, dir, pid, &err);
        if (rc != MT_E_NOTREADY && rc != MT_E_EMPTY && (rc != MT_E_NOENT || !segment_to_come(pid)))
            break;
        struct timespec ts = {0, ATTACH_PAUSE_NS};
        nanosleep(&ts, NULL);
    }
    if (rc)
        return describe(rc, &err, dir, v->path, pid, msg, n);
    if (mt_view_state(v) == MT_STATE_STALE) {
        snprintf(msg, n,
                 "%s is stale: process %d is gone or its pid was reused (memtop --clean "
                 "removes it)",
                 v->path, pid);
        mt_view_detach(v);
        return -1;
    }
    return 0;
}
