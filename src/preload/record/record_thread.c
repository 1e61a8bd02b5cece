/* record_thread.c -- the recording's writer thread: it drains the
 * per-thread rings into the file (record_zstd.c) once per pass, sleeps on
 * a futex when idle, and ends the session on a write error.  A hook drains
 * synchronously instead while the thread does not exist yet.  Everything
 * that writes the file holds mt_w.lock (record_writer.h), and so do the
 * writer's decision to leave and a new session's hand-over to a writer
 * still running (writer_leaves, claim_writer).
 */
#define _GNU_SOURCE
#include "alloc_stop.h"
#include "record_cull.h"
#include "record_writer.h"
#include "record_writer_parts.h"

#include "core_clock.h"
#include "core_log.h"
#include "core_nocancel.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "record.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MT_RECW_FLUSH_NS /* a measuring build may set it (docs/performance.md, "reccost5") */
#define MT_RECW_FLUSH_NS 950000000ull /* end a frame at least once a second */
#endif
#define MT_RECW_TOTALS_NS 1000000000ull       /* TOTALS once a second */
#define MT_RECW_IDLE_NS 5000000ull            /* writer sleep when there was nothing to do */
#define MT_RECW_EXIT_WAIT_NS 200000000ull     /* bound on waiting for the writer to exit */
#define MT_RECW_DLCLOSE_WAIT_NS 1000000000ull /* bound on a dlclose's wait for mt_w.lock */

/* One pass: definitions first, then events (of the rings that are due,
 * or all), periodic totals, flush.  Lock held.  True if there were
 * events. */
static bool cycle(bool all)
{
    uint64_t now = mt_recw_now();
    mt_rr_modules(now);
    mt_rr_defs();
    if (mt_w.last_totals_ns == MT_RECW_TOTALS_DUE) {
        /* The session's first pass: a TOTALS right after the definitions,
         * so that RSS and threads are known from the start (a recording
         * from process start would otherwise wait a second for them). */
        mt_rr_allocators(now);
        mt_rr_totals(now);
        mt_w.last_totals_ns = now;
    }
    bool work = mt_rr_drain_rings(all);
    mt_cull_expire(mt_recw_now());
    if (now - mt_w.last_totals_ns >= MT_RECW_TOTALS_NS) {
        mt_rr_flush_events(); /* the events before the counts of what was culled with them */
        mt_cull_write_deltas(now);
        mt_rr_allocators(now);
        mt_rr_totals(now);
        mt_w.last_totals_ns = now;
        if (mt_recw_thread_running()) /* the writer thread's CPU, for MEMTOP_LOG=info */
            mt_recw_sched_times(0, &mt_w.writer_run_ns, &mt_w.writer_wait_ns);
    }
    now = mt_recw_now(); /* the frame may have begun during this pass */
    if (mt_w.frame_open && now - mt_w.frame_t0 >= MT_RECW_FLUSH_NS)
        mt_recw_end_frame();
    return work;
}

bool mt_recw_owned(void)
{
    return mt_w.open && !mt_w.err && !mt_w.sealed && mt_w.pid == getpid();
}

/* A hook's, on the program's thread: the pass writes the file, holding
 * mt_w.lock (core_nocancel.h). */
bool mt_recw_drain_sync(void)
{
    if (!mt_spin_trylock(&mt_w.lock))
        return false;
    int cancel = mt_nocancel_begin();
    bool ok = mt_recw_owned() && mt_rec_on();
    if (ok) {
        int was = mt_in_hook_set(MT_IN_OWN);
        cycle(true); /* the hook needs room in its ring */
        mt_in_hook_restore(was);
    }
    mt_spin_unlock(&mt_w.lock);
    mt_nocancel_end(cancel);
    return ok;
}

/* dlclose (hook_dl.c), before and after the real one, inside memtop with
 * cancellation disabled: the writer's module pass, on the program's
 * thread.  The writer learns modules by listing the loaded ones at each
 * pass (mt_rr_modules); a library dlopen'ed, allocated from and dlclose'd
 * between two passes was never listed, so the traces into it had no
 * MODULE record and replayed as bare addresses.  Listing here, before the
 * library goes, appends its MODULE to the records not yet compressed; the
 * listing after it (or, if that one gives up, the next pass) sees it gone
 * and writes its UNLOAD with the next trace id (record_records.c
 * emit_unload), as mt_publisher_sync_modules does for the segment.
 * The program's thread never waits for the disk here: under the lock the
 * listing only appends (mt_w.no_io: no zstd, no write(2), even when the
 * MODULE fills a frame), and the wait for the lock, which a writer's pass
 * holds across its writes, is bounded (MT_RECW_DLCLOSE_WAIT_NS), ends at
 * once when that pass is inside a write of 100 ms or more (a slow or hung
 * disk), and does not begin inside dl_iterate_phdr: the holder's listing
 * would wait for the loader's lock that this thread holds (a dlclose in a
 * destructor or constructor may hold it too).  Given up: the library's
 * MODULE is missing and its frames replay as addresses; each time is
 * logged (MEMTOP_LOG=info) with the process's count. */
void mt_rec_dlclose_modules(bool after)
{
    static _Atomic uint32_t given_up;
    if (!mt_rec_on())
        return;
    for (uint64_t waited = 0; !mt_spin_trylock(&mt_w.lock); waited += 100000) {
        if (mt_tls_dl_depth || waited >= MT_RECW_DLCLOSE_WAIT_NS ||
            mt_recw_write_slow(mt_mono_raw_ns(CLOCK_MONOTONIC))) {
            uint32_t n = atomic_fetch_add_explicit(&given_up, 1, memory_order_relaxed) + 1;
            mt_log(MT_LOG_INFO,
                   after ? "recording: a dlclose did not wait for the writer (%u so far): the "
                           "library's UNLOAD comes with the writer's next pass"
                         : "recording: a dlclose did not wait for the writer (%u so far): "
                           "the module map may lack the library it unloads",
                   n);
            return;
        }
        mt_recw_sleep_ns(100000);
    }
    if (mt_recw_owned() && mt_rec_on() && !mt_rec_paused()) {
        mt_w.no_io = true;
        mt_rr_modules(mt_recw_now());
        mt_w.no_io = false;
    }
    mt_spin_unlock(&mt_w.lock);
}

/* The writer sleeps on a futex when idle; producers wake it when a ring
 * fills up (every quarter ring), so a burst is drained before the ring is
 * full.  A wake-up lost to a race costs at most one idle period. */
static _Atomic uint32_t g_wake_seq;
static _Atomic bool g_sleeping;

void mt_recw_kick(void)
{
    if (!atomic_load_explicit(&g_sleeping, memory_order_relaxed))
        return;
    atomic_store_explicit(&g_sleeping, false, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_wake_seq, 1, memory_order_release);
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wakes the writer whether or not it announced its sleep. */
void mt_recw_wake_writer(void)
{
    atomic_fetch_add_explicit(&g_wake_seq, 1, memory_order_release);
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits (bounded) until a writer thread told to stop has exited. */
void mt_recw_wait_writer_exit(void)
{
    for (uint64_t waited = 0; waited < MT_RECW_EXIT_WAIT_NS; waited += 100000) {
        if (!atomic_load_explicit(&mt_w.thread_running, memory_order_acquire))
            return;
        mt_recw_wake_writer();
        mt_recw_sleep_ns(100000);
    }
}

static void idle_wait(void)
{
    uint32_t seq = atomic_load_explicit(&g_wake_seq, memory_order_acquire);
    atomic_store_explicit(&g_sleeping, true, memory_order_seq_cst);
    struct timespec ts = {0, (long)MT_RECW_IDLE_NS};
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    atomic_store_explicit(&g_sleeping, false, memory_order_relaxed);
}

/* Busy for ns (MEMTOP_TEST_WRITER_SPIN_MS): runnable all along, on a core
 * or waiting for one, as a writer that has work and a loaded machine. */
static void spin_ns(uint64_t ns)
{
    for (uint64_t end = mt_mono_raw_ns(CLOCK_MONOTONIC) + ns;
         mt_mono_raw_ns(CLOCK_MONOTONIC) < end;)
        ;
}

/* The writer's loop: until told to stop or the session is over. */
static void serve(void)
{
    while (!atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire)) {
        bool work = false;
        mt_spin_lock(&mt_w.lock);
        bool sealed = mt_w.sealed && mt_w.pid == getpid(); /* exec under way: write nothing */
        bool live = sealed || (mt_recw_owned() && mt_rec_on());
        if (live && !sealed)
            work = cycle(false);
        if (mt_w.open && mt_w.err && mt_w.pid == getpid()) {
            mt_recw_error_end(); /* a write error ended the session */
            mt_recw_close();     /* no stop follows a failed recording */
        }
        mt_spin_unlock(&mt_w.lock);
        if (!live)
            break;
        if (MT_UNLIKELY(mt_g.cfg.test_writer_stall_ms)) /* tests: a writer that sleeps */
            mt_recw_sleep_ns(mt_g.cfg.test_writer_stall_ms * 1000000ull);
        else if (MT_UNLIKELY(mt_g.cfg.test_writer_spin_ms)) /* tests: a writer that works */
            spin_ns(mt_g.cfg.test_writer_spin_ms * 1000000ull);
        else if (!work)
            idle_wait();
    }
}

/* MEMTOP_TEST_HANDOVER (tests only: core_config.h) stages the hand-over's
 * worst case: a writer told to stop waits, before deciding whether to
 * leave, until a start found it still running (at most 30 s), and that
 * start waits for the writer's decision (at most 1 s) before handing the
 * session over.  Both run under mt_w.lock, so the start waits in vain and
 * the writer then stays (test_writer_handover.py). */
static _Atomic bool g_test_start_found, g_test_writer_decided;

static void test_wait(_Atomic bool *flag, uint64_t max_ns)
{
    for (uint64_t w = 0; w < max_ns && !atomic_load_explicit(flag, memory_order_acquire);
         w += 1000000)
        mt_recw_sleep_ns(1000000);
}

/* The writer's decision to leave, under mt_w.lock like the hand-over in
 * claim_writer: either a start cleared thread_stop first (the writer
 * stays and serves its session) or the writer cleared thread_running
 * first (the start creates another).  True if it leaves. */
static bool writer_leaves(void)
{
    if (MT_UNLIKELY(mt_g.cfg.test_handover))
        test_wait(&g_test_start_found, 30000000000ull);
    mt_spin_lock(&mt_w.lock);
    bool leave =
        atomic_load_explicit(&mt_w.thread_stop, memory_order_relaxed) || !mt_w.open || !mt_rec_on();
    if (leave)
        atomic_store_explicit(&mt_w.thread_running, false, memory_order_release);
    mt_spin_unlock(&mt_w.lock);
    if (MT_UNLIKELY(mt_g.cfg.test_handover)) {
        if (leave)
            mt_log(MT_LOG_INFO, "test hand-over: the writer thread leaves");
        atomic_store_explicit(&g_test_writer_decided, true, memory_order_release);
    }
    return leave;
}

static void *writer_main(void *arg)
{
    (void)arg;
    (void)mt_in_hook_set(MT_IN_OWN);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    mt_world_exempt(true); /* a stop-the-world leaves this thread alone (alloc_stop.h) */
    atomic_store_explicit(&mt_w.thread_tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    do {
        if (!atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire))
            serve();
    } while (!writer_leaves());
    /* Relaxed: a hook that still sees this tid finds the thread gone (or
     * another writer's), and mt_recw_worked says no. */
    atomic_store_explicit(&mt_w.thread_tid, 0, memory_order_relaxed);
    mt_world_exempt(false);
    return NULL;
}

bool mt_recw_thread_running(void)
{
    return atomic_load_explicit(&mt_w.thread_running, memory_order_acquire);
}

/* The hand-over, under mt_w.lock (see writer_leaves): a writer thread
 * still running serves the open session (thread_stop cleared), else one is
 * marked running.  True if a thread must be created. */
static bool claim_writer(void)
{
    mt_spin_lock(&mt_w.lock);
    bool create = false;
    if (mt_w.open) {
        bool running = atomic_load_explicit(&mt_w.thread_running, memory_order_relaxed);
        if (running && MT_UNLIKELY(mt_g.cfg.test_handover)) {
            mt_log(MT_LOG_INFO, "test hand-over: the start found the writer thread running");
            atomic_store_explicit(&g_test_start_found, true, memory_order_release);
            test_wait(&g_test_writer_decided, 1000000000ull);
        }
        atomic_store_explicit(&mt_w.thread_stop, false, memory_order_release);
        if (!running)
            atomic_store_explicit(&mt_w.thread_running, true, memory_order_release);
        create = !running;
    }
    mt_spin_unlock(&mt_w.lock);
    return create;
}

bool mt_recw_start_thread(void)
{
    if (atomic_load_explicit(&mt_w.thread_running, memory_order_acquire) &&
        atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire))
        mt_recw_wait_writer_exit(); /* the previous session's writer is on its way out */
    int was = mt_in_hook_set(MT_IN_OWN);
    if (!claim_writer()) {
        mt_in_hook_restore(was);
        return true; /* no session, or its writer is there */
    }
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, writer_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        pthread_setname_np(th, "memtop-record");
    } else {
        mt_spin_lock(&mt_w.lock);
        atomic_store_explicit(&mt_w.thread_running, false, memory_order_release);
        mt_spin_unlock(&mt_w.lock);
        mt_log(MT_LOG_WARN, "recording: cannot start the writer thread: %s", strerror(rc));
    }
    mt_in_hook_restore(was);
    return rc == 0;
}
