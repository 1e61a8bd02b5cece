/* pf_exec_race.c MODE -- two threads exec at once; one exec fails while
 * the other is still inside its own.
 *
 * Thread B execs with argv[0] "pf_gate": the spy preloaded after
 * libmemtop.so (pf_exec_spy.c) keeps it inside the call until main lets it
 * go.  Meanwhile main's exec of a path that does not exist fails.  memtop
 * held its publisher (still in its first wait: MEMTOP_START_MS) for the
 * execs; the failed one must not let it go while B is still inside its
 * exec, or the publisher creates a segment in an image being replaced.
 * main checks that no segment of this pid appears then, and lets B go:
 *  - MODE exec: B's exec of /bin/true (without LD_PRELOAD) succeeds; no
 *    segment may be left behind (pf_exec_race.py);
 *  - MODE fail: B's exec fails too; the publisher must then run and
 *    create the segment (main waits for it, then prints "ok").
 * With a second argument "started" (run with MEMTOP_START_MS=0), the
 * segment exists from the start: the first exec ends the publisher and
 * marks the segment exited and exec'd.  main's failed exec must leave the
 * marks while B is inside its exec, and once both failed the publisher
 * must run again (the segment's publish count grows, the marks go).
 * Run plainly or without the spy, the execs are not held: the checks of
 * the segment are skipped (no MEMTOP_SHM_DIR) or pass trivially.
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_segpeek.h"
#include "shm_layout.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

static void (*g_wait_inside)(void);
static void (*g_let_go)(void);
static int g_exec_b;  /* 1: B's exec is to succeed */
static int g_started; /* 1: the segment exists from the start */

#define EXEC_MARKS (MT_FLAG_EXITED | MT_FLAG_EXECED)

static void *exec_b(void *arg)
{
    (void)arg;
    char *argv[] = {"pf_gate", NULL};
    char *bare[] = {NULL}; /* no LD_PRELOAD: the new image has no memtop */
    if (g_exec_b)
        execve("/bin/true", argv, bare);
    else
        execve("/nonexistent/pf_exec_race_b", argv, environ);
    PF_CHECK(!g_exec_b, "execve /bin/true failed");
    return NULL;
}

/* True if this pid's segment exists in MEMTOP_SHM_DIR. */
static int have_segment(void)
{
    const char *dir = getenv("MEMTOP_SHM_DIR");
    char path[4096];
    struct stat st;
    if (!dir || !getenv("LD_PRELOAD"))
        return 0;
    snprintf(path, sizeof path, "%s/memtop-%d", dir, (int)getpid());
    return stat(path, &st) == 0;
}

/* While B is inside its exec. */
static void check_held(void)
{
    uint32_t flags;
    uint64_t publishes;
    if (!g_started)
        PF_CHECK(!have_segment(), "a segment appeared while another thread was inside exec");
    else if (pf_segment_state(getpid(), &flags, &publishes) == 0)
        PF_CHECK((flags & EXEC_MARKS) == EXEC_MARKS,
                 "the segment lost its exec marks while another thread was inside exec");
}

/* Both execs failed: the publisher runs again (waits up to 10 s). */
static void check_running(void)
{
    uint32_t flags;
    uint64_t then, now = 0;
    if (!g_started) {
        for (int i = 0; !have_segment() && i < 1000; i++)
            usleep(10000);
        PF_CHECK(have_segment(), "no segment after both execs failed: the publisher is still held");
        return;
    }
    if (pf_segment_state(getpid(), &flags, &then) != 0)
        return;
    for (int i = 0; (flags & EXEC_MARKS) || now <= then; i++) {
        PF_CHECK(i < 1000, "the publisher did not publish again after both execs failed");
        usleep(10000);
        pf_segment_state(getpid(), &flags, &now);
    }
}

int main(int argc, char **argv)
{
    PF_CHECK((argc == 2 || (argc == 3 && !strcmp(argv[2], "started"))) &&
                 (!strcmp(argv[1], "exec") || !strcmp(argv[1], "fail")),
             "usage");
    g_exec_b = !strcmp(argv[1], "exec");
    g_started = argc == 3;
    free(pf_escape(malloc(10)));
    g_wait_inside = (void (*)(void))dlsym(RTLD_DEFAULT, "pf_spy_wait_inside");
    g_let_go = (void (*)(void))dlsym(RTLD_DEFAULT, "pf_spy_let_go");
    int spy = g_wait_inside && g_let_go;
    pthread_t b;
    PF_CHECK(pthread_create(&b, NULL, exec_b, NULL) == 0, "pthread_create");
    if (spy)
        g_wait_inside();
    char *now[] = {"pf_now", NULL};
    PF_CHECK(execve("/nonexistent/pf_exec_race_a", now, environ) == -1, "execve returned");
    if (spy) {
        usleep(800000); /* past MEMTOP_START_MS: a publisher let go creates its segment */
        check_held();
        g_let_go();
    }
    pthread_join(b, NULL); /* MODE exec: never returns, the exec ends this image */
    if (spy && getenv("MEMTOP_SHM_DIR"))
        check_running();
    printf("ok\n");
    return 0;
}
