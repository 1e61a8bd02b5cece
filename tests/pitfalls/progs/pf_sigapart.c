/* pf_sigapart.c -- a signal handler's realloc and xallocx through a
 * redirected allocator's own entries while the thread is inside memtop's
 * hook (pf_sigapart.py).
 *
 * Linked with a shared jemalloc (pf_sigapart_je) or tcmalloc
 * (pf_sigapart_tc, PF_SIGAPART_TC), whose entry points memtop redirects.
 * The program defines clock_gettime, which memtop's hook calls as it
 * records a block (its birth time): armed on the main thread, it raises
 * SIGUSR1 there once, inside the hook.  The handler reallocs a tracked
 * 333-byte block through the allocator's own realloc entry (jemalloc's
 * realloc from its library, tc_realloc) and frees the new block; with
 * jemalloc it also resizes a tracked 444-byte block in place (xallocx).
 * Run with MEMTOP_TEST_DEFER_SIGNAL (a harmless signal): a handler's free
 * inside a hook finds its shard busy, so the old block must wait in the
 * queue and the new one be made apart with the allocator's plain
 * functions (once unknown for these entries: the old block's record was
 * left live).  Prints "ready PID", waits for a line, does the above,
 * prints "done HANDLED" and waits for stdin to close. */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef PF_SIGAPART_TC
void *tc_realloc(void *p, size_t n);
#define ENTRY_REALLOC tc_realloc
#else
size_t xallocx(void *p, size_t size, size_t extra, int flags);
static void *(*g_je_realloc)(void *, size_t);
#define ENTRY_REALLOC g_je_realloc
#endif

enum { MOVED_SIZE = 333, RESIZED_SIZE = 444 };
static void *g_moved, *g_resized;
static __thread volatile int t_armed;
static volatile int g_handled;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (t_armed) {
        t_armed = 0;
        raise(SIGUSR1);
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

static void on_usr1(int sig)
{
    (void)sig;
    void *q = ENTRY_REALLOC(g_moved, 1000);
    if (!q)
        _exit(98);
    memset(q, 0x5a, 1000);
    free(q);
#ifndef PF_SIGAPART_TC
    if (xallocx(g_resized, RESIZED_SIZE, 0, 0) < RESIZED_SIZE)
        _exit(97);
#endif
    g_handled++;
}

static void say(const char *s)
{
    PF_CHECK(write(1, s, strlen(s)) == (ssize_t)strlen(s), "write");
}

int main(void)
{
#ifndef PF_SIGAPART_TC
    void *je = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
    PF_CHECK(je, "libjemalloc.so.2 not loaded");
    g_je_realloc = (void *(*)(void *, size_t))dlsym(je, "realloc"); /* jemalloc's own */
    PF_CHECK(g_je_realloc, "jemalloc's realloc");
#endif
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    g_moved = pf_escape(malloc(MOVED_SIZE));
    g_resized = pf_escape(malloc(RESIZED_SIZE));
    PF_CHECK(g_moved && g_resized, "malloc");
    char line[64];
    snprintf(line, sizeof line, "ready %d\n", (int)syscall(SYS_getpid));
    say(line);
    char c;
    PF_CHECK(read(0, &c, 1) == 1, "no go line");
    t_armed = 1;
    free(pf_escape(malloc(16))); /* the hook: its clock_gettime raises */
    t_armed = 0;
    snprintf(line, sizeof line, "done %d\n", g_handled);
    say(line);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
