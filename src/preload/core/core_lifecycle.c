/* core_lifecycle.c -- start, fork, exec and exit of a tracked process.
 *
 * Start: the first hook call initialises tracking (lazily: the dynamic
 * loader and other constructors allocate before ours runs).  The publisher
 * and recording threads cannot be created that early: whichever of the
 * initialiser and our constructor finishes second starts them, once
 * (core_start.c); the publisher creates the segment only MEMTOP_START_MS
 * later (publish_thread.c, "Short processes").  Calls that arrive on other
 * threads while one thread initialises pass through untracked (and are
 * counted).
 *
 * fork: prepare first waits until no thread is inside libunwind (whose
 * dl_iterate_phdr calls hold a loader lock glibc does not reset in the
 * child: unwind_libunwind.c), then takes every memtop lock (publish lock
 * first, then trace shards, block shards, thread list, unwind rule
 * cache), so no lock is held by a thread that will not exist in the
 * child; both sides release them.  The child keeps a copy of the parent's counters (its heap is a
 * copy too), drops the parent's segment, and starts its own publisher at
 * its first allocation (its segment MEMTOP_START_MS after that).
 * vfork/posix_spawn children run in the parent's memory until exec and do
 * not run atfork handlers: nothing here writes state for them.
 *
 * exec: the segment gets a final snapshot marked exec'd (hook_exec.c);
 * the new image loads libmemtop.so afresh (LD_PRELOAD is inherited) and
 * replaces the segment of this pid, or, if it does not, the segment says
 * that its numbers are those from before the exec.
 *
 * Recordings (record.h): MEMTOP_RECORD starts at tracking start, the
 * writer thread with the publisher (core_start.c); a fork child drops its
 * parent's recording; exit, _exit and exec finalize it.
 *
 * exit: our destructor (run after the program's atexit handlers) publishes
 * the final snapshot, marks it exited and unlinks the segment (viewers that
 * mapped it keep the final state).  _exit and _Exit are interposed to do
 * the same, since they skip destructors.
 */
#define _GNU_SOURCE
#include "alloc_scan.h"
#include "unwind_backtrace.h"
#include "core_clock.h"
#include "core_dlerror.h"
#include "dat_format.h"
#include "core_log.h"
#include "core_allocator_figures.h"
#include "core_nocancel.h"
#include "core_sample.h"
#include "table_ptr.h"
#include "publish_thread.h"
#include "hook_exec.h"
#include "hook_real_alloc.h"
#include "record.h"
#include "core_start.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "table_trace_index.h"
#include "table_trace.h"
#include "unwind_cache.h"
#include "unwind_libunwind.h"
#include "core_loader_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

mt_global mt_g;
uint64_t mt_clock_origin_ns;
static _Atomic bool g_ctor_done;
static char **g_ctor_envp; /* glibc's envp for our constructor, published by g_ctor_done */
/* A .preinit_array function can allocate before libc has set up environ:
 * then the settings are loaded again by our constructor. */
static bool g_config_early;
extern char **environ;
static MT_TLS bool tls_fork_locked;

/* Takes every lock a thread other than the forking one may hold, in the
 * lock order of CONCURRENCY.md ("Locks and their order"), so that the
 * child finds them free and consistent.  The locks of the threads the
 * child will not have (the recording writer's, the control's, the
 * allocator scan's) are not taken: the child resets them. */
static void fork_prepare(void)
{
    /* A fork from a signal handler that interrupted one of our hooks would
     * deadlock on our own locks: skip them (the child may see a torn table
     * shard; glibc's malloc has the same limitation). */
    if (mt_tls_in_hook || atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY)
        return;
    int saved = errno; /* the waits below may nap, and a signal then sets EINTR */
    /* Not MT_IN_OWN: nothing here allocates, so an allocation on this
     * thread until fork_unlock is a signal handler's (the gate's wait
     * below may last up to 1 s), counted as untracked, its free as a
     * free or an unknown one (hook_libc.c free_nested).  As memtop's own
     * such calls were counted nowhere, the data still exact
     * (pitfall_sigstorm, with forks). */
    (void)mt_in_hook_set(MT_IN_FORK);
    mt_loader_fork_prepare(); /* 0: no thread holds the loader's lock for memtop */
    mt_publisher_lock();      /* 1: the publisher */
    mt_traces_lock_all();     /* 2: trace-index shards */
    mt_ptrs_lock_all();       /* 3: block-table shards */
    mt_threads_lock_all();    /* 4: thread records */
    mt_ucache_lock();         /* 5: unwind cache */
    tls_fork_locked = true;
    errno = saved;
}

/* Releases 5..2 of fork_prepare, in reverse order (1 and 0 by the caller). */
static void fork_unlock(void)
{
    mt_ucache_unlock();      /* 5 */
    mt_threads_unlock_all(); /* 4 */
    mt_ptrs_unlock_all();    /* 3 */
    mt_traces_unlock_all();  /* 2 */
    tls_fork_locked = false;
    mt_in_hook_restore(0);
}

static void fork_parent(void)
{
    if (!tls_fork_locked)
        return;
    fork_unlock();
    mt_publisher_unlock();      /* 1 */
    mt_loader_fork_done(false); /* 0 */
}

/* The child's resets, the forking thread's cancel still pending if it
 * was: they close the parent's files (close is a cancellation point). */
static void child_reset(void)
{
    mt_traces_child_repair();   /* a trace's section another thread had begun */
    mt_exec_child_reset();      /* the parent's threads' execs */
    mt_publisher_child_reset(); /* 1: the publisher thread is the parent's */
    mt_start_child_reset();
    mt_allocator_figures_child_reset(); /* a walk the parent's publisher or writer was in */
    mt_alloc_fork_child();
    mt_rec_child_reset();
    if (mt_tls_thread) /* the child must not draw the parent's distances */
        mt_sample_seed(mt_tls_thread);
    mt_sfilter_fork_child();
    mt_libunwind_fork_child();
    mt_loader_fork_done(true); /* 0 */
    mt_sample_disarm();        /* the child's first hook restarts tracking */
    atomic_store_explicit(&mt_g.state, MT_ST_FORKED, memory_order_release);
}

static void fork_child(void)
{
    mt_threads_fork_child(); /* before anything frees the other threads' TLS blocks */
    if (!tls_fork_locked)
        return;
    int cancel = mt_nocancel_begin();
    fork_unlock();
    child_reset();
    mt_nocancel_end(cancel);
}

static bool init_tracking(void)
{
    mt_clock_origin_ns = mt_mono_raw_ns(CLOCK_MONOTONIC_COARSE);
    g_config_early = environ == NULL;
    mt_config_load(&mt_g.cfg, environ);
    if (mt_g.cfg.disabled)
        return false;
    if (!mt_traces_init(mt_g.cfg.max_traces) || !mt_ptrs_init() || !mt_threads_init() ||
        !mt_backtrace_init() || !mt_sample_init()) {
        mt_log(MT_LOG_WARN, "cannot set up tracking (out of memory?); tracking disabled");
        return false;
    }
    mt_boot_pin_all(); /* sampled mode: free's fast path never sees a boot block */
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    mt_dl_error_init();   /* before the first scan (core_dlerror.h) */
    mt_alloc_scan(false); /* which allocators memtop sees (alloc_scan.c) */
    mt_rec_init(environ); /* MEMTOP_RECORD: record from the first event */
    return true;
}

bool mt_ensure_ready(void)
{
    int st = atomic_load_explicit(&mt_g.state, memory_order_acquire);
    if (st == MT_ST_READY)
        return true;
    if (st == MT_ST_UNINIT) {
        if (!atomic_compare_exchange_strong_explicit(&mt_g.state, &st, MT_ST_STARTING,
                                                     memory_order_acq_rel, memory_order_acquire))
            return false;
        int cancel = mt_nocancel_begin(); /* a first hook's: files read, threads started */
        int was = mt_in_hook_set(MT_IN_OWN);
        bool ok = init_tracking();
        /* seq_cst, with the load of g_ctor_done after it and the
         * constructor's store of g_ctor_done and load of state: either the
         * constructor sees READY or this thread sees the constructor done,
         * so one of them (or both: core_start.c) starts the threads. */
        atomic_store_explicit(&mt_g.state, ok ? MT_ST_READY : MT_ST_OFF, memory_order_seq_cst);
        if (ok && atomic_load_explicit(&g_ctor_done, memory_order_seq_cst))
            mt_start_threads(g_ctor_envp, g_config_early);
        mt_in_hook_restore(was);
        mt_nocancel_end(cancel);
        return ok;
    }
    if (st == MT_ST_FORKED) {
        if (!atomic_compare_exchange_strong_explicit(&mt_g.state, &st, MT_ST_STARTING,
                                                     memory_order_acq_rel, memory_order_acquire))
            return false;
        atomic_store_explicit(&mt_g.state, MT_ST_READY, memory_order_release);
        int cancel = mt_nocancel_begin(); /* MEMTOP_RECORD: the child's file */
        mt_start_child_threads();
        mt_nocancel_end(cancel);
        return true;
    }
    return false;
}

/* glibc passes (argc, argv, envp) to constructors. */
__attribute__((constructor)) static void memtop_ctor(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    mt_real_ready();
    g_ctor_envp = envp;
    atomic_store_explicit(&g_ctor_done, true, memory_order_seq_cst); /* mt_ensure_ready */
    int st = atomic_load_explicit(&mt_g.state, memory_order_seq_cst);
    if (st == MT_ST_UNINIT)
        mt_ensure_ready(); /* it starts the threads too: it sees g_ctor_done */
    else if (st == MT_ST_READY)
        mt_start_threads(envp, g_config_early);
    /* MT_ST_STARTING: the initialiser starts them when it is done. */
}

/* Publishes the final snapshot, unless this thread is inside memtop: exit
 * or _exit from a signal handler that interrupted a hook (or the real
 * allocator it called) would wait for a lock the interrupted code holds.
 * Then the last periodic snapshot stands and the segment is left behind
 * (stale, and marked so by the viewer). */
__attribute__((destructor)) static void memtop_dtor(void)
{
    if (mt_tls_in_hook || atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY)
        return;
    int cancel = mt_nocancel_begin(); /* exit on a thread: write, close, pthread_join */
    int was = mt_in_hook_set(MT_IN_OWN);
    mt_rec_finish(MT_DAT_END_EXIT);
    mt_publisher_final();
    mt_in_hook_restore(was);
    mt_nocancel_end(cancel);
}

__attribute__((noreturn)) static void exit_now(int status)
{
    memtop_dtor();
    if (mt_real.exit_)
        mt_real.exit_(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

MT_EXPORT void _exit(int status)
{
    exit_now(status);
}

MT_EXPORT void _Exit(int status)
{
    exit_now(status);
}
