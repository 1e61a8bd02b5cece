/* pf_sigcount.c -- exact totals under signal handlers that allocate
 * (pf_sigcount.py).
 *
 * Its allocator is its own, async-signal-safe (pf_sigbump.c, linked in), so
 * its handlers may call malloc and free at any moment.  It prints "ready PID"
 * and waits for a line on stdin; then, with SIGPROF (ITIMER_PROF) and
 * SIGALRM (ITIMER_REAL) firing at a high rate (set_timers), its main loop allocates and
 * frees (malloc and calloc of 16 .. 1039 bytes through a ring of live
 * blocks; the last quarter of the steps at a call site of their own,
 * late_alloc), while each handler allocates and frees a few blocks of its
 * own.  Then it stops the timers, frees what is left and prints
 * "done ALLOCS BYTES FREES SIGNALS LATE_ALLOCS LATE_BYTES": the calls it made between "ready" and
 * "done", all counted by itself (the main loop's counts written by the main
 * loop only, the handlers' by the handlers only, which block each other:
 * no count lost to an interrupted update).  It waits for stdin to close.
 * argv[1]: main loop steps (default 400000); argv[2]: timer interval in
 * microseconds (default 50).
 *
 * Built with PF_SIGCOUNT_MI (pf_sigcount_mi), every call the program counts
 * goes to mimalloc's names instead (mi_malloc, mi_calloc, mi_realloc,
 * mi_free of mtp_sigbump_mi): an allocator's own API, which memtop hooks
 * apart from libc's names (hook_direct.h); a handler first asks mi_expand
 * to grow the handed block in place, which fails (no count: the block
 * stays, and its record). */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_signal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#ifdef PF_SIGCOUNT_MI
void *mi_malloc(size_t n);
void *mi_calloc(size_t a, size_t b);
void *mi_realloc(void *p, size_t n);
void mi_free(void *p);
void *mi_expand(void *p, size_t n);
#define malloc mi_malloc
#define calloc mi_calloc
#define realloc mi_realloc
#define free mi_free
#endif

void pf_sigbump_handler_enter(void);
void pf_sigbump_handler_leave(void);

enum { RING = 64, HANDLER_BLOCKS = 3, HANDOFF_SIZE = 700 };

typedef struct counts {
    uint64_t allocs, bytes, frees;
} counts;

static counts g_main;                 /* the main loop's (main thread only) */
static counts g_late;                 /* late_alloc's share of g_main */
static volatile counts g_handler;     /* the handlers' (handlers only) */
static volatile uint64_t g_signals;   /* handlers only */
static volatile uint64_t g_hrng = 88; /* handlers only */

static uint64_t xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

static long g_usec;

/* ITIMER_REAL again, usec from now (async-signal-safe). */
static void arm_real(long usec)
{
    struct itimerval it = {{0, 0}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* A block the main loop allocated (tracked) and hands to the handlers,
 * which realloc it (its free and a new block) and free the new one: a
 * handler's realloc of a tracked block while it interrupts a hook was
 * once counted as a new untracked block only, the old one's free nowhere
 * (its record left live).  Set by the main loop only while empty, taken by
 * a handler only while full: the two never race. */
static void *volatile g_handoff;

static void realloc_handoff(uint64_t r)
{
    void *h = g_handoff;
    if (!h)
        return;
    g_handoff = NULL;
#ifdef PF_SIGCOUNT_MI
    if (mi_expand(h, (size_t)1 << 40)) /* in place or not at all: never that far */
        _exit(97);
#endif
    size_t n = 8 + (size_t)((r >> 40) & 511);
    void *q = realloc(h, n);
    if (!q)
        _exit(98);
    memset(q, 0x5a, n);
    g_handler.allocs++;
    g_handler.bytes += n;
    g_handler.frees++; /* the old block */
    free(pf_escape(q));
    g_handler.frees++;
}

static void on_signal(int sig)
{
    pf_sigbump_handler_enter();
    void *b[HANDLER_BLOCKS];
    uint64_t r = g_hrng = xorshift(g_hrng);
    realloc_handoff(r);
    for (int i = 0; i < HANDLER_BLOCKS; i++) {
        size_t n = 8 + (size_t)((r >> (i * 10)) & 511);
        b[i] = malloc(n);
        if (!b[i])
            _exit(98);
        memset(b[i], 0xa5, n);
        g_handler.allocs++;
        g_handler.bytes += n;
    }
    for (int i = 0; i < HANDLER_BLOCKS; i++) {
        free(pf_escape(b[i]));
        g_handler.frees++;
    }
    g_signals++;
    pf_sigbump_handler_leave();
    if (sig == SIGALRM)
        arm_real(g_usec);
}

/* The call memtop makes as a thread gets its record, at the thread's
 * first tracked hook (core_thread_state.c set_key): this definition comes
 * first in the lookup scope, so memtop's call lands here.  Armed by
 * first_hook_thread, it raises SIGPROF at that very moment on that thread
 * (its handler runs at once, inside memtop), so that a handler's calls
 * there are checked on every run, not only when a timer happens to fire
 * in that window. */
static int (*g_real_setspecific)(pthread_key_t, const void *);
static volatile int g_raise_in_setspecific; /* first_hook_thread only */
static volatile int g_raised_in_setspecific;

int pthread_setspecific(pthread_key_t key, const void *value)
{
    if (g_raise_in_setspecific) {
        g_raise_in_setspecific = 0;
        raise(SIGPROF);
        g_raised_in_setspecific = 1;
    }
    if (!g_real_setspecific) /* a call before main's lookup (none expected) */
        g_real_setspecific =
            (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    return g_real_setspecific(key, value);
}

/* A thread whose first allocation comes after "go": started before
 * "ready" (pthread_create's own allocations are glibc's, outside the
 * counted window), it waits for g_go, then with SIGPROF open on this
 * thread alone (no timer runs yet and the main thread blocks both signals:
 * no other handler runs meanwhile, g_handler keeps one writer) allocates
 * and frees one block, in whose hook memtop makes its record and the
 * raise above lands.  Its calls are counted in g_thread (this thread
 * only, read after g_ack).  It never exits (glibc's frees of its stack and
 * TLS at the join would be calls the program does not count): it waits on
 * g_go again until the process ends. */
static counts g_thread;
static int g_go[2], g_ack[2];

static void *first_hook_thread(void *arg)
{
    (void)arg;
    char c;
    PF_CHECK(read(g_go[0], &c, 1) == 1, "go");
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    PF_CHECK(pthread_sigmask(SIG_UNBLOCK, &prof, NULL) == 0, "sigmask");
    g_raise_in_setspecific = 1;
    size_t n = 100;
    void *p = malloc(n);
    PF_CHECK(p, "malloc");
    g_thread.allocs++;
    g_thread.bytes += n;
    free(pf_escape(p));
    g_thread.frees++;
    PF_CHECK(pthread_sigmask(SIG_BLOCK, &prof, NULL) == 0, "sigmask");
    PF_CHECK(write(g_ack[1], "a", 1) == 1, "ack");
    while (read(g_go[0], &c, 1) != 0)
        ;
    return NULL;
}

/* SIGPROF every usec of CPU time (in practice every scheduler tick), and
 * SIGALRM usec after the previous SIGALRM's handler ended (a handler
 * slower than the interval, as one that unwinds through its signal frame
 * may be, cannot starve the loop).  0: both off. */
static void set_timers(long usec)
{
    struct itimerval it = {{0, usec}, {0, usec}};
    g_usec = usec;
    PF_CHECK(setitimer(ITIMER_PROF, &it, NULL) == 0, "setitimer prof");
    it.it_interval.tv_usec = 0;
    PF_CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer real");
}

/* The call sites (noinline, not tail calls: each its own backtrace; the
 * asm names the site, so that no two are folded into one). */
#define SITE(name, call)                                                                           \
    __attribute__((noinline)) static void *name(size_t n)                                          \
    {                                                                                              \
        void *r = call;                                                                            \
        __asm__ volatile("# " #name ::: "memory");                                                 \
        return r;                                                                                  \
    }
SITE(early_alloc, malloc(n))
SITE(early_calloc, calloc(1, n))
SITE(late_alloc, malloc(n))
SITE(handoff_alloc, malloc(n))

static void put(void **slot, void *p, size_t n)
{
    PF_CHECK(p, "allocation of %zu bytes failed", n);
    ((char *)p)[0] = ((char *)p)[n - 1] = 1;
    g_main.allocs++;
    g_main.bytes += n;
    if (*slot) {
        free(*slot);
        g_main.frees++;
    }
    *slot = p;
}

static void run(long steps)
{
    void *ring[RING] = {0};
    uint64_t r = 1;
    for (long i = 0; i < steps; i++) {
        r = xorshift(r);
        size_t n = 16 + (size_t)(r & 1023);
        void *p;
        if (i >= steps - steps / 4) {
            p = late_alloc(n);
            g_late.allocs++;
            g_late.bytes += n;
        } else if (r & 0x10000)
            p = early_calloc(n);
        else
            p = early_alloc(n);
        put(&ring[(r >> 20) % RING], p, n);
        if (i % 64 == 0 && !g_handoff) { /* for a handler's realloc */
            void *h = handoff_alloc(HANDOFF_SIZE);
            PF_CHECK(h, "handoff");
            g_main.allocs++;
            g_main.bytes += HANDOFF_SIZE;
            g_handoff = h;
        }
    }
    for (int i = 0; i < RING; i++)
        if (ring[i]) {
            free(ring[i]);
            g_main.frees++;
        }
}

static void say(const char *s)
{
    PF_CHECK(write(1, s, strlen(s)) == (ssize_t)strlen(s), "write");
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 400000;
    long usec = argc > 2 ? atol(argv[2]) : 50;
    g_real_setspecific =
        (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    PF_CHECK(g_real_setspecific, "dlsym pthread_setspecific");
    pf_block_timer_signals(1);
    pf_install_timer_handler(SIGPROF, on_signal);
    pf_install_timer_handler(SIGALRM, on_signal);
    pthread_t th;
    PF_CHECK(pipe(g_go) == 0 && pipe(g_ack) == 0, "pipe");
    PF_CHECK(pthread_create(&th, NULL, first_hook_thread, NULL) == 0, "pthread_create");
    /* From "ready" on, no stdio (its buffers would be allocations the
     * program does not count): write and read. */
    char line[128];
    snprintf(line, sizeof line, "ready %d\n", (int)getpid());
    say(line);
    char c;
    PF_CHECK(read(0, &c, 1) == 1, "no go line");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char a;
    PF_CHECK(write(g_go[1], "g", 1) == 1 && read(g_ack[0], &a, 1) == 1, "first_hook_thread");
    set_timers(usec);
    pf_block_timer_signals(0);
    run(steps);
    pf_block_timer_signals(1); /* a signal pending now stays pending */
    set_timers(0);
    if (g_handoff) { /* signals blocked: no handler takes it now */
        free(g_handoff);
        g_handoff = NULL;
        g_main.frees++;
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t allocs = g_main.allocs + g_handler.allocs + g_thread.allocs,
             bytes = g_main.bytes + g_handler.bytes + g_thread.bytes,
             frees = g_main.frees + g_handler.frees + g_thread.frees;
    snprintf(line, sizeof line, "done %llu %llu %llu %llu %llu %llu\n", (unsigned long long)allocs,
             (unsigned long long)bytes, (unsigned long long)frees, (unsigned long long)g_signals,
             (unsigned long long)g_late.allocs, (unsigned long long)g_late.bytes);
    say(line);
    snprintf(line, sizeof line, "loop %.3f s, %s\n",
             (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
             g_raised_in_setspecific ? "a handler ran inside memtop's pthread_setspecific"
                                     : "memtop called no pthread_setspecific in the new thread");
    PF_CHECK(write(2, line, strlen(line)) > 0, "write");
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
