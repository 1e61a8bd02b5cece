/* test_start_once.c -- unit tests of starting memtop's threads once per
 * process (src/preload/core/core_start.c) with the real publisher start
 * (publish/publish_thread.c), compiled on their own; the segment, the
 * snapshot and the recording are stubs that count their calls.
 *
 * The initialiser and the constructor may both see the other done and
 * both start the threads: that must create one segment, one publisher
 * thread and one recording start.  Each case runs in a forked child (a
 * process of its own, with none of memtop's threads yet) and sends its
 * counts back through a pipe.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_scan.h"
#include "core_log.h"
#include "core_start.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "publish_shm.h"
#include "publish_snapshot.h"
#include "publish_thread.h"
#include "record.h"

/* --- what the two files call, counted ------------------------------------ */

typedef struct counts {
    int segments, fork_segments, rec_ctor, rec_child, config_loads, publishers;
} counts;

static _Atomic int g_segments, g_fork_segments, g_rec_ctor, g_rec_child, g_config_loads;
static mt_shm_header g_header;
static int g_snapshot_state;

mt_global mt_g;
uint64_t mt_clock_origin_ns;
MT_TLS mt_tls_hot mt_tls_h;
MT_TLS unsigned mt_tls_dl_depth;

void mt_config_load(mt_config *cfg, char **envp)
{
    (void)envp;
    cfg->interval_ms = 1000;
    cfg->disabled = getenv("TEST_DISABLED") != NULL;
    atomic_fetch_add_explicit(&g_config_loads, 1, memory_order_relaxed);
}

void mt_log(int level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

mt_snapshot_state *mt_snapshot_state_new(uint32_t interval_ms)
{
    (void)interval_ms;
    return (mt_snapshot_state *)&g_snapshot_state;
}

void mt_snapshot_state_reset_for_child(mt_snapshot_state *s)
{
    (void)s;
}

void mt_snapshot_sync_modules(mt_snapshot_state *s, mt_shm_writer *w)
{
    (void)s;
    (void)w;
}

void mt_snapshot_publish(mt_snapshot_state *s, mt_shm_writer *w)
{
    (void)s;
    (void)w;
}

/* A segment to fill in (the publisher thread then creates none), never
 * published: not this process's (p.pid stays 0), so nothing writes it. */
bool mt_shm_create(mt_shm_writer *w, const char *dir, int pid)
{
    (void)dir;
    (void)pid;
    w->hdr = &g_header;
    w->base = (unsigned char *)&g_header;
    atomic_fetch_add_explicit(&g_segments, 1, memory_order_relaxed);
    return true;
}

bool mt_shm_own_exists(const char *dir, int pid)
{
    (void)dir;
    (void)pid;
    return false;
}

bool mt_shm_seal(mt_shm_writer *w)
{
    (void)w;
    return true;
}

void mt_shm_set_flag(mt_shm_writer *w, uint32_t flag)
{
    (void)w;
    if (flag == MT_FLAG_FORK_CHILD)
        atomic_fetch_add_explicit(&g_fork_segments, 1, memory_order_relaxed);
}

void mt_shm_change_flags(mt_shm_writer *w, uint32_t set, uint32_t clear)
{
    (void)w;
    (void)set;
    (void)clear;
}

void mt_shm_unlink(mt_shm_writer *w)
{
    (void)w;
}

void mt_shm_forget(mt_shm_writer *w)
{
    w->base = NULL;
    w->hdr = NULL;
}

void mt_alloc_scan(bool busy_ok)
{
    (void)busy_ok;
}

void mt_alloc_stats_refresh(void) {}
void mt_world_exempt(bool on)
{
    (void)on;
}
void mt_libunwind_probe(void) {}
bool mt_libunwind_wants_probe(void)
{
    return false;
}
void mt_exec_prebind(void) {}

void mt_alloc_publish(mt_shm_header *h)
{
    (void)h;
}

void mt_rec_publish_status(mt_shm_header *h)
{
    (void)h;
}

int mt_rec_cmd_start(const char *arg, const uint64_t *beat, char *msg, size_t cap)
{
    (void)arg;
    (void)beat;
    (void)msg;
    (void)cap;
    return 0;
}

void mt_rec_lease_check(const uint64_t *beat)
{
    (void)beat;
}

int mt_rec_cmd_stop(const char *arg, char *msg, size_t cap)
{
    (void)arg;
    (void)msg;
    (void)cap;
    return 0;
}

void mt_rec_ctor(char **envp)
{
    (void)envp;
    atomic_fetch_add_explicit(&g_rec_ctor, 1, memory_order_relaxed);
}

void mt_rec_child_start(void)
{
    atomic_fetch_add_explicit(&g_rec_child, 1, memory_order_relaxed);
}

/* --- running a case in a child ------------------------------------------- */

/* Threads of this process but the calling one: publishers (a case's other
 * threads are joined; a publisher names itself only once it runs). */
static int publisher_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;
}

/* Runs fn in a forked child and returns what it counted. */
static counts run_case(void (*fn)(void))
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        fn();
        counts c = {g_segments,  g_fork_segments, g_rec_ctor,
                    g_rec_child, g_config_loads,  publisher_threads()};
        _exit(write(fd[1], &c, sizeof c) == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    counts c;
    ssize_t n = read(fd[0], &c, sizeof c);
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(n, sizeof c);
    return c;
}

static char *g_envp[] = {NULL};

/* The initialiser and the constructor one after the other, each having
 * seen the other done. */
static void start_twice(void)
{
    atomic_store_explicit(&mt_g.state, MT_ST_READY, memory_order_relaxed);
    mt_start_threads(g_envp, false);
    mt_start_threads(g_envp, false);
}

static pthread_barrier_t g_barrier;

static void *starter(void *arg)
{
    pthread_barrier_wait(&g_barrier);
    mt_start_threads(g_envp, arg != NULL);
    return NULL;
}

/* The same at the same time, from two threads released together. */
static void start_concurrently(void)
{
    atomic_store_explicit(&mt_g.state, MT_ST_READY, memory_order_relaxed);
    pthread_barrier_init(&g_barrier, NULL, 2);
    pthread_t th;
    pthread_create(&th, NULL, starter, (void *)1);
    starter((void *)1);
    pthread_join(th, NULL);
}

/* A fork child's first hook, after the parent had started its threads.
 * A real fork: the parent's publisher thread must not exist in the child,
 * whose thread reuses its stack (publish_thread.c thread_stack).  Run in
 * the same process instead, the two threads shared one stack and the case
 * crashed 1 run in 50.  The child returns to run_case and reports its
 * counts (the parent's, inherited, and its own); the parent passes on the
 * child's exit status and writes nothing. */
static void start_in_child(void)
{
    start_twice();
    pid_t child = fork();
    assert_true(child >= 0);
    if (child > 0) {
        int st;
        pid_t got = waitpid(child, &st, 0);
        _exit(got == child && WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    mt_publisher_child_reset(); /* atfork, in the child */
    mt_start_child_reset();
    mt_start_child_threads();
    mt_start_child_threads();
}

static void twice_starts_once(void **state)
{
    (void)state;
    counts c = run_case(start_twice);
    assert_int_equal(c.segments, 1);
    assert_int_equal(c.publishers, 1);
    assert_int_equal(c.rec_ctor, 1);
    assert_int_equal(c.config_loads, 0);
}

static void concurrent_starts_once(void **state)
{
    (void)state;
    counts c = run_case(start_concurrently);
    assert_int_equal(c.segments, 1);
    assert_int_equal(c.publishers, 1);
    assert_int_equal(c.rec_ctor, 1);
    assert_int_equal(c.config_loads, 1); /* the early settings are read again once */
}

static void disabled_by_reload_starts_nothing(void **state)
{
    (void)state;
    setenv("TEST_DISABLED", "1", 1);
    counts c = run_case(start_concurrently);
    unsetenv("TEST_DISABLED");
    assert_int_equal(c.config_loads, 1);
    assert_int_equal(c.segments, 0);
    assert_int_equal(c.publishers, 0);
    assert_int_equal(c.rec_ctor, 0);
}

static void fork_child_starts_its_own_once(void **state)
{
    (void)state;
    counts c = run_case(start_in_child);
    assert_int_equal(c.segments, 2);
    assert_int_equal(c.fork_segments, 1);
    assert_int_equal(c.rec_ctor, 1);
    assert_int_equal(c.rec_child, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(twice_starts_once),
        cmocka_unit_test(concurrent_starts_once),
        cmocka_unit_test(disabled_by_reload_starts_nothing),
        cmocka_unit_test(fork_child_starts_its_own_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
