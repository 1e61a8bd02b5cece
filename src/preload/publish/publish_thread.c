/* publish_thread.c -- the background thread that publishes snapshots.
 *
 * It creates the segment, then every MEMTOP_INTERVAL_MS publishes a
 * snapshot, and every 20 ms answers the control channel.  It blocks every
 * signal (handlers belong to the program's threads) and runs with
 * mt_tls_in_hook set, so its own allocations (if libc makes any) are never
 * tracked.  The publish lock serialises publishing against fork (prepare
 * takes it) and against the final publish at exit.  Nothing a viewer
 * writes into the control area is trusted: the command is checked and
 * unknown commands are answered with an error.
 * Recording commands are handed to record_control.c, and the recording
 * status is copied into the header at every poll, after the lease of a
 * recording a viewer started is checked (mt_rec_lease_check).  Every poll also looks
 * for newly loaded allocators (alloc_scan.c), published with each snapshot.
 *
 * Short processes (bench/proc_start.sh, docs/performance.md "Process start
 * and exit"): the thread starts with tracking but creates the segment only
 * once the process has lived MEMTOP_START_MS (default 100 ms; a fork
 * child counts from its first allocation), and it sleeps on a futex, so
 * that exit and exec wake it and wait for it to end (pthread_join): a
 * short process then never creates a segment, and its exit does not wait
 * for the kernel to schedule a sleeping thread just to kill it (on a
 * loaded machine, a time slice: milliseconds).  Tracking itself starts at
 * the first allocation as before, so when the segment appears every count
 * is exact since the start.  A process that ends before its segment exists
 * publishes nothing: no viewer can have shown a number for it (a recording
 * asked for with MEMTOP_RECORD still has every event).  The segment is
 * created at once, synchronously as before, when MEMTOP_START_MS=0, in the
 * process MEMTOP_KEEP_PID names (memtop -- PROG watches it from its start
 * and wants its final state), and when this pid's segment exists already
 * (our pre-exec image published it: a viewer following the pid sees the
 * new image at once).
 *
 * A thread still in that first wait has done nothing and would do nothing
 * but create the segment: exit and exec do not wake and join it, they
 * hold it (phase PH_HELD) and let the kernel end it with the process or
 * the old image (exit_group and execve kill the other threads; a woken
 * thread would also run glibc's thread exit, madvise of its stack
 * included).  Waking and joining a thread cost a short process ~30 us of
 * CPU and two context switches, in each of a shell's fork children at its
 * exec and again in the exec'd program at its exit (docs/performance.md,
 * "Sixth round").  A failed exec lets a held thread go on.
 *
 * Threads may exec (and exit) at the same time: hook_exec.c counts the
 * threads inside an exec call and calls mt_publisher_exec_prepare for the
 * first of them (it holds or ends the thread and marks the segment) and
 * mt_publisher_exec_undo for the last one to come back from a failed exec
 * (it lets the thread go, or restarts it and takes the marks back): while
 * any thread may still be inside a successful exec, no publisher runs to
 * create a segment in the image being replaced.  The thread's life lock
 * (g_pub.life) makes exit, the exec's preparation and its undo take their
 * turns, and no undo lets go or restarts the thread after an exit.
 */
#define _GNU_SOURCE
#include "publish_thread.h"

#include "alloc_scan.h"
#include "alloc_stats.h"
#include "alloc_stop.h"
#include "core_clock.h"
#include "core_log.h"
#include "record.h"
#include "publish_shm.h"
#include "publish_snapshot.h"
#include "publish_status.h"
#include "core_spinlock.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "hook_exec.h"
#include "unwind_libunwind.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 20000000ull
/* How long exit or exec waits for the thread to end (it may be inside a
 * publish, or wait for a loader lock the exiting thread holds). */
#define JOIN_WAIT_NS 200000000ull

/* g_pub.phase, the thread's first wait (see the top of the file). */
enum { PH_WAIT, PH_RUN, PH_HELD };

typedef struct {
    mt_spinlock lock;
    /* Exit, an exec's preparation and its undo, one at a time (outside
     * `lock`, inside hook_exec.c's exec lock): they end, hold, let go and
     * restart the thread.  Not a fork lock: the child resets it (its
     * holder is not in the child). */
    mt_spinlock life;
    bool exiting; /* the final publish began: no failed exec restarts or lets go (under life) */
    _Atomic uint32_t stop; /* 1: end the thread; a futex word (wait_stop) */
    /* PH_WAIT: the thread is in its first wait; PH_RUN: past it (or it has
     * no first wait); PH_HELD: an exit or exec holds it there (a futex
     * word: the last of the failed execs stores PH_WAIT and wakes it). */
    _Atomic uint32_t phase;
    bool exec_held; /* the thread was held for the execs (let go when all fail; under life) */
    bool final_done;
    bool fork_child;   /* the segment to create is a fork child's */
    bool exec_stopped; /* the thread was ended for the execs (restarted when all fail) */
    bool running;      /* `thread` runs and is to be joined */
    void *stack;       /* the thread's stack (thread_stack); NULL: none yet */
    int pid;           /* the process the publisher belongs to (not a vfork child) */
    pthread_t thread;
    /* pthread_timedjoin_np, by address: loaded from the GOT, bound when
     * libmemtop.so is, not at the first call.  A fork child that execs
     * joins its thread once and never again, and its parent never joined
     * one: through the PLT, every such child would bind it lazily itself
     * (the symbol lookup, and faults on the loader's pages the child has
     * not touched yet). */
    int (*join)(pthread_t, void **, const struct timespec *);
    mt_shm_writer w;
    mt_snapshot_state *snap;
    /* snap's published definitions, modules and history are a fork
     * parent's: reset them before this process's first segment
     * (create_segment), not in fork_child, where the writes cost every fork
     * child that execs two copy-on-write faults (snap's page and the
     * modules' page). */
    bool snap_parents;
} mt_publisher;

static mt_publisher g_pub;

static void answer(mt_shm_control *c, uint64_t req, int status, const char *msg)
{
    c->status = status;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    __atomic_store_n(&c->resp_seq, req, __ATOMIC_RELEASE);
}

/* True if we hold a segment and it is this process's (a child forked from
 * a signal handler that interrupted a hook skipped the atfork reset and
 * still maps its parent's segment: it must never write it). */
static bool own_segment(void)
{
    return g_pub.w.base && g_pub.w.p.pid == (int)getpid();
}

static void publish_locked(void)
{
    if (own_segment() && g_pub.snap) {
        mt_snapshot_publish(g_pub.snap, &g_pub.w);
        mt_rec_publish_status(g_pub.w.hdr);
        mt_alloc_publish(g_pub.w.hdr);
    }
}

static void serve_control(void)
{
    if (!own_segment())
        return;
    mt_rec_lease_check(&g_pub.w.hdr->rec_lease_beat); /* a viewer gone: stop what it started */
    mt_rec_publish_status(g_pub.w.hdr); /* a recording's size grows between publishes */
    mt_shm_control *c = &g_pub.w.hdr->control;
    uint64_t req = __atomic_load_n(&c->req_seq, __ATOMIC_ACQUIRE);
    if (req == __atomic_load_n(&c->resp_seq, __ATOMIC_RELAXED))
        return;
    uint32_t cmd = __atomic_load_n(&c->cmd, __ATOMIC_RELAXED);
    switch (cmd) {
    case MT_CMD_PING:
        answer(c, req, MT_CTRL_OK, "pong");
        break;
    case MT_CMD_PUBLISH_NOW:
        mt_alloc_stats_refresh();
        mt_spin_lock(&g_pub.lock);
        publish_locked();
        mt_spin_unlock(&g_pub.lock);
        answer(c, req, MT_CTRL_OK, "published");
        break;
    case MT_CMD_RECORD_START:
    case MT_CMD_RECORD_START_LEASED:
    case MT_CMD_RECORD_STOP: {
        char msg[MT_CTRL_MSG_MAX];
        const uint64_t *beat =
            cmd == MT_CMD_RECORD_START_LEASED ? &g_pub.w.hdr->rec_lease_beat : NULL;
        int st = cmd == MT_CMD_RECORD_STOP ? mt_rec_cmd_stop(c->arg, msg, sizeof msg)
                                           : mt_rec_cmd_start(c->arg, beat, msg, sizeof msg);
        mt_rec_publish_status(g_pub.w.hdr);
        answer(c, req, st, msg);
        break;
    }
    default:
        answer(c, req, MT_CTRL_UNKNOWN_CMD, "unknown command");
        break;
    }
}

/* Creates and seals the segment and publishes a first snapshot: at once
 * (mt_publisher_arm) or from the thread, MEMTOP_START_MS after start. */
static bool create_segment(bool fork_child)
{
    /* The publisher's own state too, only now: a process that ends before
     * its segment exists never pays for it (its 64 KiB timeline). */
    mt_snapshot_state *snap = g_pub.snap;
    if (!snap && !(snap = mt_snapshot_state_new(mt_g.cfg.interval_ms))) {
        mt_log(MT_LOG_WARN, "cannot set up publishing (out of memory?); no segment");
        return false;
    }
    mt_alloc_stats_refresh(); /* before the lock (alloc_stats.h) */
    mt_spin_lock(&g_pub.lock);
    if (g_pub.snap_parents && g_pub.snap == snap)
        mt_snapshot_state_reset_for_child(snap); /* definitions, modules again; history */
    g_pub.snap_parents = false;
    g_pub.snap = snap; /* under the lock: publish_locked, a fork's copy */
    /* The thread's deferred creation racing the exit: whoever takes the
     * lock second sees the other (final_done, or stop stored before). */
    bool ok = !g_pub.final_done && !atomic_load_explicit(&g_pub.stop, memory_order_acquire);
    if (ok) {
        mt_status_clear(); /* a new attempt (after a failed exec) */
        ok = mt_shm_create(&g_pub.w, mt_g.cfg.shm_dir, (int)getpid());
    }
    if (ok) {
        mt_shm_header *h = g_pub.w.hdr;
        h->max_depth = mt_g.cfg.depth;
        h->publish_interval_ms = mt_g.cfg.interval_ms;
        h->temporary_ns = mt_g.cfg.temporary_ns;
        if (mt_g.cfg.sample_rate) { /* before the seal makes the header visible */
            h->sample_rate_bytes = mt_g.cfg.sample_rate;
            h->version = MT_SHM_VERSION_SAMPLED;
        }
        /* when tracking began, to the ns (times in the segment and a
         * recording count from it): time(NULL) at this moment was up to a
         * second early or MEMTOP_START_MS late */
        h->start_unix_ns = mt_tracking_start_unix_ns();
        if (fork_child)
            mt_shm_set_flag(&g_pub.w, MT_FLAG_FORK_CHILD);
        publish_locked();
        ok = mt_shm_seal(&g_pub.w);
        if (!ok)
            mt_shm_forget(&g_pub.w);
    }
    mt_spin_unlock(&g_pub.lock);
    return ok;
}

/* Sleeps up to ns, or until exit or exec asks the thread to end: then
 * returns true. */
static bool wait_stop(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    if (!atomic_load_explicit(&g_pub.stop, memory_order_acquire))
        syscall(SYS_futex, &g_pub.stop, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    return atomic_load_explicit(&g_pub.stop, memory_order_acquire);
}

/* The thread ends its first wait (acq_rel: pairs with hold_waiting), or
 * waits while an exit or exec holds it: ended with the process or image,
 * or let go by a failed exec.  False: the thread is to end. */
static bool leave_first_wait(void)
{
    for (;;) {
        uint32_t w = PH_WAIT;
        if (atomic_compare_exchange_strong_explicit(&g_pub.phase, &w, PH_RUN, memory_order_acq_rel,
                                                    memory_order_acquire))
            return true;
        syscall(SYS_futex, &g_pub.phase, FUTEX_WAIT_PRIVATE, PH_HELD, NULL, NULL, 0);
        if (atomic_load_explicit(&g_pub.stop, memory_order_acquire))
            return false;
    }
}

/* libunwind's probe (unwind_libunwind.c) runs on a thread of its own that
 * ends at once: unw_backtrace gives the thread that calls it a 256 KiB
 * frame cache, filled with empty entries, which libunwind frees only when
 * that thread ends (a key destructor).  Probed on the publisher, the cache
 * stayed for the process's life: 64 pages of every long-lived process,
 * whose page table entries each of its forks copied and each fork child's
 * exec tore down again (docs/performance.md, "Seventh round").  The probe
 * thread inherits the publisher's blocked signals and runs on a small stack
 * of memtop's own (a guard page below), unmapped once joined.  If it
 * cannot be started, the publisher probes itself, as before.  The new
 * thread's DTV is the publisher's first allocation (glibc's calloc in
 * pthread_create), which gives the publisher a glibc arena of its own:
 * one mapping more, a few pages, against the cache's 64. */
#define PROBE_STACK_BYTES (256u << 10)

static void *probe_main(void *arg)
{
    (void)arg;
    (void)mt_in_hook_set(MT_IN_OWN);
    mt_world_exempt(true); /* as the publisher (alloc_stop.h) */
    mt_libunwind_probe();
    mt_world_exempt(false);
    return NULL;
}

static void probe_libunwind(void)
{
    if (!mt_libunwind_wants_probe())
        return; /* probed by the fork parent already, or no libunwind */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = PROBE_STACK_BYTES + page;
    unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    bool created = false, joined = false;
    if (p != MAP_FAILED && mprotect(p, page, PROT_NONE) == 0) {
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setstack(&attr, p + page, PROBE_STACK_BYTES);
        created = pthread_create(&t, &attr, probe_main, NULL) == 0;
        joined = created && pthread_join(t, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    if (created && !joined)
        return; /* it probes, and may still use its stack: leave both */
    if (!created) {
        mt_log(MT_LOG_DEBUG, "no thread for libunwind's probe: the publisher probes");
        mt_libunwind_probe();
    }
    if (p != MAP_FAILED)
        munmap(p, bytes);
}

static void publisher_run(void)
{
    /* g_pub.w is ours to read: only this thread or, before it was started
     * and after it ended, its starter create the segment. */
    bool deferred = !g_pub.w.base;
    if (deferred && (wait_stop((uint64_t)mt_g.cfg.start_ms * 1000000ull) || !leave_first_wait()))
        return;
    probe_libunwind(); /* the process lives on: libunwind's fast path (unwind_libunwind.c) */
    mt_exec_prebind(); /* and may fork children that exec (hook_exec.h) */
    if (deferred && !create_segment(g_pub.fork_child))
        return;
    uint64_t interval = (uint64_t)mt_g.cfg.interval_ms * 1000000ull;
    uint64_t next = mt_now_precise_ns() + interval;
    while (!atomic_load_explicit(&g_pub.stop, memory_order_acquire)) {
        uint64_t now = mt_now_precise_ns();
        if (now >= next) {
            mt_alloc_stats_refresh(); /* before any memtop lock (alloc_stats.h) */
            mt_spin_lock(&g_pub.lock);
            if (!atomic_load_explicit(&g_pub.stop, memory_order_acquire))
                publish_locked();
            mt_spin_unlock(&g_pub.lock);
            next += interval;
            if (next <= now)
                next = now + interval;
            continue;
        }
        mt_alloc_scan(false); /* a library loaded since the last poll (alloc_scan.c) */
        serve_control();
        uint64_t wait = next - now;
        wait_stop(wait < POLL_NS ? wait : POLL_NS);
    }
}

static void *publisher_main(void *arg)
{
    (void)arg;
    (void)mt_in_hook_set(MT_IN_OWN);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    prctl(PR_SET_NAME, "memtop-publish");
    mt_world_exempt(true); /* a stop-the-world leaves this thread alone (alloc_stop.h) */
    publisher_run();
    mt_world_exempt(false);
    return NULL;
}

/* The thread's stack: a mapping of memtop's own (pthread_attr_setstack),
 * made once and reused by every later thread of the process (after a
 * failed exec) and of its fork children (where the parent's thread does
 * not exist, and glibc forgets user stacks); never unmapped.  With a stack
 * of glibc's, a fork child's thread took the parent thread's stack from
 * glibc's cache, whose set-up (_dl_allocate_tls_init) the parent never
 * called: every such child bound it lazily, a symbol lookup (~14 page
 * faults: docs/performance.md, "Sixth round").  A user stack takes the
 * path the parent took.  8 MiB, reserved only (MAP_NORESERVE), with a
 * guard page below, as glibc's.  NULL: glibc's stack then. */
#define STACK_BYTES (8u << 20)

static void *thread_stack(void)
{
    if (g_pub.stack)
        return g_pub.stack;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *p = mmap(NULL, STACK_BYTES + page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, page, PROT_NONE) != 0) {
        munmap(p, STACK_BYTES + page);
        return NULL;
    }
    g_pub.stack = p + page;
    return g_pub.stack;
}

static bool start_thread(void)
{
    atomic_store_explicit(&g_pub.stop, 0, memory_order_relaxed);
    /* pthread_create orders these before the thread's first load */
    atomic_store_explicit(&g_pub.phase, g_pub.w.base ? PH_RUN : PH_WAIT, memory_order_relaxed);
    g_pub.join = pthread_timedjoin_np;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    void *stack = thread_stack();
    if (stack)
        pthread_attr_setstack(&attr, stack, STACK_BYTES);
    int rc = pthread_create(&g_pub.thread, &attr, publisher_main, NULL);
    pthread_attr_destroy(&attr);
    g_pub.running = rc == 0;
    if (rc != 0) {
        mt_log(MT_LOG_WARN, "cannot start the publisher thread: %s", strerror(rc));
        if (!g_pub.w.base) /* the segment was to be created by the thread */
            mt_status_fail(MT_STATUS_THREAD, rc, NULL);
    }
    return rc == 0;
}

/* Ends the thread and waits for it (briefly: JOIN_WAIT_NS), so that the
 * exit or exec that follows does not wait for the kernel to schedule it.
 * Not inside dl_iterate_phdr: the thread may wait for the loader's lock
 * this thread holds.  `running` stays set while a thread may still run
 * (not joined): it is never started twice. */
static void stop_thread(void)
{
    atomic_store_explicit(&g_pub.stop, 1, memory_order_release);
    if (!g_pub.running)
        return;
    syscall(SYS_futex, &g_pub.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    if (mt_tls_dl_depth)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + JOIN_WAIT_NS;
    until.tv_sec += (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    g_pub.running = g_pub.join(g_pub.thread, NULL, &until) != 0;
}

/* Holds a thread that is still in its first wait (or is held already): it
 * will create nothing, so the exit or exec need not wake and join it. */
static bool hold_waiting(void)
{
    if (!g_pub.running)
        return false;
    uint32_t w = PH_WAIT;
    return atomic_compare_exchange_strong_explicit(&g_pub.phase, &w, PH_HELD, memory_order_acq_rel,
                                                   memory_order_acquire) ||
           w == PH_HELD;
}

bool mt_publisher_arm(bool fork_child)
{
    int was = mt_in_hook_set(MT_IN_OWN);
    g_pub.pid = (int)getpid();
    g_pub.fork_child = fork_child;
    /* A fork child's pid is new: no earlier image of it published. */
    bool now = mt_g.cfg.start_ms == 0 || mt_g.cfg.keep_pid == g_pub.pid ||
               (!fork_child && mt_shm_own_exists(mt_g.cfg.shm_dir, g_pub.pid));
    bool ok = (!now || create_segment(fork_child)) && start_thread();
    mt_in_hook_restore(was);
    return ok;
}

void mt_publisher_final(void)
{
    /* A vfork child runs in its parent's memory and calls _exit: the
     * thread and the segment are the parent's, so leave them alone. */
    if (g_pub.pid != (int)getpid() || (g_pub.w.base && !own_segment()))
        return;
    mt_spin_lock(&g_pub.life);
    g_pub.exiting = true; /* a failed exec neither lets go nor restarts the thread */
    if (hold_waiting()) {
        atomic_store_explicit(&g_pub.stop, 1, memory_order_release);
        mt_spin_unlock(&g_pub.life);
        return; /* no segment, and none will be made */
    }
    stop_thread();
    mt_alloc_stats_refresh(); /* before the lock (alloc_stats.h) */
    mt_spin_lock(&g_pub.lock);
    if (!g_pub.final_done && g_pub.w.base) {
        g_pub.final_done = true;
        publish_locked();
        mt_shm_set_flag(&g_pub.w, MT_FLAG_EXITED);
        if (mt_g.cfg.keep_pid != (int)getpid())
            mt_shm_unlink(&g_pub.w);
    }
    mt_spin_unlock(&g_pub.lock);
    mt_spin_unlock(&g_pub.life);
}

/* Holds or ends the thread and marks the segment (under life). */
static bool exec_prepare(void)
{
    /* A thread in its first wait is held: the exec ends it. */
    g_pub.exec_held = hold_waiting();
    if (g_pub.exec_held)
        return true; /* no segment to mark; a failed exec lets the thread go */
    /* exec, like exit, would wait for the kernel to schedule the thread. */
    bool had_thread = g_pub.running;
    stop_thread();
    g_pub.exec_stopped = had_thread && !g_pub.running;
    mt_alloc_stats_refresh(); /* before the lock (alloc_stats.h) */
    mt_spin_lock(&g_pub.lock);
    bool mark = own_segment() && !g_pub.final_done;
    if (mark) {
        publish_locked();
        mt_shm_set_flag(&g_pub.w, MT_FLAG_EXITED | MT_FLAG_EXECED);
    }
    mt_spin_unlock(&g_pub.lock);
    return mark || g_pub.exec_stopped;
}

bool mt_publisher_exec_mine(void)
{
    return g_pub.pid == (int)getpid() && (!g_pub.w.base || own_segment());
}

bool mt_publisher_exec_prepare(void)
{
    if (!mt_publisher_exec_mine())
        return false;
    mt_spin_lock(&g_pub.life);
    bool ok = exec_prepare();
    mt_spin_unlock(&g_pub.life);
    return ok;
}

/* Takes back what exec_prepare did (under life). */
static void exec_undo(void)
{
    if (g_pub.exec_held) {
        /* Release: the thread's CAS from PH_WAIT (acq_rel) sees what came before. */
        atomic_store_explicit(&g_pub.phase, PH_WAIT, memory_order_release);
        syscall(SYS_futex, &g_pub.phase, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        return;
    }
    if (own_segment()) {
        mt_spin_lock(&g_pub.lock);
        mt_shm_change_flags(&g_pub.w, 0, MT_FLAG_EXITED | MT_FLAG_EXECED);
        mt_spin_unlock(&g_pub.lock);
    }
    if (g_pub.exec_stopped) /* a segment still to create waits MEMTOP_START_MS again */
        start_thread();
}

void mt_publisher_exec_undo(void)
{
    if (g_pub.pid != (int)getpid())
        return;
    mt_spin_lock(&g_pub.life);
    if (!g_pub.exiting) /* an exit holds or ended the thread for good */
        exec_undo();
    g_pub.exec_held = false;
    g_pub.exec_stopped = false;
    mt_spin_unlock(&g_pub.life);
}

void mt_publisher_sync_modules(void)
{
    mt_spin_lock(&g_pub.lock);
    if (own_segment() && g_pub.snap)
        mt_snapshot_sync_modules(g_pub.snap, &g_pub.w);
    mt_spin_unlock(&g_pub.lock);
}

void mt_publisher_lock(void)
{
    mt_spin_lock(&g_pub.lock);
}

void mt_publisher_unlock(void)
{
    mt_spin_unlock(&g_pub.lock);
}

void mt_publisher_child_reset(void)
{
    /* The segment is the parent's: drop our mapping of it, never write it. */
    mt_shm_forget(&g_pub.w);
    mt_status_clear();                       /* the parent's failure, if any, is not ours */
    g_pub.snap_parents = g_pub.snap != NULL; /* reset by create_segment */
    atomic_store_explicit(&g_pub.stop, 0, memory_order_relaxed);
    g_pub.running = false; /* the thread is the parent's */
    g_pub.exec_held = false;
    g_pub.exec_stopped = false;
    g_pub.exiting = false;
    g_pub.final_done = false;
    atomic_store_explicit(&g_pub.lock.held, 0, memory_order_relaxed);
    atomic_store_explicit(&g_pub.life.held, 0, memory_order_relaxed);
}
