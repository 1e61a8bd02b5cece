/* test_record_disk.c -- unit test of the drop policy's "the disk is
 * behind" judgement (src/preload/record/record_disk.c), in real time: a
 * "writer" thread makes timed writes that sleep (as the tests' slow disk,
 * MEMTOP_TEST_WRITE_DELAY_US, does), and the main thread, as a hook at the
 * buffer's bound would, asks mt_recw_disk_behind while one is under way.
 *
 *  - one stall of 600 ms on a disk that otherwise keeps up (writes of 5 ms
 *    every 50 ms; the stall right after the session began, or after 1.5 s
 *    of those): never "behind" (the old rule, a write asleep for 100 ms,
 *    said "behind" at 100 ms and the hooks dropped);
 *  - a disk that cannot keep up (writes that each sleep 700 ms, one after
 *    the other): "behind" during the third, 200 ms into it;
 *  - after those, a write the writer runs in (preempted, or copying to
 *    tmpfs), or no write under way: not "behind".
 * And the hooks' other question, mt_recw_worked: a writer thread that
 * spins works, one that sleeps does not, nor one that is gone or was
 * replaced between the looks.
 * Exit 0 when every answer is right. */
#define _GNU_SOURCE
#include "record_writer.h"

#include "core_clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

mt_recw mt_w; /* record_disk.c's only link to the session */

void mt_recw_note_write(uint64_t ns)
{
    (void)ns;
}

static int g_fail;

static void check(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (!ok)
        g_fail = 1;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static uint64_t now_ns(void)
{
    return mt_mono_raw_ns(CLOCK_MONOTONIC);
}

typedef struct plan {
    unsigned n;          /* writes */
    const unsigned *ms;  /* each one's sleep */
    unsigned gap_ms;     /* asleep outside the writes, after each */
    unsigned spin_from;  /* writes from this one on (0-based) run instead (0: none) */
    _Atomic unsigned at; /* the write under way (1-based); 0 before, n + 1 after */
} plan;

static void spin_ms(unsigned ms)
{
    uint64_t end = now_ns() + ms * 1000000ull;
    while (now_ns() < end)
        ;
}

static void *writer(void *arg)
{
    plan *p = arg;
    for (unsigned i = 0; i < p->n; i++) {
        mt_recw_wtime w;
        mt_recw_write_begin(&w);
        atomic_store(&p->at, i + 1);
        if (p->spin_from && i >= p->spin_from)
            spin_ms(p->ms[i]);
        else
            sleep_ms(p->ms[i]);
        mt_recw_write_end(&w);
        sleep_ms(p->gap_ms);
    }
    atomic_store(&p->at, p->n + 1);
    return NULL;
}

/* Runs the plan and asks, every 20 ms while write `which` is under way and
 * has lasted at least `after_ms`, whether the disk is behind; returns how
 * many of those asks said yes, and how many asks there were (*asks). */
static unsigned run(plan *p, unsigned which, unsigned after_ms, unsigned *asks)
{
    mt_recw_disk_reset();
    atomic_store(&p->at, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, writer, p) != 0) {
        perror("pthread_create");
        exit(2);
    }
    unsigned yes = 0;
    *asks = 0;
    while (atomic_load(&p->at) <= p->n) {
        sleep_ms(20);
        uint64_t now = now_ns();
        uint64_t since = atomic_load_explicit(&mt_w.write_since, memory_order_relaxed);
        if (atomic_load(&p->at) != which || !since || now - since < after_ms * 1000000ull)
            continue;
        /* Not in the write's last 100 ms: on a loaded machine a writer whose
         * sleep ended may wait there for a core, runnable (not "asleep"). */
        if (now - since + 100000000ull > p->ms[which - 1] * 1000000ull)
            continue;
        ++*asks;
        yes += mt_recw_disk_behind(now);
    }
    pthread_join(th, NULL);
    return yes;
}

/* The writer thread of mt_recw_worked: spins or sleeps for ms, its tid in
 * mt_w.thread_tid meanwhile. */
typedef struct worker {
    unsigned ms;
    bool spin;
    _Atomic int tid;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    atomic_store(&w->tid, (int)syscall(SYS_gettid));
    if (w->spin)
        spin_ms(w->ms);
    else
        sleep_ms(w->ms);
    return NULL;
}

/* Whether a writer that spins (or sleeps) counts as working over 300 ms,
 * looked at 20 ms after it began; with `other`, the tid changes between
 * the looks (another writer). */
static bool worked(bool spin, bool other)
{
    worker w = {.ms = 500, .spin = spin};
    pthread_t th;
    if (pthread_create(&th, NULL, work, &w) != 0) {
        perror("pthread_create");
        exit(2);
    }
    while (!atomic_load(&w.tid))
        ;
    atomic_store(&mt_w.thread_tid, atomic_load(&w.tid));
    sleep_ms(20);
    mt_recw_look look;
    mt_recw_look_take(&look, now_ns());
    sleep_ms(300);
    if (other)
        atomic_store(&mt_w.thread_tid, (int)syscall(SYS_gettid));
    bool yes = mt_recw_worked(&look, now_ns());
    pthread_join(th, NULL);
    atomic_store(&mt_w.thread_tid, 0);
    return yes;
}

int main(void)
{
    /* The hooks' wait cap (record_buffer.c): does the writer work? */
    check(worked(true, false), "a writer that spins works");
    check(!worked(false, false), "a writer that sleeps does not work");
    check(!worked(true, true), "a writer that changed (another tid) is not judged to work");
    mt_recw_look none;
    mt_recw_look_take(&none, now_ns());
    sleep_ms(10);
    check(!mt_recw_worked(&none, now_ns()), "no writer thread: it does not work");

    unsigned asks, yes;

    /* One stall, first thing, then fast writes (5 ms every 50 ms). */
    unsigned stall[31] = {600};
    for (unsigned i = 1; i < 31; i++)
        stall[i] = 5;
    plan p1 = {.n = 31, .ms = stall, .gap_ms = 45};
    yes = run(&p1, 1, 100, &asks);
    check(asks > 0 && yes == 0, "a lone 600 ms stall of a new session is waited for");

    /* The same stall after 1.5 s of fast writes. */
    unsigned later[32];
    for (unsigned i = 0; i < 32; i++)
        later[i] = i == 30 ? 600 : 5;
    plan p2 = {.n = 32, .ms = later, .gap_ms = 45};
    yes = run(&p2, 31, 100, &asks);
    check(asks > 0 && yes == 0, "a lone 600 ms stall after 1.5 s of writes is waited for");

    /* A disk that cannot keep up: every write sleeps 700 ms. */
    unsigned slow[3] = {700, 700, 700};
    plan p3 = {.n = 3, .ms = slow};
    yes = run(&p3, 3, 200, &asks);
    check(asks > 0 && yes == asks, "writes that sleep 700 ms each: the disk is behind");

    /* The same history, then a write the writer runs in (preempted, or
     * copying to tmpfs): not a slow disk. */
    unsigned busy[3] = {700, 700, 400};
    plan p4 = {.n = 3, .ms = busy, .spin_from = 2};
    yes = run(&p4, 3, 150, &asks);
    check(asks > 0 && yes == 0, "a writer that runs in its write: the disk is not behind");

    check(!mt_recw_disk_behind(now_ns()), "no write under way: the disk is not behind");
    return g_fail;
}
