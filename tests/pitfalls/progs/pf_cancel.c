/* pf_cancel.c -- threads with a cancel pending (pthread_cancel, deferred:
 * the default) that enter memtop's slow paths.
 *
 * None of malloc, free, dlopen, dlsym, exit and the exec functions is a
 * cancellation point, so a thread whose cancel is pending goes through
 * them untouched and is cancelled at its next cancellation point
 * (pthread_testcancel here).  memtop runs code on the thread in those calls
 * that calls cancellation points (write, open, read, close, nanosleep,
 * pthread_join): were the cancel acted upon there, the thread would unwind
 * out of memtop with its state half-updated (the thread's "inside memtop"
 * flag, a ring marked busy) or a lock held (the allocator scan's, the exec
 * lock, the recording's), and out of a call that never returns in a plain
 * run.  Each mode makes its thread's cancel pending first (disabled, then
 * pthread_cancel, then enabled again: nothing acts on it until a
 * cancellation point), deterministically:
 *
 *   record  a thread allocates and frees past its recording buffer's bound
 *           while the writer's writes are slow (MEMTOP_RECORD and
 *           MEMTOP_TEST_WRITE_DELAY_US, pf_cancel.py): the hook at the bound
 *           asks whether the disk is behind (open/read/close of
 *           /proc/self/task/TID/stat);
 *   dlsym   a thread dlopens a module and calls dlsym: memtop scans the new
 *           module for an allocator (open of its file, holding the scan's
 *           lock); then the main thread does the same with another module;
 *   exit    a thread calls exit(3) while recording: memtop's destructor ends
 *           the recording (write, close) and the publisher
 *           (pthread_timedjoin_np);
 *   exec    a thread execs this program ("execd") while recording: memtop
 *           seals the recording and holds or ends the publisher first;
 *   fork    a thread forks while recording; in the child (its only thread,
 *           the cancel still pending) memtop's atfork handler closes the
 *           parent's recording (close), and the first allocation restarts
 *           tracking, which creates the child's recording (open).
 *
 * Each thread counts what it did; the output (compared with a plain run)
 * says how far it got and how it ended.  Marker sizes give memtop's exact
 * counts (pf_cancel.py).
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>

#define REC_SIZE 3203 /* record: allocated and freed REC_N times */
#define REC_N 200000  /* 400,000 events: past a thread's bound of 262,144 */
#define DL_SIZE 3217  /* dlsym: after the dlsym, DL_N blocks, freed */
#define DL_N 100
#define EXIT_SIZE 3229 /* exit: EXIT_N blocks live at exit */
#define EXIT_N 10
#define FORK_SIZE 3241 /* fork: the child's blocks, freed */
#define FORK_N 100
#define MAIN_SIZE 3251 /* the main thread, after its thread: MAIN_N blocks, freed */
#define MAIN_N 100

static const char *g_self;
static volatile int g_done; /* what the thread did before its cancellation point */

/* This thread's cancel, pending: nothing acts on it before a cancellation point. */
static void pend_cancel(void)
{
    int old;
    PF_CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0, "disable");
    PF_CHECK(pthread_cancel(pthread_self()) == 0, "pthread_cancel");
    PF_CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0, "enable");
}

static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        free(pf_escape(malloc(size)));
        g_done++;
    }
}

static void *record_thread(void *arg)
{
    (void)arg;
    pend_cancel();
    churn(REC_SIZE, REC_N);
    pthread_testcancel();
    return NULL;
}

static void *dlsym_thread(void *arg)
{
    pend_cancel();
    void *h = dlopen((const char *)arg, RTLD_NOW);
    PF_CHECK(h != NULL, "dlopen %s: %s", (const char *)arg, dlerror());
    PF_CHECK(dlsym(h, "dlmod_work") != NULL, "dlsym: %s", dlerror());
    churn(DL_SIZE, DL_N);
    pthread_testcancel();
    return NULL;
}

static void *exit_thread(void *arg)
{
    (void)arg;
    printf("exit: the thread calls exit(3)\n"); /* output first: write is a cancellation point */
    fflush(stdout);
    pend_cancel();
    for (int i = 0; i < EXIT_N; i++)
        pf_escape(malloc(EXIT_SIZE));
    exit(3);
}

static void *exec_thread(void *arg)
{
    (void)arg;
    printf("exec: the thread execs\n");
    fflush(stdout);
    pend_cancel();
    execl(g_self, g_self, "execd", (char *)NULL);
    PF_CHECK(0, "execl: %s", strerror(errno));
    return NULL;
}

static pid_t g_child;

static void *fork_thread(void *arg)
{
    (void)arg;
    pend_cancel();
    pid_t pid = fork();
    if (pid == 0) { /* the cancel is pending here too: this thread's state was copied */
        churn(FORK_SIZE, FORK_N);
        _exit(g_done == FORK_N ? 5 : 6);
    }
    g_child = pid;
    pthread_testcancel();
    return NULL;
}

/* Runs fn on a thread and reports how it ended. */
static void run_thread(const char *mode, void *(*fn)(void *), void *arg)
{
    pthread_t t;
    void *ret;
    g_done = 0;
    PF_CHECK(pthread_create(&t, NULL, fn, arg) == 0, "pthread_create");
    PF_CHECK(pthread_join(t, &ret) == 0, "pthread_join");
    printf("%s: the thread did %d, then %s\n", mode, g_done,
           ret == PTHREAD_CANCELED ? "was cancelled" : "returned");
}

int main(int argc, char **argv)
{
    g_self = argv[0];
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "execd") == 0) {
        printf("execd: the new image runs\n");
        return 0;
    }
    if (strcmp(mode, "record") == 0) {
        run_thread(mode, record_thread, NULL);
        PF_CHECK(g_done == REC_N, "record: cancelled inside malloc or free after %d", g_done);
    } else if (strcmp(mode, "dlsym") == 0) {
        PF_CHECK(argc == 4, "dlsym MODULE1 MODULE2");
        run_thread(mode, dlsym_thread, argv[2]);
        PF_CHECK(g_done == DL_N, "dlsym: cancelled inside dlopen or dlsym");
        void *h = dlopen(argv[3], RTLD_NOW); /* a scan again: the lock must be free */
        PF_CHECK(h != NULL, "dlopen %s: %s", argv[3], dlerror());
        PF_CHECK(dlsym(h, "tlsmod_touch") != NULL, "dlsym: %s", dlerror());
    } else if (strcmp(mode, "exit") == 0) {
        run_thread(mode, exit_thread, NULL);
        PF_CHECK(0, "exit: the thread's exit(3) did not end the process");
    } else if (strcmp(mode, "exec") == 0) {
        run_thread(mode, exec_thread, NULL);
        PF_CHECK(0, "exec: the thread's exec did not replace the process");
    } else if (strcmp(mode, "fork") == 0) {
        run_thread(mode, fork_thread, NULL);
        PF_CHECK(g_child > 0, "fork: %s", strerror(errno));
        int st = 0;
        PF_CHECK(waitpid(g_child, &st, 0) == g_child, "waitpid");
        printf("fork: the child did its work: %s\n",
               WIFEXITED(st) && WEXITSTATUS(st) == 5 ? "yes" : "no");
    } else {
        fprintf(stderr, "usage: pf_cancel record|dlsym M1 M2|exit|exec|fork\n");
        return 2;
    }
    churn(MAIN_SIZE, MAIN_N);
    return 0;
}
