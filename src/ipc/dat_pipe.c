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
 * the other.  The waker takes and drops the mutex, then broadcasts
 * (wake()): a sleeper that missed the index is then inside
 * pthread_cond_wait, and the woken side does not wait for a mutex the
 * waker still holds.  Only one side can sleep at a time (the ring empty,
 * or full), and the other then moves its index past the half-way mark
 * before it can wait in turn.
 *
 * The ring is larger than most cores' L2 (256 slots, 3.2 MB): by the time
 * the producer decodes into a slot again, the consumer's core has evicted
 * its lines, and the producer's stores find them in the shared L3 rather
 * than taking each over from the other core.  With 32 slots (0.4 MB)
 * every store did, and on an idle 2-core machine the producer took more
 * CPU than the whole pass on one thread: two threads were no faster than
 * one, and slower on two of the four recordings timed (docs/performance.md,
 * "Reading, twelfth round", which also measured streaming stores instead). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "dat_pipe.h"
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
#define BLOCKS_PER_SLOT (sizeof(mt_dat_hev) * MT_DAT_PIPE_BATCH / sizeof(mt_dat_block))

enum slot_type {
    S_BLOCKS,  /* blocks a flush gave (n) */
    S_FLUSHED, /* the producer's flush at this point is complete */
    S_EVENT,   /* mt_dat_next's result */
    S_BATCH,   /* mt_dat_next_batch's result (n events) */
};

typedef struct slot {
    enum slot_type type;
    mt_errc rc;
    bool told; /* mt_dat_tell after the call, and its position */
    mt_dat_pos pos;
    size_t n;
    mt_err err; /* rc neither MT_OK nor MT_E_EMPTY */
    union {
        mt_dat_event ev;
        mt_dat_hev hev[MT_DAT_PIPE_BATCH];
        mt_dat_block blk[BLOCKS_PER_SLOT];
    } u;
} slot;

struct mt_dat_pipe {
    mt_dat_reader *r;
    mt_dat_block_fn fn;
    void *ctx;
    bool threaded;
    /* one thread: the batch's room and the reader's own tell */
    mt_dat_hev *hev;
    /* the pipeline */
    pthread_t th;
    slot *ring;
    _Atomic uint64_t head, tail;
    _Atomic bool done, stop; /* the producer published its last slot; asked to stop */
    _Atomic unsigned sleepers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the producer's side */
    slot *fill; /* the slot being filled, or NULL */
    /* the consumer's side */
    bool held; /* slot tail % SLOTS is still in use */
    bool told;
    mt_dat_pos pos;
    bool failed;  /* a result gave an error: nothing more */
    bool at_mark; /* a FLUSHED mark taken since the last result: flushed here */
    /* MEMTOP_READ_STATS */
    bool stats;
    bool ahead;                /* the consumer decompresses ahead (MEMTOP_READ_AHEAD) */
    uint64_t helped;           /* chunks it decompressed */
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

/* Wakes the other side if it sleeps or is about to.  The sleeper counts
 * itself in `sleepers`, checks the index and calls pthread_cond_wait, all
 * under the mutex; POSIX (pthread_cond_wait): if another thread acquires
 * the mutex after the about-to-block thread released it, its later
 * broadcast behaves as if issued after that thread blocked.  So once the
 * waker has taken the mutex, a sleeper that missed the index is waiting,
 * and the broadcast after the unlock wakes it. */
static void wake(mt_dat_pipe *p)
{
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_mutex_unlock(&p->mu);
        pthread_cond_broadcast(&p->cv);
    }
}

/* The slots published and not given back. */
static uint64_t used(mt_dat_pipe *p)
{
    return atomic_load_explicit(&p->head, memory_order_relaxed) -
           atomic_load_explicit(&p->tail, memory_order_relaxed);
}

/* Producer: true when slot head % SLOTS is free, false when asked to stop.
 * When the consumer is the slower side (a sampled recording) the ring
 * stays full and a slot is filled again right after it is given back, its
 * lines still in the consumer's cache; waiting for half of the ring
 * instead measured no faster (docs/performance.md, twelfth round). */
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
 * and every slot was taken.  While the ring is empty (the producer is the
 * slower side) the consumer decompresses the recording ahead of the
 * producer (mt_dat_decode_ahead), and spins or sleeps only once that is
 * as far ahead as it goes. */
static slot *next_slot(mt_dat_pipe *p)
{
    uint64_t tail = atomic_load_explicit(&p->tail, memory_order_relaxed);
    for (unsigned i = 0;; i++) {
        if (atomic_load_explicit(&p->head, memory_order_acquire) != tail)
            return &p->ring[tail % SLOTS];
        if (atomic_load_explicit(&p->done, memory_order_acquire) &&
            atomic_load_explicit(&p->head, memory_order_acquire) == tail)
            return NULL;
        if (p->ahead && mt_dat_decode_ahead(p->r)) {
            p->helped++;
            i = 0;
            continue;
        }
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
    s->rc = MT_OK;
    return s;
}

static void publish(mt_dat_pipe *p)
{
    atomic_store(&p->head, atomic_load_explicit(&p->head, memory_order_relaxed) + 1);
    if (used(p) >= SLOTS / 2)
        wake(p);
}

/* The blocks slot being filled, published. */
static void end_blocks(mt_dat_pipe *p)
{
    if (p->fill) {
        p->fill = NULL;
        publish(p);
    }
}

/* The reader's deferred blocks: into blocks slots, in order. */
static int put_blocks(void *ctx, const mt_dat_block *b, size_t n)
{
    mt_dat_pipe *p = ctx;
    while (n) {
        if (!p->fill && !(p->fill = take(p, S_BLOCKS)))
            return 1; /* stopped: the reader's call fails, the producer ends */
        slot *s = p->fill;
        size_t k = BLOCKS_PER_SLOT - s->n < n ? BLOCKS_PER_SLOT - s->n : n;
        memcpy(&s->u.blk[s->n], b, k * sizeof *b);
        s->n += k;
        b += k;
        n -= k;
        if (s->n == BLOCKS_PER_SLOT)
            end_blocks(p);
    }
    return 0;
}

/* A call's result, published after the blocks the call gave (the reader
 * gives them within the call): the slot to fill, NULL to stop. */
static slot *result_slot(mt_dat_pipe *p, enum slot_type type, mt_errc rc, const mt_err *err)
{
    end_blocks(p);
    slot *s = take(p, type);
    if (!s)
        return NULL;
    s->rc = rc;
    if (rc != MT_OK && rc != MT_E_EMPTY)
        s->err = *err;
    s->told = rc == MT_OK && mt_dat_tell(p->r, &s->pos);
    return s;
}

/* mt_dat_flush_blocks, then its FLUSHED mark. */
static bool flush(mt_dat_pipe *p)
{
    mt_err err;
    if (mt_dat_flush_blocks(p->r, &err) != MT_OK)
        return false; /* only when stopped */
    end_blocks(p);
    slot *s = take(p, S_FLUSHED);
    if (s)
        publish(p);
    return s != NULL;
}

/* The rest of an EVENTS2 record, batch by batch, flushing wherever the
 * reader can restart.  False when the producer is to end. */
static bool batches(mt_dat_pipe *p)
{
    for (;;) {
        end_blocks(p);
        slot *s = take(p, S_BATCH); /* a batch gives no blocks: decoded in place */
        if (!s)
            return false;
        mt_errc rc = mt_dat_next_batch(p->r, s->u.hev, MT_DAT_PIPE_BATCH, &s->n, &s->err);
        s->rc = rc;
        bool told = s->told = rc == MT_OK && mt_dat_tell(p->r, &s->pos);
        size_t n = s->n;
        publish(p);
        if (rc != MT_OK)
            return false;
        if (!n)
            return true;
        if (told && !flush(p))
            return false;
    }
}

/* The calls the replay's first pass makes (replay_open.c read_events),
 * in its order, with a flush at every point where it may flush. */
static void produce(mt_dat_pipe *p)
{
    for (;;) {
        mt_dat_event ev;
        mt_err err;
        mt_errc rc = mt_dat_next(p->r, &ev, &err);
        slot *s = result_slot(p, S_EVENT, rc, &err);
        if (!s)
            return;
        if (rc == MT_OK)
            s->u.ev = ev;
        bool told = s->told;
        publish(p);
        if (rc != MT_OK) {
            if (rc == MT_E_EMPTY)
                flush(p); /* the pass's last flush */
            return;
        }
        bool hooked = ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE;
        if (hooked && !told) {
            if (!batches(p))
                return;
        } else if ((ev.kind == MT_DAT_TOTALS || told) && !flush(p)) {
            return;
        }
    }
}

static void *producer(void *arg)
{
    mt_dat_pipe *p = arg;
    produce(p);
    end_blocks(p);
    if (p->stats)
        p->pcpu = thread_cpu();
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->done, true);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* --- the consumer ----------------------------------------------------- */

static mt_errc nomem_blocks(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
}

static void let_go(mt_dat_pipe *p)
{
    if (p->held) {
        p->held = false;
        release(p);
    }
}

/* Give the blocks slots at the ring's head to fn; with upto_flushed, also
 * take the FLUSHED mark that ends them.  The next slot (a result), or NULL
 * when there is none. */
static slot *give_blocks(mt_dat_pipe *p, bool upto_flushed, mt_errc *rc, mt_err *err)
{
    *rc = MT_OK;
    slot *s;
    while ((s = next_slot(p)) != NULL && (s->type == S_BLOCKS || s->type == S_FLUSHED)) {
        bool mark = s->type == S_FLUSHED;
        for (size_t i = 0; !mark && i < s->n && !*rc; i += MT_DAT_BLOCKS_PER_CALL) {
            size_t k = s->n - i < MT_DAT_BLOCKS_PER_CALL ? s->n - i : MT_DAT_BLOCKS_PER_CALL;
            if (p->fn && p->fn(p->ctx, &s->u.blk[i], k) != 0)
                *rc = nomem_blocks(err);
        }
        release(p);
        if (mark && upto_flushed)
            p->at_mark = true;
        if (*rc || (mark && upto_flushed))
            return NULL;
    }
    return s;
}

/* The next result slot, the blocks before it given; NULL with *rc. */
static slot *result(mt_dat_pipe *p, mt_errc *rc, mt_err *err)
{
    let_go(p);
    if (p->failed) {
        *rc = mt_err_set(err, MT_E_CORRUPT, "recording: read after an error");
        return NULL;
    }
    slot *s = give_blocks(p, false, rc, err);
    if (!s && !*rc)
        *rc = mt_err_set(err, MT_E_CORRUPT, "recording: read after its end");
    if (*rc)
        p->failed = true;
    return s;
}

static mt_errc take_result(mt_dat_pipe *p, const slot *s, mt_err *err)
{
    p->at_mark = false;
    p->told = s->told;
    p->pos = s->pos;
    if (s->rc != MT_OK && s->rc != MT_E_EMPTY) {
        p->failed = true;
        if (err)
            *err = s->err;
    }
    return s->rc;
}

mt_errc mt_dat_pipe_next(mt_dat_pipe *p, mt_dat_event *ev, mt_err *err)
{
    if (!p->threaded)
        return mt_dat_next(p->r, ev, err);
    mt_errc rc;
    slot *s = result(p, &rc, err);
    if (!s)
        return rc;
    if (s->type != S_EVENT) { /* the calls differ from the producer's: a bug */
        p->failed = true;
        return mt_err_set(err, MT_E_CORRUPT, "recording: reading thread out of step");
    }
    rc = take_result(p, s, err);
    if (rc == MT_OK)
        *ev = s->u.ev;
    release(p);
    return rc;
}

mt_errc mt_dat_pipe_next_batch(mt_dat_pipe *p, mt_dat_hev **out, size_t *n, mt_err *err)
{
    *n = 0;
    if (!p->threaded) {
        *out = p->hev;
        return mt_dat_next_batch(p->r, p->hev, MT_DAT_PIPE_BATCH, n, err);
    }
    mt_errc rc;
    slot *s = result(p, &rc, err);
    if (!s)
        return rc;
    if (s->type != S_BATCH) {
        p->failed = true;
        return mt_err_set(err, MT_E_CORRUPT, "recording: reading thread out of step");
    }
    rc = take_result(p, s, err);
    *out = s->u.hev;
    *n = s->n;
    p->held = true;
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
    if (!p->threaded)
        return mt_dat_flush_blocks(p->r, err);
    /* The producer flushes once at each point where the replay may flush
     * (produce); the replay may flush twice at one (a TOTALS that prunes
     * and is a checkpoint): the second finds the mark already taken.  A
     * flush with no mark of the producer's would give the next call's
     * blocks early: the calls are out of step. */
    if (p->at_mark)
        return MT_OK;
    let_go(p);
    mt_errc rc = MT_OK;
    if (!p->failed) {
        give_blocks(p, true, &rc, err);
        if (!rc && !p->at_mark)
            rc = mt_err_set(err, MT_E_CORRUPT, "recording: reading thread out of step");
    }
    if (rc)
        p->failed = true;
    return rc;
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
    const char *ah = getenv("MEMTOP_READ_AHEAD");
    p->ahead = !(ah && *ah == '0');
    if (p->stats) {
        p->ccpu0 = thread_cpu();
        p->wall0 = now();
    }
    if ((threads ? threads : mt_dat_pipe_threads()) >= 2) {
        p->told = mt_dat_tell(r, &p->pos);
        p->ring = malloc(SLOTS * sizeof *p->ring);
        if (p->ring && !pthread_mutex_init(&p->mu, NULL)) {
            if (!pthread_cond_init(&p->cv, NULL)) {
                mt_dat_defer_blocks(r, fn ? put_blocks : NULL, p);
                /* the viewer's signals stay the caller's; faults stay deliverable so
                 * that a crash still restores the terminal (shm_guard.h) */
                sigset_t all, old;
                mt_guard_thread_mask(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                p->threaded = pthread_create(&p->th, NULL, producer, p) == 0;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (p->threaded)
                    return p;
                pthread_cond_destroy(&p->cv);
            }
            pthread_mutex_destroy(&p->mu);
        }
        free(p->ring); /* no thread: read on this one */
        p->ring = NULL;
    }
    p->hev = malloc(MT_DAT_PIPE_BATCH * sizeof *p->hev);
    if (!p->hev) {
        free(p);
        mt_err_set(err, MT_E_NOMEM, "out of memory for the reader");
        return NULL;
    }
    mt_dat_defer_blocks(r, fn, ctx);
    return p;
}

static void print_stats(mt_dat_pipe *p)
{
    fprintf(stderr,
            "memtop: read pass: %s; wall %.3f s; consumer CPU %.3f s, waits %llu; producer "
            "CPU %.3f s, waits %llu; chunks decompressed by the consumer %llu\n",
            p->threaded ? "2 threads" : "1 thread", now() - p->wall0, thread_cpu() - p->ccpu0,
            (unsigned long long)p->waits[1], p->pcpu, (unsigned long long)p->waits[0],
            (unsigned long long)p->helped);
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
    }
    mt_dat_defer_blocks(p->r, NULL, NULL);
    if (p->stats)
        print_stats(p);
    free(p->ring);
    free(p->hev);
    free(p);
}
