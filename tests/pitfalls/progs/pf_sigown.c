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
 * every handler block (pf_sigown.py). */
#define _GNU_SOURCE
#include "pf_check.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int g_armed, g_raised;
static volatile unsigned long g_allocs, g_frees;

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
    snprintf(line, sizeof line, "done %lu %lu %d\n", g_allocs, g_frees, g_raised);
    say(line);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
