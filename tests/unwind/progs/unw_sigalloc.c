/* unw_sigalloc.c -- allocations inside a SIGALRM handler, also at thread exit.
 *
 * Phase 1: a 1 kHz SIGALRM interrupts a main loop that never allocates, at
 * any instruction, and the handler mallocs and frees a 777-byte block, N
 * times.  Each such backtrace crosses the kernel's signal frame
 * (__restore_rt), which memtop's own unwinder leaves to libunwind: the
 * whole trace falls back.  The main loop is never inside a hook, so every
 * handler allocation is tracked.
 *
 * Phase 2: T threads, one at a time, whose only allocations happen in a
 * pthread key destructor (created after memtop's key, so it runs after
 * memtop's): a 779-byte block, then raise(SIGALRM), whose handler makes a
 * 777-byte block.  So a thread's first libunwind walk happens while its
 * key destructors run; libunwind must not leave a per-thread cache behind
 * for each (VmSize is printed before and after the threads).
 *
 * argv: N (default 300), T (default 300).  Prints "handler allocations
 * N+T destructor allocations T" and "vm BEFORE_KB AFTER_KB".
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

enum { MARKER = 777, DTOR_MARKER = 779 };

static volatile sig_atomic_t g_count;
static pthread_key_t g_key;

static __attribute__((noinline)) void alloc_free(size_t n)
{
    char *p = pf_escape(malloc(n));
    if (!p)
        _exit(98);
    p[0] = p[n - 1] = 1;
    free(pf_escape(p));
}

static void on_alrm(int sig)
{
    (void)sig;
    alloc_free(MARKER);
    g_count++;
}

/* Busy work without allocations or calls into libc. */
static __attribute__((noinline)) unsigned long spin(unsigned long x)
{
    for (int i = 0; i < 100000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

static void set_timer(long usec)
{
    struct itimerval it = {{0, usec}, {0, usec}};
    PF_CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");
}

static void at_exit_key(void *arg)
{
    (void)arg;
    alloc_free(DTOR_MARKER);
    raise(SIGALRM);
}

static void *one(void *arg)
{
    (void)arg;
    PF_CHECK(pthread_setspecific(g_key, (void *)1) == 0, "setspecific");
    return NULL;
}

static long vm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0)
            kb = atol(line + 7);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 300, threads = argc > 2 ? atoi(argv[2]) : 300;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alrm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    set_timer(1000);
    volatile unsigned long sink = 1;
    while (g_count < want)
        sink = spin(sink);
    PF_CHECK(pthread_sigmask(SIG_BLOCK, &alrm, NULL) == 0, "sigmask");
    set_timer(0);
    int handled = g_count;
    PF_CHECK(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL) == 0, "sigmask");
    g_count = 0;
    PF_CHECK(pthread_key_create(&g_key, at_exit_key) == 0, "key");
    long before = vm_kb();
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        PF_CHECK(pthread_create(&t, NULL, one, NULL) == 0, "pthread_create");
        PF_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    }
    long after = vm_kb();
    PF_CHECK(g_count == threads, "%d handler runs at thread exit, expected %d", (int)g_count,
             threads);
    printf("handler allocations %d destructor allocations %d\n", handled + threads, threads);
    printf("vm %ld %ld\n", before, after);
    return 0;
}
