/* alloc_stop.c -- a stop-the-world for rewriting code (alloc_patch.c).
 *
 * Why: an allocator loaded with dlopen after start, or found while the
 * program already has threads, can only be redirected if no thread is
 * inside the bytes being rewritten (docs/allocators.md, "When").  So every
 * other thread is sent a real-time signal (tgkill) whose handler records
 * where the thread was (its ucontext's pc and sp) and parks it on a futex
 * until released.  Threads blocked in a system call are interrupted
 * (SA_RESTART restarts the call afterwards).  The stopper then checks,
 * for each parked thread, its pc and the first STACK_SCAN bytes of its
 * stack (read through /proc, which cannot fault: mt_os_read_self) against the
 * ranges about to be rewritten: a return address there, or the saved pc
 * of a signal handler the thread was running, would resume in the middle
 * of the new jump.  A thread that blocks the signal (its SigBlk in /proc)
 * is not sent it until it unblocks it: a signal left pending would reach
 * a program that takes its signals with sigwait or a signalfd.  A thread
 * that does not arrive within the timeout (it keeps the signal blocked, a
 * debugger stopped it) makes the stop fail: everyone is released and
 * nothing is rewritten.
 *
 * The signal: the highest real-time signal whose disposition is SIG_DFL
 * when first needed; its handler stays installed for good (a signal still
 * pending on a thread that blocked it would otherwise kill the process
 * when it is finally delivered) and returns at once outside a stop.  If
 * the program has since taken it over, the next stop looks for another.
 *
 * The handler is async-signal-safe: atomics, gettid, futex; errno kept.
 * Generations: g_stop.gen is odd while a stop holds; a handler counts
 * itself in `inside` (seq_cst) before reading gen (seq_cst), and a new stop
 * starts only once `inside` is back to 0, so a handler late from an old
 * stop never writes into a new one's arrivals (CONCURRENCY.md).
 */
#define _GNU_SOURCE
#include "alloc_stop.h"
#include "core_os_memory.h"
#include "core_procinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define STOP_MAX 4096               /* threads a stop can hold */
#define STOP_TIMEOUT_NS 200000000ll /* for every thread to arrive */
#define STACK_SCAN 8192             /* bytes of each stack checked */
#define OWN_MAX 4                   /* memtop's own threads (publisher, writer, libunwind probe) */

typedef struct arrival {
    _Atomic int tid; /* 0 until the slot is filled (release) */
    _Atomic uint64_t pc, sp;
} arrival;

/* The words every exec and every thread start of memtop's touch come
 * first, on one page: a shell's fork child that execs faulted on two. */
static struct {
    _Atomic uint32_t gen;      /* odd: stopped threads stay parked */
    _Atomic uint32_t inside;   /* handlers running */
    _Atomic uint32_t narrived; /* slots of arr taken in this stop */
    _Atomic int sig;           /* the signal whose handler is ours; 0: none yet */
    /* (pid << 32) | threads of process pid inside an exec call (between
     * mt_world_exec_begin and a failed exec's mt_world_exec_end) */
    _Atomic uint64_t exec_gate;
    /* (pid << 32) | tid of memtop's own threads, each written by the thread
     * itself (mt_world_exempt); 0 or another pid's (a fork parent's): free */
    _Atomic uint64_t own[OWN_MAX];
    uint32_t nsent;
    int pid; /* the stopper's own: the process of the last stop (0: none yet) */
    arrival arr[STOP_MAX];
    int sent[STOP_MAX]; /* the stopper's own: threads signalled in this stop */
} g_stop;

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void on_stop(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    int saved = errno;
    atomic_fetch_add_explicit(&g_stop.inside, 1, memory_order_seq_cst);
    uint32_t g = atomic_load_explicit(&g_stop.gen, memory_order_seq_cst);
    if (g & 1) {
        const ucontext_t *uc = ucv;
        uint32_t i = atomic_fetch_add_explicit(&g_stop.narrived, 1, memory_order_relaxed);
        if (i < STOP_MAX) {
            arrival *a = &g_stop.arr[i];
            atomic_store_explicit(&a->pc, (uint64_t)uc->uc_mcontext.gregs[REG_RIP],
                                  memory_order_relaxed);
            atomic_store_explicit(&a->sp, (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
                                  memory_order_relaxed);
            atomic_store_explicit(&a->tid, (int)syscall(SYS_gettid), memory_order_release);
        }
        while (atomic_load_explicit(&g_stop.gen, memory_order_acquire) == g)
            futex(&g_stop.gen, FUTEX_WAIT_PRIVATE, g);
    }
    atomic_fetch_sub_explicit(&g_stop.inside, 1, memory_order_release);
    errno = saved;
}

/* Our signal: still ours, or the highest free real-time one, installed. */
static int stop_signal(void)
{
    struct sigaction sa;
    int s = atomic_load_explicit(&g_stop.sig, memory_order_relaxed);
    if (s && sigaction(s, NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) &&
        sa.sa_sigaction == on_stop)
        return s;
    for (s = SIGRTMAX; s > SIGRTMIN; s--) {
        if (sigaction(s, NULL, &sa) != 0 || sa.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_stop;
        /* SA_ONSTACK: a thread with an alternate signal stack takes the
         * signal there.  The kernel pushes a signal frame (3.4 KiB with
         * AVX-512's state) where the handler runs; a thread with little
         * stack left (a coroutine's, a Go goroutine's: Go requires
         * SA_ONSTACK of every handler) would otherwise die of SIGSEGV
         * for a signal it never asked for.  The check is unchanged: it
         * reads the stack of the interrupted code from the ucontext's
         * sp, never the handler's own, and a frame of a handler the
         * thread was running lies above that sp on whichever stack that
         * handler ran (the alternate one included).  A thread without
         * an alternate stack, or already on it, is as before. */
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigfillset(&sa.sa_mask); /* nothing else runs on a parked thread */
        if (sigaction(s, &sa, NULL) == 0) {
            atomic_store_explicit(&g_stop.sig, s, memory_order_relaxed);
            return s;
        }
    }
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void nap(void)
{
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    nanosleep(&ts, NULL);
}

/* The start of /proc/self/task/<tid>/<file>, NUL-terminated in buf;
 * false if the thread is gone (system calls only). */
static bool task_read(int tid, const char *file, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
    return mt_proc_read_file(path, buf, cap) >= 0;
}

static uint64_t own_key(int tid)
{
    return (uint64_t)getpid() << 32 | (uint32_t)tid;
}

/* memtop's own threads: they block every signal and never run an
 * allocator's entry points (they call it only through memtop's hooks,
 * marked inside memtop, which reach the next allocator found at start).
 * Known by their thread ids, which they registered themselves, not by
 * their names: a program thread may name itself anything (prctl), and
 * would then run on unstopped.  Relaxed loads: a thread not registered
 * yet either has not blocked the signals yet (it is stopped like any
 * other) or blocks them (the stop lists the threads again until it is
 * seen; CONCURRENCY.md). */
static bool is_own_thread(int tid)
{
    uint64_t key = own_key(tid);
    for (int i = 0; i < OWN_MAX; i++)
        if (atomic_load_explicit(&g_stop.own[i], memory_order_relaxed) == key)
            return true;
    return false;
}

void mt_world_exempt(bool on)
{
    int pid = getpid();
    uint64_t me = own_key((int)syscall(SYS_gettid));
    for (int i = 0; i < OWN_MAX; i++) {
        uint64_t v = atomic_load_explicit(&g_stop.own[i], memory_order_relaxed);
        bool take = on ? v == 0 || (v >> 32) != (uint64_t)pid : v == me;
        if (take &&
            atomic_compare_exchange_strong_explicit(&g_stop.own[i], &v, on ? me : 0,
                                                    memory_order_relaxed, memory_order_relaxed))
            return;
    }
}

static bool was_sent(int tid)
{
    for (uint32_t i = 0; i < g_stop.nsent; i++)
        if (g_stop.sent[i] == tid)
            return true;
    return false;
}

enum { TASK_GONE, TASK_BLOCKS, TASK_OK };

/* Thread tid as its /proc status shows it: TASK_GONE if it has exited (no
 * status, or a zombie: a main thread that ended with pthread_exit stays
 * one while the others run, and never runs a handler again), TASK_BLOCKS
 * if it blocks sig (sig > 0) now (its SigBlk), else TASK_OK.  A thread
 * that blocks the signal is not sent it: it would stay pending, and a
 * program that blocks signals to take them with sigwait, sigwaitinfo or
 * a signalfd would receive it as its own. */
static int task_state(int tid, int sig)
{
    char buf[4096];
    if (!task_read(tid, "status", buf, sizeof buf))
        return TASK_GONE;
    const char *st = strstr(buf, "\nState:");
    if (st) {
        for (st += 7; *st == ' ' || *st == '\t'; st++) {
        }
        if (*st == 'Z' || *st == 'X')
            return TASK_GONE;
    }
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p || sig <= 0)
        return TASK_OK;
    uint64_t mask = 0;
    for (p += 9; *p == ' ' || *p == '\t'; p++) {
    }
    for (;; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            break;
        mask = mask << 4 | (uint64_t)d;
    }
    return (mask >> (sig - 1)) & 1 ? TASK_BLOCKS : TASK_OK;
}

/* Signals every thread of /proc/self/task not signalled yet, but those
 * that block the signal (*waiting set: listed again later); how many new
 * ones, or -1 (why set) if they do not fit or the list cannot be read. */
static int signal_new(int sig, bool *waiting, char *why, size_t cap)
{
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "cannot list the threads");
        return -1;
    }
    int self = (int)syscall(SYS_gettid), pid = getpid(), added = 0;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            int tid = 0;
            for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            if (tid <= 0 || tid == self || was_sent(tid) || is_own_thread(tid))
                continue;
            int st = task_state(tid, sig);
            if (st == TASK_GONE)
                continue;
            if (st == TASK_BLOCKS) {
                *waiting = true; /* not yet: it may unblock it soon */
                continue;
            }
            if (g_stop.nsent == STOP_MAX) {
                close(fd);
                snprintf(why, cap, "more than %d threads", STOP_MAX);
                return -1;
            }
            if (syscall(SYS_tgkill, pid, tid, sig) == 0) {
                g_stop.sent[g_stop.nsent++] = tid;
                added++;
            }
        }
    }
    close(fd);
    return added;
}

static bool arrived(int tid)
{
    uint32_t n = atomic_load_explicit(&g_stop.narrived, memory_order_relaxed);
    for (uint32_t i = 0; i < n && i < STOP_MAX; i++)
        if (atomic_load_explicit(&g_stop.arr[i].tid, memory_order_acquire) == tid)
            return true;
    return false;
}

/* Whether thread tid still runs (one that exited never arrives). */
static bool alive(int tid)
{
    return task_state(tid, 0) != TASK_GONE;
}

/* Waits until every thread signalled has arrived (or exited); false on
 * timeout. */
static bool wait_all(int64_t deadline)
{
    for (;;) {
        bool all = true;
        for (uint32_t i = 0; i < g_stop.nsent && all; i++)
            all = arrived(g_stop.sent[i]) || !alive(g_stop.sent[i]);
        if (all)
            return true;
        if (now_ns() > deadline)
            return false;
        nap();
    }
}

static bool in_ranges(uint64_t a, const mt_stop_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a > r[i].lo && a < r[i].hi)
            return true;
    return false;
}

/* Is a parked thread at, or about to return into, one of the ranges?
 * 1 yes, 0 no, -1 its stack cannot be read (no /proc in this mount
 * namespace, for one: mt_os_read_self): not known to be clear. */
static int thread_inside(const arrival *a, const mt_stop_range *r, size_t n)
{
    if (in_ranges(atomic_load_explicit(&a->pc, memory_order_relaxed), r, n))
        return 1;
    static uint64_t words[STACK_SCAN / 8]; /* the stopper's, under the scan's lock */
    long got = mt_os_read_self(words, (uintptr_t)atomic_load_explicit(&a->sp, memory_order_relaxed),
                               sizeof words);
    if (got < 8)
        return -1; /* sp is in its stack: at least one word up to the end of its page */
    for (ssize_t i = 0; i < got / 8; i++)
        if (in_ranges(words[i], r, n))
            return 1;
    return 0;
}

/* In a fork child, the state of the parent's last stop: a fork whose
 * memory was copied in the middle of a stop (the forking thread was in
 * clone when the stop began) leaves `gen` odd and `inside` counting the
 * parent's parked threads, which never leave here: every stop would wait
 * for them, and a handler would park while no stop holds.  The child has
 * only the forking thread, which runs no handler of ours (a child starts
 * with no signal pending): start afresh. */
static void forget_parent_stop(void)
{
    int pid = getpid();
    if (g_stop.pid && g_stop.pid != pid) {
        atomic_store_explicit(&g_stop.inside, 0, memory_order_relaxed);
        uint32_t g = atomic_load_explicit(&g_stop.gen, memory_order_relaxed);
        atomic_store_explicit(&g_stop.gen, g + (g & 1), memory_order_relaxed);
    }
    g_stop.pid = pid;
}

/* Whether a thread of this process is inside an exec call: seq_cst, after
 * `gen` made odd (seq_cst), against mt_world_exec_begin's raise of the gate
 * then load of `gen`: either this stop sees the thread and signals no one,
 * or the thread sees the stop and waits for its end before exec. */
static bool in_exec(void)
{
    uint64_t g = atomic_load_explicit(&g_stop.exec_gate, memory_order_seq_cst);
    return (g >> 32) == (uint64_t)getpid() && (uint32_t)g != 0;
}

bool mt_world_stop(const mt_stop_range *r, size_t n, char *why, size_t cap)
{
    forget_parent_stop();
    int sig = stop_signal();
    if (!sig) {
        snprintf(why, cap, "no free real-time signal to stop the threads");
        return false;
    }
    int64_t deadline = now_ns() + STOP_TIMEOUT_NS;
    while (atomic_load_explicit(&g_stop.inside, memory_order_acquire) != 0) {
        if (now_ns() > deadline) {
            snprintf(why, cap, "threads of an earlier stop are still leaving");
            return false;
        }
        nap();
    }
    uint32_t old = atomic_load_explicit(&g_stop.narrived, memory_order_relaxed);
    for (uint32_t i = 0; i < old && i < STOP_MAX; i++)
        atomic_store_explicit(&g_stop.arr[i].tid, 0, memory_order_relaxed);
    atomic_store_explicit(&g_stop.narrived, 0, memory_order_relaxed);
    g_stop.nsent = 0;
    atomic_fetch_add_explicit(&g_stop.gen, 1, memory_order_seq_cst); /* odd: stop */
    if (in_exec()) { /* signalled now, it would take the signal into the new image */
        mt_world_resume();
        snprintf(why, cap, "a thread is inside an exec call");
        return false;
    }
    int added;
    bool waiting;
    do { /* until a listing finds no thread not yet stopped (one may have been starting) */
        waiting = false;
        added = signal_new(sig, &waiting, why, cap);
        if (added < 0) {
            mt_world_resume();
            return false;
        }
        if (!wait_all(deadline)) {
            mt_world_resume();
            snprintf(why, cap, "a thread did not stop (it blocks signal %d, or is traced)", sig);
            return false;
        }
        if (waiting && now_ns() > deadline) {
            mt_world_resume();
            snprintf(why, cap, "a thread did not stop (it blocks signal %d)", sig);
            return false;
        }
        if (waiting)
            nap();
    } while (added > 0 || waiting);
    uint32_t got = atomic_load_explicit(&g_stop.narrived, memory_order_relaxed);
    for (uint32_t i = 0; i < got && i < STOP_MAX; i++) {
        int in = atomic_load_explicit(&g_stop.arr[i].tid, memory_order_acquire)
                     ? thread_inside(&g_stop.arr[i], r, n)
                     : 0;
        if (in) {
            mt_world_resume();
            snprintf(why, cap, "%s",
                     in > 0 ? "a thread is inside the bytes to rewrite"
                            : "cannot read a stopped thread's stack (no /proc/thread-self/mem)");
            return false;
        }
    }
    return true;
}

void mt_world_resume(void)
{
    atomic_fetch_add_explicit(&g_stop.gen, 1, memory_order_seq_cst); /* even: go */
    futex(&g_stop.gen, FUTEX_WAKE_PRIVATE, INT_MAX);
}

void mt_world_exec_begin(void)
{
    uint64_t pid = (uint64_t)getpid();
    uint64_t old = atomic_load_explicit(&g_stop.exec_gate, memory_order_relaxed), raised;
    do /* a count of another pid is stale: a vfork child's, or a fork parent's */
        raised = (old >> 32) == pid ? old + 1 : (pid << 32 | 1);
    while (!atomic_compare_exchange_weak_explicit(&g_stop.exec_gate, &old, raised,
                                                  memory_order_seq_cst, memory_order_relaxed));
    /* A stop that began before it saw the gate: it ends (this thread parked
     * by it meanwhile, or refused) before exec. */
    while (atomic_load_explicit(&g_stop.gen, memory_order_seq_cst) & 1)
        nap();
    mt_world_drop_pending();
}

void mt_world_exec_end(void)
{
    uint64_t pid = (uint64_t)getpid();
    uint64_t old = atomic_load_explicit(&g_stop.exec_gate, memory_order_relaxed);
    while ((old >> 32) == pid && (uint32_t)old != 0 &&
           !atomic_compare_exchange_weak_explicit(&g_stop.exec_gate, &old, old - 1,
                                                  memory_order_release, memory_order_relaxed)) {
    }
}

void mt_world_drop_pending(void)
{
    int sig = atomic_load_explicit(&g_stop.sig, memory_order_relaxed);
    sigset_t pending, only;
    if (!sig || sigpending(&pending) != 0 || !sigismember(&pending, sig))
        return;
    sigemptyset(&only);
    sigaddset(&only, sig);
    struct timespec zero = {0, 0};
    int saved = errno;
    while (sigtimedwait(&only, NULL, &zero) == sig) {
    } /* RT signals queue: each one sent */
    errno = saved;
}
