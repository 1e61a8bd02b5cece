/* record_disk.c -- does the disk keep up with the recording, and does the
 * writer thread work?  The hooks' drop policy (record_buffer.c) asks at the
 * buffer's bound: drop when the disk cannot keep up, wait for the writer
 * otherwise, and longer for a writer that works (runs, or waits for a core
 * on a loaded machine) than for one that sleeps (mt_recw_worked).
 *
 * One write(2) that sleeps long is not enough: a disk that keeps up on
 * average (a VM's disk shared with other jobs, writeback throttling) has
 * those, and the buffers absorb them.  The disk is behind when the writer
 * sleeps in a write(2) to the file that has lasted MT_DISK_SLOW_NS *and*
 * it slept inside writes for at least half of the recent past: the current
 * window of MT_DISK_WINDOW_NS and the one before it, the write under way
 * included, and at least MT_DISK_SPAN_MIN_NS (so a lone stall must last
 * 1 s, the hooks' wait cap, to count).  "Slept" is the write's wall time less the time the
 * writer ran or waited for a core in it (/proc/thread-self/schedstat), so a
 * writer preempted inside a write (a loaded machine, tmpfs) is not a slow
 * disk; without schedstat, less the time it ran only.
 *
 * The writer (under mt_w.lock) updates the windows after each write; the
 * hooks read them under a sequence counter (a seqlock: the writer makes it
 * odd while it updates, a reader that sees it change reads again).
 */
#define _GNU_SOURCE
#include "record_writer.h"

#include "core_clock.h"
#include "core_nocancel.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_DISK_SLOW_NS 100000000ull                /* a write(2) this long may be a slow disk */
#define MT_DISK_WINDOW_NS 1000000000ull             /* the writer's sleep is summed per window */
#define MT_DISK_SPAN_MIN_NS (2 * MT_DISK_WINDOW_NS) /* judged over at least this long */

static struct {
    _Atomic uint32_t seq;
    _Atomic uint64_t t0, slept;           /* the current window: since t0 */
    _Atomic uint64_t prev_t0, prev_slept; /* the one before (prev_t0 0: none) */
} g_pace;

/* Reads /proc/self/task/TID/NAME (tid 0: /proc/thread-self/NAME) into buf,
 * NUL-terminated; the bytes read, 0 or less if unreadable.  Open, read and
 * close only: the writer calls it around its writes, and mt_proc_read_file
 * (core_procinfo.c) would bring more of /proc's readers into the tests
 * that build this file alone.  Hooks call it on the program's thread (the
 * drop policy's questions): open, read and close are cancellation points
 * (core_nocancel.h). */
static ssize_t read_task_file(int tid, const char *name, char *buf, size_t cap)
{
    char path[64] = "/proc/thread-self/";
    size_t k = strlen(path);
    if (tid) {
        char num[12];
        int n = 0;
        for (unsigned v = (unsigned)tid; n == 0 || v; v /= 10)
            num[n++] = (char)('0' + v % 10);
        k = strlen("/proc/self/task/");
        memcpy(path, "/proc/self/task/", k);
        while (n)
            path[k++] = num[--n];
        path[k++] = '/';
    }
    size_t len = strlen(name);
    if (k + len >= sizeof path)
        return -1;
    memcpy(path + k, name, len + 1);
    int cancel = mt_nocancel_begin();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = -1;
    if (fd >= 0) {
        got = read(fd, buf, cap - 1);
        close(fd);
    }
    mt_nocancel_end(cancel);
    buf[got > 0 ? got : 0] = '\0';
    return got;
}

/* Thread tid's (0: the calling thread's) time on a CPU and waiting for
 * one (ns), from schedstat; false if unreadable. */
bool mt_recw_sched_times(int tid, uint64_t *run, uint64_t *wait)
{
    char buf[96];
    if (read_task_file(tid, "schedstat", buf, sizeof buf) <= 0)
        return false;
    uint64_t v[2] = {0, 0};
    const char *p = buf;
    for (unsigned i = 0; i < 2; i++) {
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            v[i] = v[i] * 10 + (uint64_t)(*p++ - '0');
        if (*p++ != ' ')
            return false;
    }
    *run = v[0];
    *wait = v[1];
    return true;
}

static uint64_t thread_cpu_ns(void)
{
    return mt_mono_raw_ns(CLOCK_THREAD_CPUTIME_ID);
}

void mt_recw_disk_reset(void)
{
    atomic_fetch_add_explicit(&g_pace.seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&g_pace.t0, mt_mono_raw_ns(CLOCK_MONOTONIC), memory_order_relaxed);
    atomic_store_explicit(&g_pace.slept, 0, memory_order_relaxed);
    atomic_store_explicit(&g_pace.prev_t0, 0, memory_order_relaxed);
    atomic_store_explicit(&g_pace.prev_slept, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_pace.seq, 1, memory_order_release);
}

void mt_recw_write_begin(mt_recw_wtime *w)
{
    w->sched = mt_recw_sched_times(0, &w->run, &w->wait);
    if (!w->sched)
        w->run = thread_cpu_ns();
    w->t0 = mt_mono_raw_ns(CLOCK_MONOTONIC);
    atomic_store_explicit(&mt_w.write_tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    atomic_store_explicit(&mt_w.write_since, w->t0, memory_order_relaxed);
}

/* The write's time asleep, and the windows updated (lock held). */
void mt_recw_write_end(const mt_recw_wtime *w)
{
    atomic_store_explicit(&mt_w.write_since, 0, memory_order_relaxed);
    uint64_t t1 = mt_mono_raw_ns(CLOCK_MONOTONIC), run = 0, wait = 0, busy;
    if (w->sched && mt_recw_sched_times(0, &run, &wait))
        busy = (run - w->run) + (wait - w->wait);
    else
        busy = thread_cpu_ns() - w->run;
    uint64_t wall = t1 - w->t0, slept = wall > busy ? wall - busy : 0;
    mt_recw_note_write(wall);

    uint64_t t0 = atomic_load_explicit(&g_pace.t0, memory_order_relaxed);
    uint64_t sum = atomic_load_explicit(&g_pace.slept, memory_order_relaxed) + slept;
    atomic_fetch_add_explicit(&g_pace.seq, 1, memory_order_relaxed); /* odd: updating */
    atomic_thread_fence(memory_order_release);
    if (t1 - t0 >= MT_DISK_WINDOW_NS) {
        atomic_store_explicit(&g_pace.prev_t0, t0, memory_order_relaxed);
        atomic_store_explicit(&g_pace.prev_slept, sum, memory_order_relaxed);
        atomic_store_explicit(&g_pace.t0, t1, memory_order_relaxed);
        sum = 0;
    }
    atomic_store_explicit(&g_pace.slept, sum, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_pace.seq, 1, memory_order_release);
}

/* Whether thread tid of this process sleeps (state S or D in
 * /proc/self/task/TID/stat: blocked on the disk, or on a throttle) rather
 * than runs or waits for a core (R).  Unknown: true. */
static bool thread_sleeps(int tid)
{
    char buf[512];
    if (read_task_file(tid, "stat", buf, sizeof buf) <= 0)
        return true;
    const char *paren = strrchr(buf, ')'); /* the name may hold spaces and ')' */
    return !paren || paren[1] != ' ' || paren[2] != 'R';
}

#define MT_LOOK_NO_SCHED UINT64_MAX /* busy: schedstat unreadable */

void mt_recw_look_take(mt_recw_look *l, uint64_t now)
{
    uint64_t run, wait;
    l->t = now;
    l->tid = atomic_load_explicit(&mt_w.thread_tid, memory_order_relaxed);
    l->busy = l->tid && mt_recw_sched_times(l->tid, &run, &wait) ? run + wait : MT_LOOK_NO_SCHED;
}

/* A writer runnable now works: schedstat adds a wait for a core to the
 * thread's run_delay only once it gets one (sched_info_arrive), so a
 * writer starved since the look shows neither run nor wait time yet.
 * Else schedstat's share; without it, sleeping now stands for the whole
 * time. */
bool mt_recw_worked(const mt_recw_look *l, uint64_t now)
{
    uint64_t run, wait;
    if (!l->tid || l->tid != atomic_load_explicit(&mt_w.thread_tid, memory_order_relaxed) ||
        now <= l->t)
        return false;
    if (!thread_sleeps(l->tid))
        return true;
    if (l->busy == MT_LOOK_NO_SCHED || !mt_recw_sched_times(l->tid, &run, &wait))
        return false;
    uint64_t busy = run + wait - l->busy;
    return busy >= (now - l->t) / 2;
}

/* The windows' start and the writer's sleep in them (a consistent copy). */
static void read_pace(uint64_t *since, uint64_t *slept)
{
    for (unsigned tries = 0; tries < 64; tries++) {
        uint32_t s0 = atomic_load_explicit(&g_pace.seq, memory_order_acquire);
        uint64_t t0 = atomic_load_explicit(&g_pace.t0, memory_order_relaxed);
        uint64_t a = atomic_load_explicit(&g_pace.slept, memory_order_relaxed);
        uint64_t pt0 = atomic_load_explicit(&g_pace.prev_t0, memory_order_relaxed);
        uint64_t b = atomic_load_explicit(&g_pace.prev_slept, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if ((s0 & 1u) || atomic_load_explicit(&g_pace.seq, memory_order_relaxed) != s0)
            continue;
        *since = pt0 ? pt0 : t0;
        *slept = a + b;
        return;
    }
    *since = *slept = 0; /* the writer keeps updating: judge by the write under way alone */
}

/* A write(2) that began at `at` (0: none) has lasted MT_DISK_SLOW_NS. */
static bool slow_since(uint64_t at, uint64_t now)
{
    return at && now > at && now - at >= MT_DISK_SLOW_NS;
}

bool mt_recw_write_slow(uint64_t now)
{
    int tid = atomic_load_explicit(&mt_w.write_tid, memory_order_relaxed);
    return slow_since(atomic_load_explicit(&mt_w.write_since, memory_order_relaxed), now) &&
           thread_sleeps(tid);
}

bool mt_recw_disk_behind(uint64_t now)
{
    int tid = atomic_load_explicit(&mt_w.write_tid, memory_order_relaxed);
    uint64_t at = atomic_load_explicit(&mt_w.write_since, memory_order_relaxed);
    if (!slow_since(at, now) || !thread_sleeps(tid))
        return false;
    uint64_t since, slept;
    read_pace(&since, &slept);
    if (!since || since > at)
        since = at;
    slept += now - at; /* the write under way: asleep now, and so counted whole */
    uint64_t span = now - since;
    if (span < MT_DISK_SPAN_MIN_NS) /* a young session: one stall alone is not "behind" */
        span = MT_DISK_SPAN_MIN_NS;
    return slept >= span / 2;
}
