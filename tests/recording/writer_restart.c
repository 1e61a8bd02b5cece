/* writer_restart.c -- for test_writer_quick_restart.py: STOP then START a
 * new recording, N times, and check after each START that the target has a
 * "memtop-record" writer thread.  To make the old writer slow to
 * leave (as on a loaded machine), it is frozen with ptrace (that thread
 * only) from before the STOP until after the START.
 * It is frozen only while idle (in its futex sleep): frozen inside its
 * work it may hold the writer's lock, which the STOP takes, so the STOP and
 * then the START waited for a thread that this program thaws only after the
 * START (on a loaded machine the writer is often busy: "start 3 failed:
 * process did not answer").  Every wait is on a condition with a generous
 * bound, never a fixed sleep.
 * Usage: writer_restart SHM_DIR PID OUTDIR N.  Exit 1 if one was missing. */
#define _GNU_SOURCE
#include "memtop_ipc.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bounds for a loaded machine: a command's answer, the writer going idle,
 * the new writer thread appearing. */
#define CTRL_TIMEOUT_MS 30000
#define WAIT_MS 20000

/* How many of the target's threads are writers ("memtop-record") other
 * than tid `old` (0: none excluded); *tid gets one of them. */
static int writer_threads(int pid, int old, int *tid)
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
        if (fgets(name, sizeof name, f) && strncmp(name, "memtop-record", 13) == 0 &&
            atoi(e->d_name) != old) {
            n++;
            *tid = atoi(e->d_name);
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool freeze(int tid)
{
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0 || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
        return false;
    int st;
    return waitpid(tid, &st, __WALL) == tid;
}

/* Was the frozen thread stopped in a futex wait (the writer's idle sleep,
 * outside its lock)?  orig_rax is the interrupted system call, -1 if none. */
static bool stopped_in_futex(int tid)
{
    struct user_regs_struct regs;
    return ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0 && (long)regs.orig_rax == SYS_futex;
}

/* Freezes the writer while it sleeps idle; false if it did not within WAIT_MS. */
static bool freeze_idle(int tid)
{
    for (long long end = now_ms() + WAIT_MS; now_ms() < end; usleep(1000)) {
        if (!freeze(tid))
            return false;
        if (stopped_in_futex(tid))
            return true;
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
    }
    return false;
}

/* The thread's voluntary context switches (it went to sleep), -1 if gone. */
static long sleeps(int pid, int tid)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
    FILE *f = fopen(path, "r");
    long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* After the thaw the old writer either leaves (the session was not handed
 * to it) or goes on serving: wait until it is gone or slept twice more
 * (it passed its stop check), then a writer must be there. */
static bool writer_after_start(int pid, int old)
{
    long base = old ? sleeps(pid, old) : -1;
    for (long long end = now_ms() + WAIT_MS; base >= 0 && now_ms() < end; usleep(2000)) {
        long now = sleeps(pid, old);
        if (now < 0 || now >= base + 2)
            break;
    }
    int tid;
    for (long long end = now_ms() + WAIT_MS; now_ms() < end; usleep(2000))
        if (writer_threads(pid, 0, &tid))
            return true;
    return false;
}

/* One restart: freeze the writer, STOP, START into path, thaw.  Returns
 * false if the START failed (said on stdout); *old gets the old writer. */
static bool restart(mt_segment *seg, int pid, int i, const char *path, int *old)
{
    mt_ctrl_reply rep;
    mt_err err;
    *old = 0;
    writer_threads(pid, 0, old);
    bool frozen = *old && freeze_idle(*old);
    /* The first STOP finds no recording and is refused: that is fine. */
    if (mt_control_send(seg, MT_CMD_RECORD_STOP, "", CTRL_TIMEOUT_MS, &rep, &err) == MT_E_TIMEOUT)
        printf("stop %d: %s\n", i, err.msg);
    mt_errc rc = mt_control_send(seg, MT_CMD_RECORD_START, path, CTRL_TIMEOUT_MS, &rep, &err);
    if (frozen)
        ptrace(PTRACE_DETACH, *old, NULL, NULL);
    if (rc != MT_OK)
        return printf("start %d failed: %s\n", i, err.msg), false;
    if (*old && !frozen)
        printf("start %d: could not freeze the writer (%d)\n", i, *old);
    return true;
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
    for (int i = 0; i < n; i++) {
        char path[512];
        int old;
        snprintf(path, sizeof path, "%s/r%d.dat", argv[3], i);
        if (!restart(&seg, pid, i, path, &old))
            return 1;
        if (!writer_after_start(pid, old)) {
            missing++;
            printf("after start %d: no writer thread\n", i);
        }
    }
    printf("restarts %d without writer %d\n", n, missing);
    return missing ? 1 : 0;
}
