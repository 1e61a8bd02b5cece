/* dat_pipe.c -- the first pass's reader on a producer thread, its results
 * handed over through a ring (see dat_pipe.h).
 *
 * The ring: slots [tail, head) are published, in order; the producer
 * fills slot head % SLOTS while head - tail < SLOTS and publishes it with
 * a release store of head; the consumer reads slot tail % SLOTS after an
 * acquire load of head and gives it back with a release store of tail
 * (after it is done with it: a batch is used in place).  Either side spins
 * a little when the other is behind, then sleeps on a condition variable;
 * the side that moves an index wakes it once the ring is half full or half
 * empty (release, publish; the producer's end always), the seq_cst store
 * of the index and load of `sleepers` against the sleeper's seq_cst
 * increment and load of the index under the mutex: one of the two sees
 * the other.  Only one side can sleep at a time (the ring empty, or full),
 * and the other then moves its index past the half-way mark before it can
 * wait in turn. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "dat_pipe.h"
#include "dat_reader_split.h"
#include "shm_guard.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SLOTS MT_DAT_PIPE_SLOTS
#define SPINS 256u /* pauses (~10 us) before a side sleeps */

enum slot_type {
    S_EVENT, /* mt_dat_next's result */
    S_BATCH, /* mt_dat_split_next_batch's result (n events) */
};

typedef struct slot {
    enum slot_type type;
    mt_errc rc;
    bool told; /* mt_dat_tell after the call, and its position */
    mt_dat_pos pos;
    size_t n;
    mt_err err;      /* rc neither MT_OK nor MT_E_EMPTY */
    mt_dsplit_out o; /* frames started; an EVENTS2 event unapplied */
    union {
        mt_dat_event ev;
        mt_draw w[MT_DAT_PIPE_BATCH];
    } u;
} slot;

struct mt_dat_pipe {
    mt_dat_reader *r;
    mt_dat_block_fn fn;
    void *ctx;
    bool threaded;
    /* the batch's room (the events applied, with two threads) */
    mt_dat_hev *hev;
    /* the pipeline */
    pthread_t th;
    slot *ring;
    _Atomic uint64_t head, tail;
    _Atomic bool done, stop; /* the producer published its last slot; asked to stop */
    _Atomic unsigned sleepers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the consumer's side */
    bool told;
    mt_dat_pos pos;
    bool failed; /* a result gave an error: nothing more */
    /* MEMTOP_READ_STATS */
    bool stats;
    uint64_t waits[2];         /* producer, consumer */
    double pcpu, ccpu0, wall0; /* s */
};

/* The calling thread's CPU time, s. */
static double thread_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Two threads pay only when the second gets a core of its own: with the
 * CPUs busy (the last minute's load above all but one), each wait for the
 * other thread ends in the run queue, and the pass was slower by wall
 * time than on one thread (docs/performance.md, round readpar).  The CPUs
 * counted are those this process may run on (taskset, a container's
 * cpuset), not all that are online.  MEMTOP_READ_THREADS: 1 or 2 forces,
 * unset, empty or 0 chooses. */
unsigned mt_dat_pipe_threads(void)
{
    const char *s = getenv("MEMTOP_READ_THREADS");
    if (s && *s && atoi(s) > 0)
        return atoi(s) == 1 ? 1 : 2;
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
    double load;
    if (cpus < 2 || (getloadavg(&load, 1) == 1 && load > (double)cpus - 1))
        return 1;
    return 2;
}

/* --- waiting -------------------------------------------------------- */

static void wake(mt_dat_pipe *p)
{
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

/* The slots published and not given back. */
static uint64_t used(mt_dat_pipe *p)
{
    return atomic_load_explicit(&p->head, memory_order_relaxed) -
           atomic_load_explicit(&p->tail, memory_order_relaxed);
}

/* Producer: true when slot head % SLOTS is free, false when asked to stop. */
static bool room(mt_dat_pipe *p, uint64_t head)
{
    for (unsigned i = 0; i < SPINS; i++) {
        if (atomic_load_explicit(&p->stop, memory_order_relaxed))
            return false;
        if (head - atomic_load_explicit(&p->tail, memory_order_acquire) < SLOTS)
            return true;
        __builtin_ia32_pause();
    }
    p->waits[0]++;
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while (!atomic_load(&p->stop) && head - atomic_load(&p->tail) >= SLOTS)
        pthread_cond_wait(&p->cv, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return !atomic_load(&p->stop);
}

/* Consumer: the next published slot, or NULL when the producer is done
 * and every slot was taken. */
static slot *next_slot(mt_dat_pipe *p)
{
    uint64_t tail = atomic_load_explicit(&p->tail, memory_order_relaxed);
    for (unsigned i = 0;; i++) {
        if (atomic_load_explicit(&p->head, memory_order_acquire) != tail)
            return &p->ring[tail % SLOTS];
        if (atomic_load_explicit(&p->done, memory_order_acquire) &&
            atomic_load_explicit(&p->head, memory_order_acquire) == tail)
            return NULL;
        if (i < SPINS) {
            __builtin_ia32_pause();
            continue;
        }
        p->waits[1]++;
        pthread_mutex_lock(&p->mu);
        atomic_fetch_add(&p->sleepers, 1);
        while (atomic_load(&p->head) == tail && !atomic_load(&p->done))
            pthread_cond_wait(&p->cv, &p->mu);
        atomic_fetch_sub(&p->sleepers, 1);
        pthread_mutex_unlock(&p->mu);
        i = 0;
    }
}

/* A sleeping producer is woken once the ring is half empty, a sleeping
 * consumer once it is half full (or the producer is done): a wake-up, a
 * system call and the sleeper's way back onto a core, per SLOTS / 2 slots
 * rather than per slot. */
static void release(mt_dat_pipe *p)
{
    atomic_store(&p->tail, atomic_load_explicit(&p->tail, memory_order_relaxed) + 1);
    if (used(p) <= SLOTS / 2)
        wake(p);
}

/* --- the producer ----------------------------------------------------- */

/* The slot to fill (NULL: stop). */
static slot *take(mt_dat_pipe *p, enum slot_type type)
{
    uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
    if (!room(p, head))
        return NULL;
    slot *s = &p->ring[head % SLOTS];
    s->type = type;
    s->n = 0;
    return s;
}

/* A call's result into s, published: whether the reader can restart
 * after it (mt_dat_tell). */
static bool publish(mt_dat_pipe *p, slot *s, mt_errc rc)
{
    s->rc = rc;
    bool told = s->told = rc == MT_OK && mt_dat_tell(p->r, &s->pos);
    mt_dat_split_take(p->r, &s->o);
    atomic_store(&p->head, atomic_load_explicit(&p->head, memory_order_relaxed) + 1);
    if (used(p) >= SLOTS / 2)
        wake(p);
    return told;
}

/* The rest of an EVENTS2 record, batch by batch.  False when the
 * producer is to end. */
static bool batches(mt_dat_pipe *p)
{
    for (;;) {
        slot *s = take(p, S_BATCH);
        if (!s)
            return false;
        mt_errc rc = mt_dat_split_next_batch(p->r, s->u.w, MT_DAT_PIPE_BATCH, &s->n, &s->err);
        size_t n = s->n;
        publish(p, s, rc);
        if (rc != MT_OK)
            return false;
        if (!n)
            return true;
    }
}

/* The calls the replay's first pass makes (replay_open.c read_events),
 * in its order; its flushes are the consumer's own (the frame context is
 * on its side). */
static void produce(mt_dat_pipe *p)
{
    for (;;) {
        slot *s = take(p, S_EVENT);
        if (!s)
            return;
        mt_errc rc = mt_dat_next(p->r, &s->u.ev, &s->err);
        mt_dat_kind kind = s->u.ev.kind;
        bool told = publish(p, s, rc);
        if (rc != MT_OK)
            return;
        if ((kind == MT_DAT_ALLOC || kind == MT_DAT_FREE) && !told && !batches(p))
            return;
    }
}

static void *producer(void *arg)
{
    mt_dat_pipe *p = arg;
    produce(p);
    if (p->stats)
        p->pcpu = thread_cpu();
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->done, true);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* --- the consumer ----------------------------------------------------- */

/* The next result slot (its frame starts and events not applied yet);
 * NULL with *rc when there is none. */
static slot *result(mt_dat_pipe *p, enum slot_type type, mt_errc *rc, mt_err *err)
{
    slot *s = p->failed ? NULL : next_slot(p);
    *rc = MT_OK;
    if (p->failed)
        *rc = mt_err_set(err, MT_E_CORRUPT, "recording: read after an error");
    else if (!s)
        *rc = mt_err_set(err, MT_E_CORRUPT, "recording: read after its end");
    else if (s->type != type) /* the calls differ from the producer's: a bug */
        *rc = mt_err_set(err, MT_E_CORRUPT, "recording: reading thread out of step");
    if (*rc) {
        p->failed = true;
        return NULL;
    }
    return s;
}

/* The rest of the call s holds, on this thread, in the one-thread call's
 * order: the frames it started (their blocks given), its n events w
 * applied into out (*done of them), the context's checks of the event
 * whose columns failed, then the producer's result. */
static mt_errc settle(mt_dat_pipe *p, const slot *s, const mt_draw *w, size_t n, mt_dat_hev *out,
                      size_t *done, mt_err *err)
{
    *done = 0;
    mt_errc rc = mt_dat_split_frames(p->r, s->o.frames, err);
    if (!rc && n)
        rc = mt_dat_split_apply(p->r, &s->o, w, n, out, done, err);
    bool failed = s->rc != MT_OK && s->rc != MT_E_EMPTY;
    if (!rc && failed && s->o.raw)
        rc = mt_dat_split_partial(p->r, &s->o, &w[n], s->o.stage, err);
    if (!rc) {
        rc = s->rc;
        if (failed)
            *err = s->err;
    }
    p->told = rc == MT_OK && s->told;
    p->pos = s->pos;
    if (rc != MT_OK && rc != MT_E_EMPTY)
        p->failed = true;
    return rc;
}

mt_errc mt_dat_pipe_next(mt_dat_pipe *p, mt_dat_event *ev, mt_err *err)
{
    if (!p->threaded)
        return mt_dat_next(p->r, ev, err);
    mt_errc rc;
    slot *s = result(p, S_EVENT, &rc, err);
    if (!s)
        return rc;
    bool raw = s->o.raw && s->rc == MT_OK; /* an EVENTS2 event, to apply */
    mt_dat_hev h;
    size_t done;
    rc = settle(p, s, &s->o.w, raw, &h, &done, err);
    if (rc == MT_OK) {
        ev->kind = s->u.ev.kind;
        ev->t_ns = s->u.ev.t_ns;
        if (raw)
            ev->u.ev = h.ev;
        else
            ev->u = s->u.ev.u;
    }
    release(p);
    return rc;
}

mt_errc mt_dat_pipe_next_batch(mt_dat_pipe *p, mt_dat_hev **out, size_t *n, mt_err *err)
{
    *n = 0;
    *out = p->hev;
    if (!p->threaded)
        return mt_dat_next_batch(p->r, p->hev, MT_DAT_PIPE_BATCH, n, err);
    mt_errc rc;
    slot *s = result(p, S_BATCH, &rc, err);
    if (!s)
        return rc;
    rc = settle(p, s, s->u.w, s->n, p->hev, n, err);
    release(p);
    return rc;
}

bool mt_dat_pipe_tell(const mt_dat_pipe *p, mt_dat_pos *pos)
{
    if (!p->threaded)
        return mt_dat_tell(p->r, pos);
    if (p->told)
        *pos = p->pos;
    return p->told;
}

mt_errc mt_dat_pipe_flush_blocks(mt_dat_pipe *p, mt_err *err)
{
    /* with two threads as well: the frame context is this thread's */
    return mt_dat_flush_blocks(p->r, err);
}

/* --- start and end ------------------------------------------------------ */

mt_dat_pipe *mt_dat_pipe_start(mt_dat_reader *r, mt_dat_block_fn fn, void *ctx, unsigned threads,
                               mt_err *err)
{
    mt_dat_pipe *p = calloc(1, sizeof *p);
    if (!p) {
        mt_err_set(err, MT_E_NOMEM, "out of memory for the reader");
        return NULL;
    }
    p->r = r;
    p->fn = fn;
    p->ctx = ctx;
    const char *st = getenv("MEMTOP_READ_STATS");
    p->stats = st && *st == '1';
    if (p->stats) {
        p->ccpu0 = thread_cpu();
        p->wall0 = now();
    }
    p->hev = malloc(MT_DAT_PIPE_BATCH * sizeof *p->hev);
    if (!p->hev) {
        free(p);
        mt_err_set(err, MT_E_NOMEM, "out of memory for the reader");
        return NULL;
    }
    mt_dat_defer_blocks(r, fn, ctx);
    if ((threads ? threads : mt_dat_pipe_threads()) >= 2) {
        p->told = mt_dat_tell(r, &p->pos);
        p->ring = malloc(SLOTS * sizeof *p->ring);
        if (p->ring && !pthread_mutex_init(&p->mu, NULL)) {
            if (!pthread_cond_init(&p->cv, NULL)) {
                mt_dat_split(r, true);
                /* the viewer's signals stay the caller's; faults stay deliverable so
                 * that a crash still restores the terminal (shm_guard.h) */
                sigset_t all, old;
                mt_guard_thread_mask(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                p->threaded = pthread_create(&p->th, NULL, producer, p) == 0;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (p->threaded)
                    return p;
                mt_dat_split(r, false);
                pthread_cond_destroy(&p->cv);
            }
            pthread_mutex_destroy(&p->mu);
        }
        free(p->ring); /* no thread: read on this one */
        p->ring = NULL;
    }
    return p;
}

static void print_stats(mt_dat_pipe *p)
{
    fprintf(stderr,
            "memtop: read pass: %s; wall %.3f s; consumer CPU %.3f s, waits %llu; producer "
            "CPU %.3f s, waits %llu\n",
            p->threaded ? "2 threads" : "1 thread", now() - p->wall0, thread_cpu() - p->ccpu0,
            (unsigned long long)p->waits[1], p->pcpu, (unsigned long long)p->waits[0]);
}

void mt_dat_pipe_end(mt_dat_pipe *p)
{
    if (!p)
        return;
    if (p->threaded) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->stop, true);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        mt_dat_split(p->r, false);
    }
    mt_dat_defer_blocks(p->r, NULL, NULL);
    if (p->stats)
        print_stats(p);
    free(p->ring);
    free(p->hev);
    free(p);
}
