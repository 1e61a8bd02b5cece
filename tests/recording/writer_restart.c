/* writer_restart.c -- for test_writer_quick_restart.py: STOP then
 * START a new recording, N times, and check after each START that the
 * target has a "memtop-record" writer thread.  To make the old writer slow
 * to leave (as on a loaded machine), it is frozen with ptrace (that thread
 * only) from before the STOP until after the START.
 * Usage: writer_restart SHM_DIR PID OUTDIR N.  Exit 1 if one was
 * missing. */
#define _GNU_SOURCE
#include "memtop_ipc.h"

#include <dirent.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tid of the target's writer thread, or 0; n gets how many there are. */
static int writer_threads_tid(int pid, int *tid)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512], name[64] = {0};
        snprintf(p, sizeof p, "%s/%s/comm", path, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "memtop-record", 13) == 0) {
            n++;
            *tid = atoi(e->d_name);
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

static int writer_threads(int pid)
{
    int tid = 0;
    return writer_threads_tid(pid, &tid);
}

static bool freeze(int tid)
{
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0 || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
        return false;
    int st;
    return waitpid(tid, &st, __WALL) == tid;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "usage: writer_restart SHM_DIR PID OUTDIR N\n"), 2;
    int pid = atoi(argv[2]), n = atoi(argv[4]), missing = 0;
    mt_segment seg;
    mt_err err;
    if (mt_segment_open_pid(&seg, argv[1], pid, &err) != MT_OK)
        return fprintf(stderr, "%s\n", err.msg), 2;
    mt_ctrl_reply rep;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/r%d.dat", argv[3], i);
        int tid = 0;
        writer_threads_tid(pid, &tid);
        bool frozen = tid && freeze(tid);
        mt_control_send(&seg, MT_CMD_RECORD_STOP, "", 5000, &rep, &err);
        mt_errc rc = mt_control_send(&seg, MT_CMD_RECORD_START, path, 5000, &rep, &err);
        if (frozen)
            ptrace(PTRACE_DETACH, tid, NULL, NULL);
        if (rc != MT_OK)
            return printf("start %d failed: %s\n", i, err.msg), 1;
        if (tid && !frozen)
            printf("start %d: could not freeze the writer (%d)\n", i, tid);
        usleep(100000); /* time for a writer on its way out to leave */
        if (!writer_threads(pid)) {
            missing++;
            printf("after start %d: no writer thread\n", i);
        }
    }
    printf("restarts %d without writer %d\n", n, missing);
    return missing ? 1 : 0;
}
