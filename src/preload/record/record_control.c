/* record_control.c -- starting and stopping recordings, and their status.
 *
 * Ways in: MEMTOP_RECORD=PATTERN at tracking start (from the first event:
 * no initial state needed), the control channel (MT_CMD_RECORD_START /
 * STOP, on the publisher thread: a mid-run start with an initial state),
 * and a fork child whose MEMTOP_RECORD names a file per process (%p, %n).
 * Ways out: stop, exit/_exit (our destructor), exec (hook_exec.c), a
 * write error, and a lease that its viewer stopped renewing (a recording
 * started by MT_CMD_RECORD_START_LEASED: mt_rec_lease_check, on the
 * publisher, so that a viewer killed, hung or stopped never leaves a
 * recording running behind it; docs/shm-protocol.md, "Recording lease").  The status is kept here
 * and copied into the segment header by the publisher (the hooks never touch the segment).
 */
#define _GNU_SOURCE
#include "record.h"

#include "core_clock.h"
#include "core_config.h"
#include "core_state.h"
#include "dat_format.h"
#include "core_log.h"
#include "record_buffer.h"
#include "record_cull.h"
#include "record_order.h"
#include "record_path.h"
#include "record_pattern.h"
#include "record_writer.h"
#include "core_spinlock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Atomic int mt_rec_mode;

typedef struct {
    mt_spinlock lock;
    uint32_t state; /* MT_REC_STATE_* */
    int32_t error;
    uint64_t start_unix_ns;
    uint64_t recordings;
    uint64_t bytes, events, dropped; /* final figures once stopped */
    uint64_t why[MT_REC_WHY_MAX];    /* dropped by cause (MT_DAT_LOST_*), likewise */
    uint64_t seq;                    /* header.rec_seq as we wrote it last (even) */
    uint32_t lease_ms;               /* header.rec_lease_ms: the session's lease, 0 none */
    uint32_t end_reason;             /* header.rec_end_reason: the last end's MT_DAT_END_* */
    char path[MT_PATH_MAX];
    char message[MT_REC_MSG_MAX];
    char pattern[MT_PATH_MAX]; /* MEMTOP_RECORD, "" if unset */
    bool env_checked;
    _Atomic bool finishing;
} rec_control;

static rec_control g_rc;

/* The lease of a recording a viewer started: the publisher thread's only
 * (armed by mt_rec_cmd_start, checked by mt_rec_lease_check, both there).
 * ms 0: none.  rec: g_rc.recordings of the leased session (any other
 * session, e.g. a later MEMTOP_RECORD child's, has none).  seen: the
 * beat last read; at_ns: when it last changed, on our own clock. */
static struct {
    uint32_t ms;
    uint64_t rec, seen, at_ns;
} g_lease;

/* --- events (hooks) ----------------------------------------------------- */

/* Bounded: a thread waiting here may hold any lock outside memtop (the
 * loader's, stdio's), so the wait never depends on the writer getting one;
 * it gives up at the pause's deadline (record_session.c counts the events
 * of such calls as dropped: the initial state is then approximate). */
void mt_rec_gate_wait(void)
{
    for (unsigned spins = 0; mt_rec_paused();) {
        if (mt_now_ns() >= atomic_load_explicit(&mt_w.pause_until, memory_order_relaxed)) {
            atomic_fetch_add_explicit(&mt_w.gate_giveups, 1, memory_order_relaxed);
            return;
        }
        mt_spin_wait(spins++); /* naps: a real-time hook must not starve the writer */
    }
}

/* --- status --------------------------------------------------------------- */

static void set_status(uint32_t state, int err, const char *path, const char *msg)
{
    mt_spin_lock(&g_rc.lock);
    g_rc.state = state;
    g_rc.error = err;
    /* Cut to fit, on purpose (the precision says so to the compiler). */
    if (path)
        snprintf(g_rc.path, sizeof g_rc.path, "%.*s", (int)sizeof g_rc.path - 1, path);
    snprintf(g_rc.message, sizeof g_rc.message, "%.*s", (int)sizeof g_rc.message - 1, msg);
    mt_spin_unlock(&g_rc.lock);
}

/* The errno's symbolic name (glibc's table: a static string, no
 * allocation). */
static const char *errno_name(int e)
{
    const char *name = strerrorname_np(e);
    return name ? name : "unknown errno";
}

/* The status message of a session ended by a write error. */
static void failed_message(int e)
{
    if (e == MT_RECW_ERR_CUT) { /* not the disk's error */
        snprintf(g_rc.message, sizeof g_rc.message,
                 "the file was truncated while being written; recording stopped");
        return;
    }
    snprintf(g_rc.message, sizeof g_rc.message, "%s: %s (%s); recording stopped",
             e == ENOSPC || e == EDQUOT ? "disk full" : "write error", strerror(e), errno_name(e));
}

/* The events dropped so far by cause (MT_DAT_LOST_*): the hooks' counts,
 * a mid-run start's capture, the final state's excess. */
static void read_why(uint64_t why[MT_REC_WHY_MAX])
{
    _Static_assert((unsigned)MT_DROP_N <= (unsigned)MT_DAT_LOST_CAPTURE &&
                       MT_DAT_LOST_CAUSES <= MT_REC_WHY_MAX,
                   "every cause has its slot");
    memset(why, 0, MT_REC_WHY_MAX * sizeof *why);
    for (unsigned i = 0; i < MT_DROP_N; i++)
        why[i] = atomic_load_explicit(&mt_w.dropped_why[i], memory_order_relaxed);
    why[MT_DAT_LOST_CAPTURE] = __atomic_load_n(&mt_w.approx, __ATOMIC_RELAXED);
    why[MT_DAT_LOST_UNSEEN] = __atomic_load_n(&mt_w.unseen, __ATOMIC_RELAXED);
}

/* The events the causes count: the status says that many were dropped, so
 * that the total and its causes are one set (the hooks count a drop's
 * total and its cause apart, and the mid-run start's and the final
 * state's own counts with them: read apart, they can differ by a drop in
 * flight). */
static uint64_t why_sum(const uint64_t why[MT_REC_WHY_MAX])
{
    uint64_t n = 0;
    for (unsigned i = 0; i < MT_REC_WHY_MAX; i++)
        n += why[i];
    return n;
}

/* Takes the final figures when a session ended (stop or error).  The
 * causes: once mt_recw_end returned (ended), the file's (its LOST
 * records'), whose sum is END's dropped; else (a write error seen while
 * the writer runs, a failed exec's cut) the hooks' counts. */
static void record_final_figures(bool ended)
{
    g_rc.bytes = __atomic_load_n(&mt_w.bytes, __ATOMIC_RELAXED);
    g_rc.events = atomic_load_explicit(&mt_w.events, memory_order_relaxed);
    g_rc.dropped = atomic_load_explicit(&mt_w.dropped, memory_order_relaxed);
    read_why(g_rc.why);
    uint64_t said = 0;
    for (unsigned i = 0; ended && i < MT_DAT_LOST_CAUSES; i++)
        said += mt_w.sum_why[i];
    if (ended && said == g_rc.dropped) /* mt_recw_end made dropped the LOST records' sum */
        for (unsigned i = 0; i < MT_DAT_LOST_CAUSES; i++)
            g_rc.why[i] = mt_w.sum_why[i];
    g_rc.dropped = why_sum(g_rc.why); /* the same when ended; else the hooks' counts */
}

/* Writes the status under the header's seqlock (rec_seq: odd while the
 * fields change; docs/shm-protocol.md), from our own copy of the word
 * (whatever another process wrote there), so that a viewer reads the
 * figures and their causes as one set.  The publisher only: the hooks
 * never wait on it, and a viewer never waits on us. */
void mt_rec_publish_status(mt_shm_header *h)
{
    mt_shm_recording *r = &h->recording;
    mt_spin_lock(&g_rc.lock);
    int e = __atomic_load_n(&mt_w.err, __ATOMIC_RELAXED); /* a hint: mt_w.lock not held */
    if (g_rc.state == MT_REC_STATE_ON && e) {
        record_final_figures(false);
        g_rc.end_reason = MT_DAT_END_ERROR;
        g_rc.state = MT_REC_STATE_FAILED;
        g_rc.error = e;
        failed_message(e);
    }
    bool on = g_rc.state == MT_REC_STATE_ON;
    uint64_t why[MT_REC_WHY_MAX];
    if (on)
        read_why(why);
    else
        memcpy(why, g_rc.why, sizeof why);
    uint64_t s = g_rc.seq | 1u;
    __atomic_store_n(&h->rec_seq, s, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    r->error = g_rc.error;
    r->start_unix_ns = g_rc.start_unix_ns;
    r->bytes_written = on ? __atomic_load_n(&mt_w.bytes, __ATOMIC_RELAXED) : g_rc.bytes;
    r->events_written = on ? atomic_load_explicit(&mt_w.events, memory_order_relaxed) : g_rc.events;
    r->events_dropped = why_sum(why);
    r->recordings = g_rc.recordings;
    memcpy(h->rec_dropped_why, why, sizeof h->rec_dropped_why);
    memcpy(r->path, g_rc.path, sizeof r->path);
    memcpy(r->message, g_rc.message, sizeof r->message);
    h->rec_lease_ms = g_rc.lease_ms;
    h->rec_end_reason = g_rc.end_reason;
    __atomic_store_n(&r->state, g_rc.state, __ATOMIC_RELEASE);
    g_rc.seq = s + 1;
    __atomic_store_n(&h->rec_seq, g_rc.seq, __ATOMIC_RELEASE);
    mt_spin_unlock(&g_rc.lock);
}

/* --- start and stop ----------------------------------------------------- */

/* Creates the file and begins the session.  Returns 0 or an errno; msg
 * says what happened either way. */
static int start(const char *pattern, bool mid_run, bool fork_child, char *msg, size_t cap)
{
    char path[MT_PATH_MAX];
    if (mt_rec_on() || g_rc.state == MT_REC_STATE_ON) {
        snprintf(msg, cap, "already recording to %.400s", g_rc.path);
        return EBUSY;
    }
    int fd = mt_rec_create(pattern, fork_child, path, sizeof path);
    if (fd == -EINVAL) {
        snprintf(msg, cap,
                 "bad recording file name '%.200s' (use %%p %%e %%t %%n %%%% only, and keep it "
                 "short)",
                 pattern);
        return EINVAL;
    }
    if (fd == -EEXIST) {
        snprintf(msg, cap, "%.400s exists: memtop never overwrites a recording (EEXIST)", path);
        return EEXIST;
    }
    if (fd < 0) {
        snprintf(msg, cap, "cannot create %.400s: %s (%s)", path, strerror(-fd), errno_name(-fd));
        return -fd;
    }
    int err = 0;
    g_rc.start_unix_ns = mt_unix_ns();
    if (!mt_recw_begin(fd, mid_run, fork_child, &err)) {
        unlink(path);
        snprintf(msg, cap, "cannot write %.400s: %s (%s)", path, strerror(err), errno_name(err));
        return err ? err : EIO;
    }
    mt_spin_lock(&g_rc.lock);
    g_rc.recordings++;
    g_rc.lease_ms = 0; /* a leased start sets it (arm_lease) */
    mt_spin_unlock(&g_rc.lock);
    atomic_store_explicit(&g_rc.finishing, false, memory_order_release);
    snprintf(msg, cap, "%s", path);
    char note[MT_REC_MSG_MAX], mode[64] = "";
    if (mt_cull_on()) /* the viewer shows it (shm_recording.c) */
        snprintf(mode, sizeof mode, ", culled <%llu.%03llu s",
                 (unsigned long long)(mt_cull_threshold_ms() / 1000),
                 (unsigned long long)(mt_cull_threshold_ms() % 1000));
    if (mt_w.approx)
        snprintf(note, sizeof note,
                 "recording%s; initial state approximate (%llu events during its capture counted "
                 "as dropped)",
                 mode, (unsigned long long)mt_w.approx);
    else
        snprintf(note, sizeof note, "recording%s", mode);
    set_status(MT_REC_STATE_ON, 0, path, note);
    return 0;
}

static uint64_t stop(unsigned reason)
{
    bool expect = false;
    if (g_rc.state != MT_REC_STATE_ON ||
        !atomic_compare_exchange_strong_explicit(&g_rc.finishing, &expect, true,
                                                 memory_order_acq_rel, memory_order_acquire))
        return 0;
    uint64_t bytes = mt_recw_end(reason);
    mt_spin_lock(&g_rc.lock);
    record_final_figures(true);
    g_rc.bytes = bytes;
    g_rc.end_reason = mt_w.err ? MT_DAT_END_ERROR : reason;
    if (mt_w.err) {
        g_rc.state = MT_REC_STATE_FAILED;
        g_rc.error = mt_w.err;
        failed_message(mt_w.err);
    } else {
        g_rc.state = MT_REC_STATE_STOPPED;
        snprintf(g_rc.message, sizeof g_rc.message, "stopped");
    }
    mt_spin_unlock(&g_rc.lock);
    return bytes;
}

static const char *env_get(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static void env_start(char **envp, bool mid_run)
{
    g_rc.env_checked = true;
    mt_cull_env(env_get(envp, "MEMTOP_RECORD_MODE"), env_get(envp, "MEMTOP_CULL_SECS"),
                env_get(envp, "MEMTOP_CULL_BLOCKS"));
    mt_rec_order_env(env_get(envp, "MEMTOP_RECORD_ORDER"));
    const char *pat = env_get(envp, "MEMTOP_RECORD");
    if (!pat || !*pat)
        return;
    char msg[MT_CTRL_MSG_MAX];
    size_t len = strlen(pat);
    int err = ENAMETOOLONG;
    if (len >= sizeof g_rc.pattern) /* never a cut name: another file than the one asked for */
        snprintf(msg, sizeof msg,
                 "the file name is too long (%zu characters, at most %zu): %s (%s)", len,
                 sizeof g_rc.pattern - 1, strerror(err), errno_name(err));
    else
        err = start(memcpy(g_rc.pattern, pat, len + 1), mid_run, false, msg, sizeof msg);
    if (err) {
        /* the usual way to get there: an image before an exec recorded
         * into the same name (a wrapper: env, a shell script, a shim) */
        mt_log(MT_LOG_ERROR, "MEMTOP_RECORD: %s; not recording%s", msg,
               err == EEXIST && !mt_rec_pattern_has(pat, 'n')
                   ? " (to record each program a process execs, put %n in the name)"
                   : "");
        set_status(MT_REC_STATE_FAILED, err, NULL, msg);
    }
}

void mt_rec_init(char **envp)
{
    if (envp)
        env_start(envp, false);
}

void mt_rec_ctor(char **envp)
{
    if (!g_rc.env_checked)
        env_start(envp, true);
    if (mt_rec_on())
        mt_recw_start_thread();
}

void mt_rec_child_reset(void)
{
    mt_recw_child_reset();
    /* MT_RESET: only what differs (core_common.h); a single thread now */
    MT_RESET_ATOMIC(g_rc.finishing, false);
    MT_RESET_ATOMIC(g_rc.lock.held, 0);
    MT_RESET(g_rc.state, MT_REC_STATE_OFF);
    MT_RESET(g_rc.error, 0);
    MT_RESET(g_rc.recordings, 0);
    MT_RESET(g_rc.lease_ms, 0);
    MT_RESET(g_rc.end_reason, 0);
    MT_RESET(g_lease.ms, 0); /* the parent's viewer holds no lease on our recordings */
    MT_RESET(g_rc.path[0], '\0');
    MT_RESET(g_rc.message[0], '\0');
    MT_RESET(g_rc.bytes, 0);
    MT_RESET(g_rc.events, 0);
    MT_RESET(g_rc.dropped, 0);
    for (unsigned i = 0; i < MT_REC_WHY_MAX; i++)
        MT_RESET(g_rc.why[i], 0);
}

void mt_rec_child_start(void)
{
    if (!g_rc.pattern[0] || !mt_rec_pattern_per_process(g_rc.pattern))
        return;
    char msg[MT_CTRL_MSG_MAX];
    int err = start(g_rc.pattern, true, true, msg, sizeof msg);
    if (err) {
        mt_log(MT_LOG_WARN, "MEMTOP_RECORD in child %d: %s; not recording", (int)getpid(), msg);
        set_status(MT_REC_STATE_FAILED, err, NULL, msg);
        return;
    }
    mt_recw_start_thread();
}

void mt_rec_finish(unsigned reason)
{
    if (g_rc.state == MT_REC_STATE_ON && mt_w.pid == getpid())
        stop(reason);
}

bool mt_rec_exec_mine(void)
{
    return g_rc.state == MT_REC_STATE_ON && mt_w.pid == getpid();
}

/* Seals the recording for the execs in flight (hook_exec.c: the first of
 * them, under its exec lock, so that a second exec waits until the file
 * is sealed: its image must not replace ours mid-seal). */
bool mt_rec_exec_prepare(void)
{
    bool expect = false;
    if (!mt_rec_exec_mine() ||
        !atomic_compare_exchange_strong_explicit(&g_rc.finishing, &expect, true,
                                                 memory_order_acq_rel, memory_order_acquire))
        return false;
    if (mt_recw_seal(MT_DAT_END_EXEC))
        return true;
    atomic_store_explicit(&g_rc.finishing, false, memory_order_release);
    stop(MT_DAT_END_EXEC); /* a write error: finalize as far as possible */
    return false;
}

/* The last exec in flight failed (hook_exec.c): resume recording. */
void mt_rec_exec_undo(int err)
{
    bool resumed = mt_recw_unseal();
    atomic_store_explicit(&g_rc.finishing, false, memory_order_release);
    if (resumed)
        return;
    mt_spin_lock(&g_rc.lock);
    record_final_figures(false);
    g_rc.state = MT_REC_STATE_FAILED;
    g_rc.error = err;
    g_rc.end_reason = MT_DAT_END_EXEC; /* not the previous session's */
    snprintf(g_rc.message, sizeof g_rc.message,
             "exec failed (%s): the recording ended at the exec attempt", errno_name(err));
    mt_spin_unlock(&g_rc.lock);
}

/* Arms the lease of the session just started (beat: the header's
 * rec_lease_beat): it runs from now, on our clock. */
static void arm_lease(const uint64_t *beat)
{
    g_lease.ms = mt_g.cfg.lease_ms;
    g_lease.seen = __atomic_load_n(beat, __ATOMIC_RELAXED);
    g_lease.at_ns = mt_now_precise_ns();
    mt_spin_lock(&g_rc.lock);
    g_lease.rec = g_rc.recordings;
    g_rc.lease_ms = g_lease.ms;
    mt_spin_unlock(&g_rc.lock);
}

int mt_rec_cmd_start(const char *arg, const uint64_t *beat, char *msg, size_t cap)
{
    char buf[MT_CTRL_ARG_MAX];
    size_t n = strnlen(arg, sizeof buf - 1);
    memcpy(buf, arg, n); /* the segment can change under us: copy once */
    buf[n] = '\0';
    const char *path = mt_cull_cmd(mt_rec_order_cmd(buf)); /* read by the next session only */
    if (!path) {
        snprintf(msg, cap, "bad recording mode '%.200s' ([thread-order] [cull[=SECS]] PATH)", buf);
        return MT_CTRL_FAILED;
    }
    if (path[0] != '/') {
        snprintf(msg, cap, "the recording path must be absolute: '%.200s'", path);
        return MT_CTRL_FAILED;
    }
    /* a refused start ("already recording") leaves the running one's lease
     * as it is; a session started unleased is told apart by its number */
    if (start(path, true, false, msg, cap) != 0)
        return MT_CTRL_FAILED;
    if (beat)
        arm_lease(beat);
    mt_recw_start_thread();
    return MT_CTRL_OK;
}

/* Only a change of the beat renews: its value, and the viewer's clock and
 * pid, mean nothing here.  The beat is read before the clock, so that a
 * target that was itself stopped (SIGSTOP) for longer than the bound sees
 * the renewals made meanwhile before it looks at the time. */
void mt_rec_lease_check(const uint64_t *beat)
{
    if (!g_lease.ms)
        return;
    if (g_rc.state != MT_REC_STATE_ON || g_rc.recordings != g_lease.rec) {
        g_lease.ms = 0; /* that session ended some other way */
        return;
    }
    /* An exec's seal (resumed if the exec fails) or an exit is ending the
     * session: the lease stays armed and is looked at again next poll. */
    if (atomic_load_explicit(&g_rc.finishing, memory_order_acquire))
        return;
    uint64_t b = __atomic_load_n(beat, __ATOMIC_RELAXED);
    uint64_t now = mt_now_precise_ns();
    if (b != g_lease.seen) {
        g_lease.seen = b;
        g_lease.at_ns = now;
        return;
    }
    uint64_t bound = (uint64_t)g_lease.ms * 1000000ull;
    if (now - g_lease.at_ns < bound)
        return;
    unsigned ms = g_lease.ms;
    stop(MT_DAT_END_LEASE);
    /* Ours only if this stop ended it: an exit or an exec's seal that won
     * the race keeps its own reason and message (and the lease stays
     * armed until the session is seen to be over, or resumed). */
    mt_spin_lock(&g_rc.lock);
    bool ours = g_rc.state == MT_REC_STATE_STOPPED && g_rc.end_reason == MT_DAT_END_LEASE;
    if (ours) {
        g_lease.ms = 0;
        snprintf(g_rc.message, sizeof g_rc.message,
                 "stopped: the viewer that started it did not renew it for %u.%03u s (it died, "
                 "hung or was stopped)",
                 ms / 1000, ms % 1000);
    }
    mt_spin_unlock(&g_rc.lock);
    /* info, not a warning: the target's stderr is the program's (the
     * status and the file's END say it) */
    if (ours)
        mt_log(MT_LOG_INFO,
               "recording %s stopped: the viewer that started it did not renew it for %u.%03u s",
               g_rc.path, ms / 1000, ms % 1000);
}

/* RECORD_STOP's arg: "" (whatever runs), or MT_CTRL_STOP_RECORDING N (only
 * the process's Nth recording) into *n (0: any); false if malformed. */
static bool stop_arg(const char *arg, uint64_t *n)
{
    size_t k = sizeof MT_CTRL_STOP_RECORDING - 1;
    *n = 0;
    return !arg[0] || (strncmp(arg, MT_CTRL_STOP_RECORDING, k) == 0 &&
                       mt_parse_u64(arg + k, 1, UINT64_MAX, n));
}

int mt_rec_cmd_stop(const char *arg, char *msg, size_t cap)
{
    char buf[MT_CTRL_ARG_MAX];
    size_t len = strnlen(arg, sizeof buf - 1);
    memcpy(buf, arg, len); /* the segment can change under us: copy once */
    buf[len] = '\0';
    uint64_t n;
    if (!stop_arg(buf, &n)) {
        snprintf(msg, cap, "bad argument: not \"\" or \"" MT_CTRL_STOP_RECORDING "N\"");
        return MT_CTRL_FAILED;
    }
    if (g_rc.state != MT_REC_STATE_ON) {
        snprintf(msg, cap, "not recording");
        return MT_CTRL_FAILED;
    }
    /* A viewer stops the recording it saw: not one started since by
     * another viewer (between its status read and this command). */
    if (n && n != g_rc.recordings) {
        snprintf(msg, cap, "recording %llu is over (recording %llu runs: not stopped)",
                 (unsigned long long)n, (unsigned long long)g_rc.recordings);
        return MT_CTRL_FAILED;
    }
    uint64_t bytes = stop(MT_DAT_END_STOP);
    if (g_rc.state == MT_REC_STATE_FAILED) {
        snprintf(msg, cap, "%s", g_rc.message);
        return MT_CTRL_FAILED;
    }
    snprintf(msg, cap, "%llu bytes written to %s", (unsigned long long)bytes, g_rc.path);
    return MT_CTRL_OK;
}
