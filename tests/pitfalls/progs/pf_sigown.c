/* pf_sigown.c -- signal handlers that allocate while the thread runs
 * memtop's own work (pf_sigown.py).
 *
 * memtop marks its own work on a program thread MT_IN_OWN (an exec's
 * preparation and its undo when the exec fails, among others), and a
 * handler's calls there were counted nowhere while the data said exact.
 * This program defines getpid, which memtop calls there (the program's
 * definition comes first in the lookup scope), so that while armed each
 * call raises SIGUSR1, whose handler allocates and frees a few blocks
 * with libc's malloc (counted by the program itself).  It prints
 * "ready PID", waits for a line, then arms and calls execve on a path
 * that does not exist (it fails: memtop prepares and undoes), disarms and
 * prints "done ALLOCS FREES RAISED"; then waits for stdin to close.
 * memtop's totals and its untracked and unknown counts must account for
 * every handler block (pf_sigown.py).
 *
 * PF_SIGOWN_JE (pf_sigown_je, linked with a shared jemalloc, whose entries
 * memtop redirects): the second handler (the first runs from memtop's
 * getpid before its own work begins) also resizes a tracked 444-byte
 * block in place with jemalloc's xallocx (memtop's own work cannot touch
 * the block table: the block keeps its record, and the resize is counted
 * untracked; it once counted an unknown free too, for a block still live
 * under its record), and "done" says how many it resized: "done ALLOCS
 * FREES RAISED RESIZED". */
#define _GNU_SOURCE
#include "pf_check.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int g_armed, g_raised;
static volatile unsigned long g_allocs, g_frees;

#ifdef PF_SIGOWN_JE
size_t xallocx(void *p, size_t size, size_t extra, int flags);
enum { RESIZED_SIZE = 444 };
static void *g_resized;
static volatile unsigned long g_resizes, g_runs;
#endif

pid_t getpid(void)
{
    if (g_armed) {
        g_raised++;
        raise(SIGUSR1);
    }
    return (pid_t)syscall(SYS_getpid);
}

static void on_usr1(int sig)
{
    (void)sig;
    void *b[3];
    for (int i = 0; i < 3; i++) {
        b[i] = pf_escape(malloc(40 + 8 * (size_t)i));
        if (!b[i])
            _exit(98);
        g_allocs++;
    }
    for (int i = 0; i < 3; i++) {
        free(b[i]);
        g_frees++;
    }
#ifdef PF_SIGOWN_JE
    if (++g_runs == 2) { /* the first comes from memtop's getpid before its own work */
        if (xallocx(g_resized, RESIZED_SIZE, 0, 0) < RESIZED_SIZE)
            _exit(97);
        g_resizes++;
    }
#endif
}

static void say(const char *s)
{
    PF_CHECK(write(1, s, strlen(s)) == (ssize_t)strlen(s), "write");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
#ifdef PF_SIGOWN_JE
    g_resized = pf_escape(malloc(RESIZED_SIZE));
    PF_CHECK(g_resized, "malloc");
#endif
    char line[128];
    snprintf(line, sizeof line, "ready %d\n", (int)syscall(SYS_getpid));
    say(line);
    char c;
    PF_CHECK(read(0, &c, 1) == 1, "no go line");
    char *argv[] = {"pf_sigown_nothing", NULL};
    char *envp[] = {NULL};
    g_armed = 1;
    int rc = execve("/nonexistent/pf_sigown_nothing", argv, envp);
    g_armed = 0;
    PF_CHECK(rc == -1, "execve");
#ifdef PF_SIGOWN_JE
    snprintf(line, sizeof line, "done %lu %lu %d %lu\n", g_allocs, g_frees, g_raised, g_resizes);
#else
    snprintf(line, sizeof line, "done %lu %lu %d\n", g_allocs, g_frees, g_raised);
#endif
    say(line);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
