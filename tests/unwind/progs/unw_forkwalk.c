/* unw_forkwalk.c -- fork while other threads are inside libunwind.
 *
 * Two threads keep starting short-lived threads that allocate from code
 * without unwind tables (built with -fno-asynchronous-unwind-tables: the
 * own walker leaves those traces to libunwind), so some thread is almost
 * always inside a libunwind walk.  The main thread forks FORKS times; each
 * child allocates (a libunwind walk, and its publisher's first module
 * scan) and exits.  A lock held by a walker at fork time and not reset in
 * the child (libunwind's global cache mutex, the loader's
 * dl_load_write_lock) makes the child hang: after CHILD_WAIT_S seconds the
 * child is killed and the program fails.  Prints "forks N" and exits 0.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>

enum { FORKS = 300, CHILD_WAIT_S = 20 };

static atomic_bool g_stop;

static __attribute__((noinline)) void alloc_some(int n)
{
    for (int i = 0; i < n; i++)
        free(pf_escape(malloc(16 + (size_t)i)));
}

static void *short_lived(void *arg)
{
    (void)arg;
    alloc_some(20);
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_stop)) {
        pthread_t t;
        PF_CHECK(pthread_create(&t, NULL, short_lived, NULL) == 0, "pthread_create");
        PF_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits for the child; kills it if it has not exited in CHILD_WAIT_S.
 * Polls every 0.5 ms: a child takes a few ms, and a 10 ms nap made each of
 * the 300 forks last at least 10 ms (3 s a run). */
static bool child_exited(pid_t pid)
{
    struct timespec nap = {0, 500 * 1000};
    for (double end = now_s() + CHILD_WAIT_S; now_s() < end;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        PF_CHECK(r >= 0, "waitpid");
        if (r == pid)
            return WIFEXITED(st) && WEXITSTATUS(st) == 0;
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return false;
}

int main(void)
{
    pthread_t s[2];
    for (int i = 0; i < 2; i++)
        PF_CHECK(pthread_create(&s[i], NULL, spawner, NULL) == 0, "pthread_create");
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        PF_CHECK(pid >= 0, "fork");
        if (pid == 0) {
            alloc_some(5);
            _exit(0);
        }
        PF_CHECK(child_exited(pid), "fork %d: the child hung (killed) or failed", i);
    }
    atomic_store(&g_stop, true);
    for (int i = 0; i < 2; i++)
        PF_CHECK(pthread_join(s[i], NULL) == 0, "pthread_join");
    printf("forks %d\n", FORKS);
    return 0;
}
