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
 * status is copied into the header at every poll.  Every poll also looks
 * for newly loaded allocators (alloc_scan.c), published with each snapshot.
 */
#define _GNU_SOURCE
#include "publish_thread.h"

#include "alloc_scan.h"
#include "core_clock.h"
#include "core_log.h"
#include "record.h"
#include "publish_shm.h"
#include "publish_snapshot.h"
#include "core_spinlock.h"
#include "core_state.h"
#include "core_thread_state.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 20000000ull

typedef struct {
    mt_spinlock lock;
    _Atomic bool stop;
    bool final_done;
    mt_shm_writer w;
    mt_snapshot_state *snap;
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
        mt_spin_lock(&g_pub.lock);
        publish_locked();
        mt_spin_unlock(&g_pub.lock);
        answer(c, req, MT_CTRL_OK, "published");
        break;
    case MT_CMD_RECORD_START:
    case MT_CMD_RECORD_STOP: {
        char msg[MT_CTRL_MSG_MAX];
        int st = cmd == MT_CMD_RECORD_START ? mt_rec_cmd_start(c->arg, msg, sizeof msg)
                                            : mt_rec_cmd_stop(msg, sizeof msg);
        mt_rec_publish_status(g_pub.w.hdr);
        answer(c, req, st, msg);
        break;
    }
    default:
        answer(c, req, MT_CTRL_UNKNOWN_CMD, "unknown command");
        break;
    }
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
}

/* Creates and seals the segment and publishes a first snapshot.  Runs
 * synchronously at start (constructor, or a fork child's first hook), so a
 * program that exits at once still has a segment and a final snapshot. */
static bool create_segment(bool fork_child)
{
    mt_spin_lock(&g_pub.lock);
    bool ok = mt_shm_create(&g_pub.w, mt_g.cfg.shm_dir, (int)getpid());
    if (ok) {
        mt_shm_header *h = g_pub.w.hdr;
        h->max_depth = mt_g.cfg.depth;
        h->publish_interval_ms = mt_g.cfg.interval_ms;
        h->temporary_ns = mt_g.cfg.temporary_ns;
        h->start_unix_ns = (uint64_t)time(NULL) * 1000000000ull;
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

static void *publisher_main(void *arg)
{
    (void)arg;
    mt_tls_in_hook = MT_IN_OWN;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    uint64_t interval = (uint64_t)mt_g.cfg.interval_ms * 1000000ull;
    uint64_t next = mt_now_precise_ns() + interval;
    while (!atomic_load_explicit(&g_pub.stop, memory_order_acquire)) {
        uint64_t now = mt_now_precise_ns();
        if (now >= next) {
            mt_spin_lock(&g_pub.lock);
            if (!atomic_load_explicit(&g_pub.stop, memory_order_acquire))
                publish_locked();
            mt_spin_unlock(&g_pub.lock);
            next += interval;
            if (next <= now)
                next = now + interval;
            continue;
        }
        mt_alloc_scan(); /* a library loaded since the last poll (alloc_scan.c) */
        serve_control();
        uint64_t wait = next - now;
        sleep_ns(wait < POLL_NS ? wait : POLL_NS);
    }
    return NULL;
}

bool mt_publisher_start(bool fork_child)
{
    if (!g_pub.snap)
        g_pub.snap = mt_snapshot_state_new(mt_g.cfg.interval_ms);
    if (!g_pub.snap)
        return false;
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    if (!create_segment(fork_child)) {
        mt_tls_in_hook = was;
        return false;
    }
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, publisher_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        pthread_setname_np(th, "memtop-publish");
    mt_tls_in_hook = was;
    if (rc != 0)
        mt_log(MT_LOG_WARN, "cannot start the publisher thread: %s", strerror(rc));
    return rc == 0;
}

void mt_publisher_final(void)
{
    /* A vfork child runs in its parent's memory and calls _exit: the
     * segment is the parent's, so leave it alone. */
    if (g_pub.w.base && !own_segment())
        return;
    atomic_store_explicit(&g_pub.stop, true, memory_order_release);
    mt_spin_lock(&g_pub.lock);
    if (!g_pub.final_done && g_pub.w.base) {
        g_pub.final_done = true;
        publish_locked();
        mt_shm_set_flag(&g_pub.w, MT_FLAG_EXITED);
        if (mt_g.cfg.keep_pid != (int)getpid())
            mt_shm_unlink(&g_pub.w);
    }
    mt_spin_unlock(&g_pub.lock);
}

bool mt_publisher_exec_begin(void)
{
    /* Before the lock: a vfork child must not touch its parent's lock
     * word, and a child forked from a signal handler may have inherited
     * it held. */
    if (!own_segment())
        return false;
    mt_spin_lock(&g_pub.lock);
    bool mark = own_segment() && !g_pub.final_done;
    if (mark) {
        publish_locked();
        mt_shm_set_flag(&g_pub.w, MT_FLAG_EXITED | MT_FLAG_EXECED);
    }
    mt_spin_unlock(&g_pub.lock);
    return mark;
}

void mt_publisher_exec_failed(void)
{
    if (!own_segment())
        return;
    mt_spin_lock(&g_pub.lock);
    if (own_segment())
        mt_shm_change_flags(&g_pub.w, 0, MT_FLAG_EXITED | MT_FLAG_EXECED);
    mt_spin_unlock(&g_pub.lock);
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
    if (g_pub.snap)
        mt_snapshot_state_reset_defs(g_pub.snap);
    atomic_store_explicit(&g_pub.stop, false, memory_order_relaxed);
    g_pub.final_done = false;
    atomic_store_explicit(&g_pub.lock.held, 0, memory_order_relaxed);
}
