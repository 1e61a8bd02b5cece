/* shm_guard.c -- the SIGBUS guard around every access to a mapped segment
 * (see shm_guard.h, which also says why a handler rather than pread).
 *
 * Global state, which a signal handler cannot do without: the action that
 * was installed before ours (two copies, so that the handler never reads
 * one that is being written), whether ours is installed, and the mutex
 * that serializes installing.  Per thread: the innermost armed guard. */
#include "shm_guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

typedef struct guard {
    sigjmp_buf jb;
    uintptr_t lo;
    uint64_t bytes;
    struct guard *outer;
} guard;

/* initial-exec: reading it in a signal handler must not allocate */
static __thread guard *armed __attribute__((tls_model("initial-exec")));
static struct sigaction prev_action[2];
static int prev_at; /* which prev_action is current (atomic) */
static int installed;
static pthread_mutex_t install_mu = PTHREAD_MUTEX_INITIALIZER;

static void set_default(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* A signal that is not ours: what would have happened without the guard. */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    const struct sigaction *p = &prev_action[__atomic_load_n(&prev_at, __ATOMIC_ACQUIRE)];
    bool sent = si->si_code <= 0; /* kill, raise, sigqueue: no fault to re-execute */
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        if (p->sa_flags & SA_RESETHAND)
            set_default(sig);
        if (p->sa_flags & SA_SIGINFO)
            p->sa_sigaction(sig, si, uc);
        else
            p->sa_handler(sig);
    } else if (p->sa_handler == SIG_DFL || !sent) {
        /* A fault is executed again on return and now kills with a core
         * dump (the kernel never lets a fault be ignored); a sent signal
         * is raised again, pending until the handler returns. */
        set_default(sig);
        if (sent)
            raise(sig);
    }
    errno = saved_errno;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    if (si->si_code > 0) { /* a fault, with the address that faulted */
        uintptr_t a = (uintptr_t)si->si_addr;
        for (guard *g = armed; g; g = g->outer) {
            if (a - g->lo < g->bytes) {
                armed = g->outer;
                siglongjmp(g->jb, 1);
            }
        }
    }
    pass_on(sig, si, uc);
}

static bool is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_sigbus;
}

void mt_guard_install(void)
{
    pthread_mutex_lock(&install_mu);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) == 0 && !is_ours(&cur)) {
        int next = !__atomic_load_n(&prev_at, __ATOMIC_RELAXED);
        prev_action[next] = cur;
        __atomic_store_n(&prev_at, next, __ATOMIC_RELEASE);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
    }
    __atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&install_mu);
}

/* The jump left the handler without returning: SIGBUS, blocked while it
 * ran, is still blocked (sigsetjmp saved no mask, to stay off the fast
 * path's system calls); it was not blocked before, or the fault would
 * have killed us. */
static void unblock_sigbus(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

void mt_guard_thread_mask(sigset_t *set)
{
    sigfillset(set);
    sigdelset(set, SIGBUS);
    sigdelset(set, SIGSEGV);
    sigdelset(set, SIGFPE);
    sigdelset(set, SIGILL);
}

mt_errc mt_guard_run(const void *base, uint64_t bytes, mt_guard_fn *fn, void *ctx, mt_err *err)
{
    if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
        mt_guard_install();
    guard g;
    g.lo = (uintptr_t)base;
    g.bytes = bytes;
    g.outer = armed;
    if (sigsetjmp(g.jb, 0)) {
        unblock_sigbus();
        return mt_err_set(err, MT_E_TRUNCATED,
                          "truncated segment: the file shrank while being read");
    }
    armed = &g;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* armed before the first access */
    fn(ctx);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* disarmed after the last one */
    armed = g.outer;
    return MT_OK;
}

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t n;
} copy_job;

static void do_copy(void *ctx)
{
    copy_job *j = ctx;
    memcpy(j->dst, j->src, j->n);
}

mt_errc mt_guard_copy(const void *base, uint64_t bytes, void *dst, const void *src, size_t n,
                      mt_err *err)
{
    copy_job j = {dst, src, n};
    return mt_guard_run(base, bytes, do_copy, &j, err);
}

typedef struct load_job {
    const void *p;
    uint64_t v;
    bool wide;
} load_job;

static void do_load(void *ctx)
{
    load_job *j = ctx;
    if (j->wide)
        j->v = __atomic_load_n((const uint64_t *)j->p, __ATOMIC_ACQUIRE);
    else
        j->v = __atomic_load_n((const uint32_t *)j->p, __ATOMIC_ACQUIRE);
}

mt_errc mt_guard_load64(const void *base, uint64_t bytes, const uint64_t *p, uint64_t *out,
                        mt_err *err)
{
    load_job j = {p, 0, true};
    mt_errc rc = mt_guard_run(base, bytes, do_load, &j, err);
    *out = rc ? 0 : j.v;
    return rc;
}

mt_errc mt_guard_load32(const void *base, uint64_t bytes, const uint32_t *p, uint32_t *out,
                        mt_err *err)
{
    load_job j = {p, 0, false};
    mt_errc rc = mt_guard_run(base, bytes, do_load, &j, err);
    *out = rc ? 0 : (uint32_t)j.v;
    return rc;
}
