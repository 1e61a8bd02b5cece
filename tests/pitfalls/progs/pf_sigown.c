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
 * block in place with jemalloc's xallocx, and reallocs two tracked
 * 4096-byte blocks to 4000 bytes, through libc's name and through
 * jemalloc's own realloc (in place, as a rule: the size class is the
 * same).  memtop's own work cannot touch the block table: a block resized
 * in place keeps its record, and the resize is counted untracked; each
 * once counted an unknown free too, for a block still live under its
 * record.  "done ALLOCS FREES RAISED RESIZED MOVED": the blocks resized in
 * place and those the reallocs moved. */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int g_armed, g_raised;
static volatile unsigned long g_allocs, g_frees;

#ifdef PF_SIGOWN_JE
size_t xallocx(void *p, size_t size, size_t extra, int flags);
enum { RESIZED_SIZE = 444, REALLOCED_SIZE = 4096, REALLOC_TO = 4000 };
static void *g_resized, *g_realloced[2];
static void *(*g_je_realloc)(void *, size_t);
static volatile unsigned long g_resizes, g_moves, g_runs;

/* realloc through fn (libc's name, or jemalloc's own entry) of a tracked
 * block, which keeps its size class: in place, as a rule (counted). */
static void realloc_counted(void *(*fn)(void *, size_t), void **b)
{
    void *q = fn(*b, REALLOC_TO);
    if (!q)
        _exit(96);
    if (q == *b)
        g_resizes++;
    else
        g_moves++;
    *b = q;
}
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
        realloc_counted(realloc, &g_realloced[0]);
        realloc_counted(g_je_realloc, &g_realloced[1]);
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
    g_realloced[0] = pf_escape(malloc(REALLOCED_SIZE));
    g_realloced[1] = pf_escape(malloc(REALLOCED_SIZE));
    PF_CHECK(g_resized && g_realloced[0] && g_realloced[1], "malloc");
    void *je = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
    PF_CHECK(je, "libjemalloc.so.2 not loaded");
    g_je_realloc = (void *(*)(void *, size_t))dlsym(je, "realloc"); /* jemalloc's own */
    PF_CHECK(g_je_realloc, "jemalloc's realloc");
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
    snprintf(line, sizeof line, "done %lu %lu %d %lu %lu\n", g_allocs, g_frees, g_raised, g_resizes,
             g_moves);
#else
    snprintf(line, sizeof line, "done %lu %lu %d\n", g_allocs, g_frees, g_raised);
#endif
    say(line);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
