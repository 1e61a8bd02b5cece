/* record_session.c -- a recording session's life cycle: begin (file
 * header, process record, the initial state of a mid-run start), end (the
 * final state, END), seal and unseal around an exec, and a fork child's
 * reset.  The file output is record_zstd.c, the writer thread
 * record_thread.c; the state they share is mt_w (record_writer.h).
 */
#define _GNU_SOURCE
#include "record_writer.h"
#include "record_writer_parts.h"

#include "core_clock.h"
#include "core_log.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "dat_format.h"
#include "record.h"
#include "record_blocks.h"
#include "record_buffer.h"
#include "record_cull.h"
#include "record_order.h"
#include "record_tag_pairs.h"
#include "record_zstd_lib.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MT_RECW_GRACE_NS 2000000ull      /* calls already past the recording check finish */
#define MT_RECW_PAUSE_MAX_NS 50000000ull /* the gate gives up after this */

mt_recw mt_w = {.fd = -1};

uint64_t mt_recw_now(void)
{
    return mt_now_precise_ns();
}

bool mt_recw_active(void)
{
    return mt_rec_on();
}

void mt_recw_note_dropped(uint64_t n)
{
    atomic_fetch_add_explicit(&mt_w.dropped, n, memory_order_relaxed);
}

void mt_recw_note_drop_why(unsigned why)
{
    atomic_fetch_add_explicit(&mt_w.dropped_why[why], 1, memory_order_relaxed);
}

static void atomic_max(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
    while (v > old && !atomic_compare_exchange_weak_explicit(m, &old, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

void mt_recw_note_stall(uint64_t ns)
{
    atomic_max(&mt_w.stall_max_ns, ns);
}

void mt_recw_note_write(uint64_t ns)
{
    atomic_max(&mt_w.write_max_ns, ns);
}

/* The drops by cause and the longest waits, for MEMTOP_LOG=info. */
static void log_drops(void)
{
    uint64_t d[MT_DROP_N];
    for (unsigned i = 0; i < MT_DROP_N; i++)
        d[i] = atomic_load_explicit(&mt_w.dropped_why[i], memory_order_relaxed);
    mt_log(MT_LOG_INFO,
           "recording: %llu events dropped (disk behind %llu, wait cap %llu, could not wait %llu, "
           "no buffer %llu); longest hook wait %.1f ms, longest write %.1f ms",
           (unsigned long long)atomic_load_explicit(&mt_w.dropped, memory_order_relaxed),
           (unsigned long long)d[MT_DROP_DISK], (unsigned long long)d[MT_DROP_CAP],
           (unsigned long long)d[MT_DROP_NOWAIT], (unsigned long long)d[MT_DROP_NORING],
           (double)atomic_load_explicit(&mt_w.stall_max_ns, memory_order_relaxed) / 1e6,
           (double)atomic_load_explicit(&mt_w.write_max_ns, memory_order_relaxed) / 1e6);
    if (mt_w.writer_run_ns) /* read once a second: the last second is not in it */
        mt_log(MT_LOG_INFO, "recording: the writer thread ran %.2f s and waited %.2f s for a core",
               (double)mt_w.writer_run_ns / 1e9, (double)mt_w.writer_wait_ns / 1e9);
}

static void reset_session(int fd)
{
    mt_w.fd = fd;
    mt_w.pid = getpid();
    MT_HINT_SET(mt_w.err, 0);
    MT_HINT_SET(mt_w.bytes, 0);
    mt_w.frame_mark = mt_w.prev_mark = 0;
    mt_w.reserve = true;
    mt_w.reserved_to = 0;
    mt_w.defs = 0;
    mt_w.frame_open = false;
    mt_w.no_io = false;
    mt_w.last_totals_ns = MT_RECW_TOTALS_DUE;
    mt_w.allocs_hash = 0;
    memset(mt_w.sum_initial, 0, sizeof mt_w.sum_initial);
    memset(mt_w.sum_events, 0, sizeof mt_w.sum_events);
    memset(mt_w.sum_lost, 0, sizeof mt_w.sum_lost);
    memset(mt_w.sum_why, 0, sizeof mt_w.sum_why);
    memset(&mt_w.modscan, 0, sizeof mt_w.modscan);
    mt_w.nmodules = 0;
    mt_w.module_records = 0;
    MT_HINT_SET(mt_w.approx, 0);
    MT_HINT_SET(mt_w.unseen, 0);
    mt_w.sealed = false;
    for (unsigned c = 0; c < MT_COL_N; c++)
        mt_w.cols[c][0].len = mt_w.cols[c][1].len = 0;
    mt_w.open_rec.n = 0;
    mt_w.tick_order = mt_rec_order_ticks() && !mt_cull_on(); /* mt_cull_begin came first */
    mt_w.runs = mt_w.tick_order;
    mt_rb_new_file();
    mt_tp_new_file();
    mt_rb_reset_stats();
    atomic_store_explicit(&mt_w.events, 0, memory_order_relaxed);
    atomic_store_explicit(&mt_w.dropped, 0, memory_order_relaxed);
    for (unsigned i = 0; i < MT_DROP_N; i++)
        atomic_store_explicit(&mt_w.dropped_why[i], 0, memory_order_relaxed);
    atomic_store_explicit(&mt_w.stall_max_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&mt_w.write_max_ns, 0, memory_order_relaxed);
    mt_w.writer_run_ns = mt_w.writer_wait_ns = 0;
    mt_recw_disk_reset();
}

/* Capture the initial state of a mid-run start.  The module map and the
 * definitions are written before the pause (dl_iterate_phdr takes the
 * loader lock, which a thread held at the gate may hold; a module loaded
 * meanwhile is picked up by the next cycle).  During the pause: copy only
 * (record_initial.c).  The gate gives up after MT_RECW_PAUSE_MAX_NS; events
 * that reached the rings during the pause (calls that were already past
 * the check, or gave up waiting) may or may not be in the copy, so they
 * are counted as dropped (LOST records): the recording says "inexact". */
/* Starts a pause: calls that would record wait at their gate (at most
 * MT_RECW_PAUSE_MAX_NS), calls already past it get MT_RECW_GRACE_NS. */
static void pause_hooks(void)
{
    atomic_store_explicit(&mt_w.gate_giveups, 0, memory_order_relaxed);
    atomic_store_explicit(&mt_w.pause_until, mt_now_ns() + MT_RECW_PAUSE_MAX_NS,
                          memory_order_relaxed);
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_PAUSE, memory_order_seq_cst);
    mt_recw_sleep_ns(MT_RECW_GRACE_NS);
}

static void initial_state(void)
{
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    if (!mt_rr_capture_prepare(true)) {
        mt_recw_fail(ENOMEM);
        return;
    }
    uint64_t now = mt_recw_now();
    pause_hooks();
    mt_rings_discard();
    mt_rr_capture_take();
    uint64_t late = mt_rings_discard_as_lost(MT_DAT_LOST_CAPTURE);
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_ON, memory_order_seq_cst);
    uint64_t paused = mt_recw_now() - now;
    MT_HINT_SET(mt_w.approx, late);
    uint64_t giveups = atomic_load_explicit(&mt_w.gate_giveups, memory_order_relaxed);
    if (late || giveups || mt_rr_capture_skipped())
        mt_log(MT_LOG_WARN,
               "recording: initial state approximate: %llu events during its capture counted as "
               "dropped (%llu calls stopped waiting, %llu live blocks left out)",
               (unsigned long long)late, (unsigned long long)giveups,
               (unsigned long long)mt_rr_capture_skipped());
    mt_log(MT_LOG_INFO, "recording: initial state copied in a %.1f ms pause", (double)paused / 1e6);
    mt_rr_modules(mt_recw_now()); /* recording is on: the loader lock is fine again */
    mt_rr_defs();
    mt_rr_capture_sums(mt_w.sum_initial);
    mt_rr_capture_write(MT_DAT_STATE_INITIAL);
    mt_rr_capture_release();
}

/* The final state (stop, exit, exec), consistent with the events: after
 * the events drained so far, a pause as for the initial state; in it,
 * each ring's head and lost counts are noted (the cut), then the trace
 * counters are copied.  Every event before a cut was accounted before the
 * copy, so the events up to the cuts are written and the rest is left
 * (exec: resume must find them) or discarded (end: accounted after the
 * copy, or by a call caught past the gate -- see final_excess).  Then the
 * recording switches off (or back on, resume).  Returns whether the copy
 * was made (else the caller writes the counters read live).  Lock held. */
static bool final_capture(bool resume)
{
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    mt_rr_drain_rings(true);
    bool copied = mt_rr_capture_prepare(false);
    if (copied) {
        pause_hooks();
        mt_rings_mark_cut();
        mt_rr_capture_take();
    } else {
        mt_log(MT_LOG_WARN, "recording: no memory to copy the final state: read live");
        mt_rings_mark_cut();
    }
    atomic_store_explicit(&mt_rec_mode, resume ? MT_RECMODE_ON : MT_RECMODE_OFF,
                          memory_order_seq_cst);
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    mt_rr_drain_cut(!resume);
    mt_cull_flush_all(mt_recw_now()); /* every young block is live at the end */
    mt_recw_end_frame();
    return copied;
}

/* What the final state counts beyond the initial state + events + LOST
 * records: calls that were past the gate when the pause began and still
 * had not appended their event at the cut (preempted, or a full ring), or
 * whose event had no ring.  Written as a LOST record of no thread (tid 0)
 * and counted as dropped, so the file says it is inexact and by how much.
 * Returns the events so counted. */
static uint64_t final_excess(void)
{
    uint64_t fin[MT_LOST_N], ex[MT_LOST_N];
    mt_rr_capture_sums(fin);
    bool under = false;
    for (unsigned i = 0; i < MT_LOST_N; i++) {
        uint64_t have = mt_w.sum_initial[i] + mt_w.sum_events[i] + mt_w.sum_lost[i];
        ex[i] = fin[i] > have ? fin[i] - have : 0;
        under |= fin[i] < have;
    }
    uint64_t n = ex[MT_LOST_AC] + ex[MT_LOST_FC];
    uint64_t why[MT_DAT_LOST_CAUSES] = {[MT_DAT_LOST_UNSEEN] = n};
    mt_rr_lost(0, ex, why);
    mt_recw_note_dropped(n);
    MT_HINT_SET(mt_w.unseen, n);
    if (n)
        mt_log(MT_LOG_INFO,
               "recording: %llu events in the final state were not recorded: "
               "counted as dropped",
               (unsigned long long)n);
    if (under)
        mt_log(MT_LOG_INFO, "recording: the events exceed the final state (an approximate "
                            "initial state counted some twice)");
    return n;
}

static void log_block_stats(void)
{
    const mt_rb_stats *st = mt_rb_get_stats();
    uint64_t missed = st->not_found + st->mismatched; /* not named in their own frame */
    mt_log(MT_LOG_INFO,
           "recording: %llu frees named their block (%llu of them in the frame before), %llu "
           "written in full; of the frees their own frame did not name, %llu found no block at "
           "the address, %llu another block there; %llu bytes of block maps",
           (unsigned long long)(st->refs + st->prev_refs), (unsigned long long)st->prev_refs,
           (unsigned long long)(missed - st->prev_refs), (unsigned long long)st->not_found,
           (unsigned long long)st->mismatched, (unsigned long long)mt_rb_bytes());
    const mt_tp_stats *tp = mt_tp_get_stats();
    if (mt_w.runs)
        mt_log(MT_LOG_INFO,
               "recording: %llu TAG_PAIRS tables, %llu EVENTS2 records coded by pairs, %llu "
               "pairs escaped",
               (unsigned long long)tp->tables, (unsigned long long)tp->coded_records,
               (unsigned long long)tp->escapes);
}

/* After final_capture: the excess, the FINAL set, END.  Lock held. */
static uint64_t final_write(bool copied, unsigned reason)
{
    uint64_t excess = 0;
    log_block_stats();
    mt_rr_allocators(mt_recw_now()); /* one found in the last second */
    if (copied) {
        excess = final_excess();
        mt_rr_capture_write(MT_DAT_STATE_FINAL);
        mt_rr_capture_release();
    } else {
        mt_rr_state(MT_DAT_STATE_FINAL, mt_recw_now());
    }
    mt_rr_end(reason, 0, mt_recw_now());
    mt_recw_end_frame();
    return excess;
}

bool mt_recw_begin(int fd, bool mid_run, bool fork_child, int *err)
{
    int was = mt_in_hook_set(MT_IN_OWN);
    if (!mt_zstd_load()) { /* before the lock: it takes the loader's */
        *err = ELIBACC;
        close(fd);
        mt_in_hook_restore(was);
        return false;
    }
    mt_spin_lock(&mt_w.lock);
    bool ok = mt_recw_setup_memory() && mt_cull_begin();
    if (ok) {
        reset_session(fd);
        mt_w.open = true;
        mt_recw_write_file_header();
        uint64_t now = mt_recw_now();
        mt_rr_process(mid_run, fork_child, now);
        if (mid_run) {
            initial_state();
        } else {
            mt_rings_discard();
        }
        mt_recw_end_frame();
        ok = !mt_w.err;
        atomic_store_explicit(&mt_rec_mode, ok ? MT_RECMODE_ON : MT_RECMODE_OFF,
                              memory_order_seq_cst);
        *err = mt_w.err;
        if (!ok)
            mt_recw_close();
    } else {
        *err = ENOMEM;
        close(fd);
        mt_recw_free_memory(); /* what setup_memory got before it failed */
    }
    mt_spin_unlock(&mt_w.lock);
    mt_in_hook_restore(was);
    return ok;
}

void mt_recw_close(void)
{
    close(mt_w.fd);
    mt_w.fd = -1;
    mt_w.open = false;
    /* The target as before the session: its ~10 MiB of buffers back.  Every
     * user of them holds the lock and needs a session open (a writer that
     * has not left yet, a hook's drain), and a start sets up its own. */
    mt_recw_free_memory();
}

uint64_t mt_recw_end(unsigned reason)
{
    int was = mt_in_hook_set(MT_IN_OWN);
    atomic_store_explicit(&mt_w.thread_stop, true, memory_order_release);
    mt_recw_wake_writer();
    mt_spin_lock(&mt_w.lock);
    uint64_t bytes = mt_w.bytes;
    mt_w.sealed = false;
    if (mt_w.open && mt_w.pid == getpid()) {
        if (!mt_w.err) {
            bool copied = final_capture(false);
            /* Drops after the cuts belong to no recording: END's dropped
             * is what the LOST records say. */
            atomic_store_explicit(&mt_w.dropped,
                                  mt_w.sum_lost[MT_LOST_AC] + mt_w.sum_lost[MT_LOST_FC],
                                  memory_order_relaxed);
            final_write(copied, reason);
            log_drops();
        }
        if (mt_w.err) /* before, or while writing the final state */
            mt_recw_error_end();
        atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_seq_cst);
        mt_recw_release_reserve();
        mt_recw_close();
        bytes = mt_w.bytes;
    }
    mt_spin_unlock(&mt_w.lock);
    mt_recw_wait_writer_exit(); /* a start right after this one gets a writer of its own */
    mt_in_hook_restore(was);
    return bytes;
}

bool mt_recw_seal(unsigned reason)
{
    int was = mt_in_hook_set(MT_IN_OWN);
    mt_spin_lock(&mt_w.lock);
    bool ok = mt_recw_owned();
    if (ok) {
        bool copied = final_capture(true);
        mt_w.seal_mark = mt_w.bytes; /* the final state and END in frames of their own */
        memcpy(mt_w.seal_lost, mt_w.sum_lost, sizeof mt_w.seal_lost);
        memcpy(mt_w.seal_why, mt_w.sum_why, sizeof mt_w.seal_why);
        mt_w.sealed = true;
        mt_w.seal_excess = final_write(copied, reason);
        ok = !mt_w.err;
        mt_recw_release_reserve();
        if (!ok)
            mt_w.sealed = false;
    }
    mt_spin_unlock(&mt_w.lock);
    mt_in_hook_restore(was);
    return ok;
}

bool mt_recw_unseal(void)
{
    int was = mt_in_hook_set(MT_IN_OWN);
    mt_spin_lock(&mt_w.lock);
    bool ok = mt_w.sealed && mt_w.open && !mt_w.err && mt_w.pid == getpid();
    if (ok)
        ok = ftruncate(mt_w.fd, (off_t)mt_w.seal_mark) == 0 &&
             lseek(mt_w.fd, (off_t)mt_w.seal_mark, SEEK_SET) == (off_t)mt_w.seal_mark;
    mt_w.sealed = false;
    if (ok) {
        MT_HINT_SET(mt_w.bytes, mt_w.seal_mark);
        mt_w.frame_mark = mt_w.prev_mark = mt_w.seal_mark; /* the sealed frames are gone */
        mt_w.reserved_to = mt_w.seal_mark;                 /* the cut freed what lay past it */
        mt_w.last_totals_ns = MT_RECW_TOTALS_DUE; /* the final state's TOTALS were cut off */
        mt_w.allocs_hash = 0; /* and an ALLOCATORS record before it, maybe: again */
        /* So was its excess LOST record: those events are still to come. */
        memcpy(mt_w.sum_lost, mt_w.seal_lost, sizeof mt_w.sum_lost);
        memcpy(mt_w.sum_why, mt_w.seal_why, sizeof mt_w.sum_why);
        atomic_fetch_sub_explicit(&mt_w.dropped, mt_w.seal_excess, memory_order_relaxed);
        MT_HINT_SET(mt_w.unseen, 0);
    } else if (mt_w.open && mt_w.pid == getpid()) {
        atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_seq_cst);
        mt_recw_close(); /* the session is over: no stop follows */
    }
    mt_spin_unlock(&mt_w.lock);
    mt_in_hook_restore(was);
    return ok;
}

void mt_recw_child_reset(void)
{
    /* The file, the writer thread and the rings are the parent's. */
    /* MT_RESET: only what differs (core_common.h) */
    MT_RESET_ATOMIC(mt_rec_mode, MT_RECMODE_OFF);
    MT_RESET_ATOMIC(mt_w.lock.held, 0);
    if (mt_w.open && mt_w.fd >= 0)
        close(mt_w.fd);
    MT_RESET(mt_w.open, false);
    MT_RESET(mt_w.fd, -1);
    MT_RESET(mt_w.frame_open, false);
    MT_RESET(mt_w.no_io, false); /* a fork during a dlclose's listing (record_thread.c) */
    MT_RESET(mt_w.sealed, false);
    MT_RESET_ATOMIC(mt_w.thread_running, false); /* one thread now */
    MT_RESET_ATOMIC(mt_w.thread_stop, false);
    MT_RESET_ATOMIC(mt_w.write_since, 0); /* a write of the parent's writer, never ended here */
    MT_RESET_ATOMIC(mt_w.thread_tid, 0); /* the parent's writer: the hooks' wait cap asks of none */
    /* The parent's writer may have been resizing its zstd workspace or the
     * frame context's tables when another thread forked: forget them (the
     * child's copies leak, copy-on-write) rather than reuse them. */
    MT_RESET(mt_w.cctx, NULL);
    mt_rb_child_reset();
    mt_tp_child_reset();
    mt_cull_child_reset();
    mt_rings_child_reset();
}
