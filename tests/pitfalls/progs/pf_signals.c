/* pf_signals.c -- pitfall 3: signal handlers that allocate.
 *
 * SIGALRM and SIGPROF fire at about 1 kHz (setitimer) while the main thread
 * and a worker loop on malloc/free/realloc, so a handler often interrupts
 * an allocation hook on its own thread.  The handlers call malloc and free
 * (SIGALRM: 1003 bytes, SIGPROF: 1013 bytes).
 *
 * glibc's malloc is not async-signal-safe: a handler that needs an arena
 * lock the interrupted malloc holds deadlocks even without memtop.  So the
 * program stays inside what glibc survives: the loops use blocks larger
 * than the tcache limit (>= 1100 bytes), the handlers use tcache-sized
 * blocks whose per-thread bins are primed before signals are unblocked,
 * signals are blocked again before a thread exits (glibc flushes the
 * tcache then), and the two handlers block each other.  Plainly it never deadlocks;
 * under the preload, any hang is memtop's.  argv[1]: seconds (default 2).
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_signal.h"
#include "pf_churn.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

enum { ALRM_SIZE = 1003, PROF_SIZE = 1013, LOOP_MIN = 1100, PRIME = 4 };

static atomic_long g_alrm, g_prof;
static atomic_int g_stop;

static void alloc_free(size_t n)
{
    char *p = malloc(n);
    if (!p)
        _exit(98);
    p[0] = p[n - 1] = 1;
    free(pf_escape(p));
}

static void on_alrm(int sig)
{
    (void)sig;
    alloc_free(ALRM_SIZE);
    atomic_fetch_add(&g_alrm, 1);
}

static void on_prof(int sig)
{
    (void)sig;
    alloc_free(PROF_SIZE);
    atomic_fetch_add(&g_prof, 1);
}

/* Fills this thread's tcache bins for the handlers' sizes. */
static void prime_tcache(void)
{
    void *a[PRIME], *b[PRIME];
    for (int i = 0; i < PRIME; i++) {
        a[i] = malloc(ALRM_SIZE);
        b[i] = malloc(PROF_SIZE);
    }
    for (int i = 0; i < PRIME; i++) {
        free(a[i]);
        free(b[i]);
    }
}

static void *worker(void *arg)
{
    prime_tcache();
    pf_block_timer_signals(0);
    void *ret = pf_churn_thread(arg);
    pf_block_timer_signals(1); /* thread exit flushes the tcache under the arena lock */
    return ret;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_timers(long usec)
{
    struct itimerval it = {{0, usec}, {0, usec}};
    PF_CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer real");
    PF_CHECK(setitimer(ITIMER_PROF, &it, NULL) == 0, "setitimer prof");
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    pf_block_timer_signals(1);
    pf_install_timer_handler(SIGALRM, on_alrm);
    pf_install_timer_handler(SIGPROF, on_prof);
    pthread_t t;
    pf_churn_arg arg = {.stop = &g_stop, .tag = 2, .release = 1, .min_size = LOOP_MIN};
    PF_CHECK(pthread_create(&t, NULL, worker, &arg) == 0, "pthread_create");
    pf_churn c;
    pf_churn_init(&c, 1);
    c.min_size = LOOP_MIN;
    prime_tcache();
    set_timers(1000);
    pf_block_timer_signals(0);
    double end = now_s() + secs;
    while (now_s() < end)
        for (int i = 0; i < 100; i++)
            pf_churn_step(&c);
    atomic_store(&g_stop, 1);
    PF_CHECK(pthread_join(t, NULL) == 0, "join");
    pf_block_timer_signals(1);
    set_timers(0);
    pf_churn_release(&c);
    fprintf(stderr, "handlers: SIGALRM %ld, SIGPROF %ld\n", atomic_load(&g_alrm),
            atomic_load(&g_prof));
    PF_CHECK(atomic_load(&g_alrm) > 10 && atomic_load(&g_prof) > 10, "timers did not fire");
    printf("signals ok\n");
    return 0;
}
