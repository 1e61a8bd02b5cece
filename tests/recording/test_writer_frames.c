/* test_writer_frames.c -- the recording writer's event encoding
 * (src/preload/record/record_events.c, record_zstd.c, record_thread.c,
 * record_session.c, record_blocks.c, record_buffer.c) against the reader (src/ipc/dat_reader*):
 * whatever the writer produces, the reader opens, and gives back every event exactly.
 *
 * Why: the writer and the reader each enforce the format's limits
 * (dat_format.h); a writer that goes one past a limit writes a file that
 * cannot be opened, which is lost data.  Here the real writer code runs in
 * this process with a few stand-ins (the process record, trace
 * definitions, the final state: record_records.c, record_state.c and
 * record_initial.c need the whole tracker), fed through the real per-thread
 * rings by threads of this test, and drained synchronously (no writer
 * thread: a full ring drains itself, as before the writer thread starts).
 *
 * Tests:
 *   - frame_allocs_at_limit / _past_limit: MT_DAT_FRAME_ALLOCS_MAX
 *     allocations in one writer pass, then one more, and the same after a
 *     first record of MT_RR_EVENTS_MAX events (which ends the small first
 *     frame while the next event is being encoded);
 *   - random_workloads: a property test: random threads, traces, sizes,
 *     frees of recent, old and unknown blocks, address reuse, flags, times
 *     and drain points (seed from MT_TEST_SEED or the clock, printed);
 *     every file opens, no frame holds more allocations than allowed, and
 *     each thread's events read back equal what it recorded.
 */
#define _GNU_SOURCE
#include "core_clock.h"
#include "dat_format.h"
#include "dat_reader.h"
#include "record.h"
#include "record_blocks.h"
#include "record_buffer.h"
#include "record_order.h"
#include "record_writer.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "test_xorshift.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* --- stand-ins for the rest of libmemtop.so ---------------------------- */

_Atomic int mt_rec_mode;
uint64_t mt_clock_origin_ns;
MT_TLS mt_tls_hot mt_tls_h;
MT_TLS bool mt_tls_exiting;
MT_TLS unsigned mt_tls_dl_depth;

mt_global mt_g;
static uint32_t g_ntraces = 1; /* definitions the test's events may name */

void mt_log(int level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

void mt_world_exempt(bool on) /* the writer thread's registration (alloc_stop.c) */
{
    (void)on;
}

void mt_rr_process(bool mid_run, bool fork_child, uint64_t now)
{
    (void)mid_run, (void)fork_child;
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, (uint64_t)getpid());
    mt_put_v(b, (uint64_t)getppid());
    mt_put_v(b, 0), mt_put_v(b, 0), mt_put_v(b, 0); /* uid, start ticks, tracking start */
    mt_put_v(b, now), mt_put_v(b, 0);               /* record start */
    mt_put_v(b, 16), mt_put_v(b, 0), mt_put_v(b, 1000), mt_put_v(b, 0);
    mt_put_cstr(b, "test_writer_frames");
    mt_put_cstr(b, "");
    mt_put_v(b, MT_DAT_MODE_FULL), mt_put_v(b, 0), mt_put_v(b, 0), mt_put_v(b, 0); /* version 4 */
    mt_put_v(b, mt_w.tick_order ? MT_DAT_ORDER_TICK : MT_DAT_ORDER_THREAD); /* version 5 on */
    mt_recw_emit(MT_DAT_REC_PROCESS);
}

void mt_rr_modules(uint64_t now)
{
    (void)now;
}

void mt_rr_defs(void)
{
    for (; mt_w.defs < g_ntraces; mt_w.defs++) {
        mt_rec_buf *b = &mt_w.pay;
        uint32_t id = mt_w.defs;
        mt_put_v(b, id), mt_put_v(b, 0), mt_put_v(b, 0), mt_put_v(b, id + 1u);
        mt_put_v(b, id ? 1 : 0);
        if (id)
            mt_put_v(b, 0x400000u + 16u * id);
        mt_recw_emit(MT_DAT_REC_TRACE);
    }
}

void mt_rr_allocators(uint64_t now)
{
    (void)now;
}

void mt_rr_totals(uint64_t now)
{
    (void)now;
}

void mt_rr_state(unsigned kind, uint64_t now)
{
    (void)kind, (void)now;
}
void mt_rr_state_release(void) {}

void mt_rr_end(unsigned reason, int error, uint64_t now)
{
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, now), mt_put_v(b, 0), mt_put_v(b, reason), mt_put_v(b, (uint64_t)error);
    mt_put_v(b, atomic_load(&mt_w.events)), mt_put_v(b, atomic_load(&mt_w.dropped));
    mt_recw_emit(MT_DAT_REC_END);
}

bool mt_rr_capture_prepare(bool blocks)
{
    (void)blocks;
    return false; /* the final state is then mt_rr_state's */
}
void mt_rr_capture_take(void) {}
uint64_t mt_rr_capture_skipped(void)
{
    return 0;
}
void mt_rr_capture_sums(uint64_t sums[4])
{
    memset(sums, 0, 4 * sizeof *sums);
}
void mt_rr_capture_write(unsigned kind)
{
    (void)kind;
}
void mt_rr_capture_release(void) {}

/* --- the model ------------------------------------------------------------ */

static int failures;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (failures++ < 10) {
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
}

static uint64_t rng;

static uint64_t rnd(void)
{
    return test_xorshift(&rng);
}

/* What a thread recorded, and what the reader must give back. */
typedef struct want {
    uint64_t t_ns, size, birth_ms;
    uint32_t trace;
    uint8_t kind, flags; /* MT_DAT_ALLOC / MT_DAT_FREE; MT_DAT_EVF_* */
} want;

typedef struct block {
    uint64_t addr, size, t_ns;
    uint32_t trace;
} block;

#define MAX_THREADS 160

typedef struct tmodel {
    want *w;
    size_t n, cap;
    want *got; /* what the reader gave back */
    size_t ngot, got_cap;
    int tid;
    uint64_t t; /* its clock */
    block *live;
    size_t nlive, live_cap;
} tmodel;

static tmodel g_th[MAX_THREADS];
static unsigned g_nth;
static uint64_t g_next_addr = 0x10000;

static void *grow(void *p, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    p = realloc(p, c * each);
    if (!p)
        abort();
    *cap = c;
    return p;
}

static void record(tmodel *m, const mt_rec_event *e, uint64_t birth_ms)
{
    mt_ring_record(e, true);
    m->w = grow(m->w, &m->cap, m->n + 1, sizeof *m->w);
    m->w[m->n++] = (want){e->t_ns,
                          mt_rev_size(e),
                          birth_ms,
                          mt_rev_trace(e),
                          mt_rev_kind(e) == MT_DAT_EV_ALLOC ? MT_DAT_ALLOC : MT_DAT_FREE,
                          mt_rev_flags(e)};
}

/* Steps of a thread: how they are made. */
typedef struct recipe {
    uint64_t steps;
    unsigned alloc_pct;   /* else a free */
    unsigned ntraces;     /* traces 1..ntraces (0: the overflow trace too) */
    unsigned reuse_pct;   /* a new block at an address freed before */
    unsigned bogus_pct;   /* a free with other values than its block's */
    unsigned unknown_pct; /* a free of a block the recording never saw */
    unsigned dt_max;      /* ns between steps: 0..dt_max */
    unsigned tick_steps;  /* else: a coarse clock, 4 ms every ~tick_steps steps (0: dt_max) */
    unsigned drain_every; /* drain synchronously every so many steps (0: never) */
} recipe;

static uint64_t pick_size(void)
{
    switch (rnd() % 4) {
    case 0:
        return 16;
    case 1:
        return 16 + rnd() % 64;
    case 2:
        return 1u << (rnd() % 20);
    default:
        return rnd() % ((uint64_t)1 << (rnd() % 40)) + 1;
    }
}

static void one_alloc(tmodel *m, const recipe *rc, uint64_t *freed, size_t *nfreed)
{
    block b = {0};
    b.trace = (uint32_t)(rnd() % (rc->ntraces + 1));
    if (b.trace == 0 && rnd() % 8)
        b.trace = 1;
    b.size = pick_size();
    b.t_ns = m->t;
    if (*nfreed && rnd() % 100 < rc->reuse_pct)
        b.addr = freed[--*nfreed];
    else
        b.addr = (g_next_addr += 16 * (1 + rnd() % 4));
    mt_rec_event e = {.t_ns = m->t,
                      .addr = b.addr,
                      .sizek = mt_rev_pack_sizek(b.size, MT_DAT_EV_ALLOC, 0),
                      .tb = b.trace};
    record(m, &e, m->t / 1000000u);
    m->live = grow(m->live, &m->live_cap, m->nlive + 1, sizeof *m->live);
    m->live[m->nlive++] = b;
}

static void one_free(tmodel *m, const recipe *rc, uint64_t *freed, size_t *nfreed)
{
    uint64_t ms = m->t / 1000000u;
    mt_rec_event e = {.t_ns = m->t};
    block b;
    if (!m->nlive || rnd() % 100 < rc->unknown_pct) { /* born before, or elsewhere */
        b = (block){.addr = (g_next_addr += 32),
                    .size = pick_size(),
                    .trace = (uint32_t)(rnd() % (rc->ntraces + 1))};
        b.t_ns = (rnd() % (ms + 1)) * 1000000u;
    } else {
        size_t i = rnd() % 3 ? m->nlive - 1 - rnd() % (m->nlive < 8 ? m->nlive : 8)
                             : rnd() % m->nlive; /* mostly recent blocks */
        b = m->live[i];
        m->live[i] = m->live[--m->nlive];
        if (rnd() % 100 < rc->bogus_pct) { /* charged with other values */
            if (rnd() % 2)
                b.size += 1 + rnd() % 3;
            else
                b.trace = (uint32_t)(rnd() % (rc->ntraces + 1));
        }
        freed[(*nfreed)++] = b.addr;
    }
    uint64_t birth = b.t_ns / 1000000u;
    static const uint8_t flag_set[] = {
        0, 0, 0, MT_DAT_EVF_TEMPORARY, MT_DAT_EVF_REALLOC, MT_DAT_EVF_MISSED};
    e.addr = b.addr;
    e.sizek = mt_rev_pack_sizek(b.size, MT_DAT_EV_FREE, flag_set[rnd() % sizeof flag_set]);
    e.tb = b.trace | birth << MT_REV_TRACE_BITS;
    record(m, &e, birth);
}

/* A model thread runs on an OS thread of its own for the whole recording
 * (its own ring, its own tid); the main thread hands it one batch of
 * steps at a time and waits for it, so the events are deterministic. */
typedef struct worker {
    pthread_t th;
    tmodel *m;
    recipe rc;
    bool has_job, quit;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} worker;

static worker g_wk[MAX_THREADS];

static void steps(tmodel *m, const recipe *rc)
{
    uint64_t *freed = malloc((rc->steps + 1) * sizeof *freed);
    size_t nfreed = 0;
    for (uint64_t s = 0; s < rc->steps; s++) {
        if (rc->tick_steps)
            m->t += rnd() % rc->tick_steps ? 0 : 4000000u;
        else
            m->t += rc->dt_max ? rnd() % (rc->dt_max + 1u) : 0;
        if (rnd() % 100 < rc->alloc_pct)
            one_alloc(m, rc, freed, &nfreed);
        else
            one_free(m, rc, freed, &nfreed);
        if (rc->drain_every && s % rc->drain_every == rc->drain_every - 1)
            mt_recw_drain_sync();
    }
    free(freed);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    w->m->tid = gettid();
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->has_job && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit)
            break;
        steps(w->m, &w->rc);
        w->has_job = false;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    mt_ring_retire_mine(); /* as at thread exit: the next session recycles it */
    return NULL;
}

static void start_workers(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        worker *w = &g_wk[i];
        *w = (worker){.m = &g_th[i]};
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        if (pthread_create(&w->th, NULL, run_worker, w) != 0)
            abort();
    }
    g_nth = n;
}

static void stop_workers(void)
{
    for (unsigned i = 0; i < g_nth; i++) {
        worker *w = &g_wk[i];
        pthread_mutex_lock(&w->mu);
        w->quit = true;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
}

/* A batch of steps on model thread i, made by its worker. */
static void batch(unsigned i, const recipe *rc)
{
    worker *w = &g_wk[i];
    pthread_mutex_lock(&w->mu);
    w->rc = *rc;
    w->has_job = true;
    pthread_cond_broadcast(&w->cv);
    while (w->has_job)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* --- recording and reading back ------------------------------------------ */

static char g_path[64];
static uint64_t g_lost; /* events a test counted as dropped itself */

static void begin(uint32_t ntraces)
{
    for (unsigned i = 0; i < g_nth; i++) {
        free(g_th[i].w);
        free(g_th[i].got);
        free(g_th[i].live);
    }
    memset(g_th, 0, sizeof g_th);
    g_nth = 0;
    g_ntraces = ntraces + 1;
    snprintf(g_path, sizeof g_path, "/tmp/test_writer_frames.%d.dat", getpid());
    unlink(g_path);
    int fd = open(g_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int err = 0;
    if (fd < 0 || !mt_recw_begin(fd, false, false, &err)) {
        fprintf(stderr, "cannot begin a recording: %s\n", strerror(err));
        exit(2);
    }
}

static int want_cmp(const void *pa, const void *pb)
{
    const want *x = pa, *y = pb;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    if (x->birth_ms != y->birth_ms)
        return x->birth_ms < y->birth_ms ? -1 : 1;
    return (int)x->flags - (int)y->flags;
}

static void fail_event(const char *label, unsigned th, size_t k, const want *g, const want *w)
{
    fail("%s: thread %u event %zu: read kind %d t %llu trace %u size %llu birth %llu flags %u, "
         "recorded kind %d t %llu trace %u size %llu birth %llu flags %u",
         label, th, k, g->kind, (unsigned long long)g->t_ns, g->trace, (unsigned long long)g->size,
         (unsigned long long)g->birth_ms, g->flags, w->kind, (unsigned long long)w->t_ns, w->trace,
         (unsigned long long)w->size, (unsigned long long)w->birth_ms, w->flags);
}

/* Thread th's events as read against those it recorded: the same, in
 * order; in tick order, the same times at each place and each run of one
 * time the same events in any order.  *moved counts the events read at
 * another place than recorded. */
static void compare_thread(const char *label, unsigned th, bool ticks, uint64_t *moved)
{
    tmodel *m = &g_th[th];
    for (size_t i = 0, j; i < m->n && i < m->ngot; i = j) {
        for (j = i + 1; ticks && j < m->n && m->w[j].t_ns == m->w[i].t_ns; j++)
            ;
        for (size_t k = i; k < j; k++) {
            if (k >= m->ngot || m->got[k].t_ns != m->w[k].t_ns) {
                fail_event(label, th, k, &m->got[k < m->ngot ? k : i], &m->w[k]);
                return;
            }
            *moved += want_cmp(&m->got[k], &m->w[k]) != 0;
        }
        /* the run as sets: both sorted in place (nothing reads them after) */
        qsort(m->got + i, j - i, sizeof *m->got, want_cmp);
        qsort(m->w + i, j - i, sizeof *m->w, want_cmp);
        for (size_t k = i; k < j; k++)
            if (want_cmp(&m->got[k], &m->w[k]) != 0) {
                fail_event(label, th, k, &m->got[k], &m->w[k]);
                return;
            }
    }
    if (m->ngot != m->n)
        fail("%s: thread %u: %zu events read of %zu recorded", label, th, m->ngot, m->n);
}

/* Reads the file back: it must open, no frame may hold more allocations
 * than MT_DAT_FRAME_ALLOCS_MAX, and each thread's events must be those it
 * recorded, in order (in tick order: within each tick in any order).
 * Returns the largest number of allocations found in one frame; *moved
 * (if not NULL) the events read at another place than recorded. */
static uint64_t check_file(const char *label, uint64_t *moved)
{
    bool ticks = mt_w.tick_order;
    mt_recw_end(MT_DAT_END_EXIT);
    stop_workers();
    mt_err err = {0};
    mt_dat_reader *r = mt_dat_open(g_path, &err);
    if (!r) {
        fail("%s: open: %s", label, err.msg);
        return 0;
    }
    uint64_t frame_allocs = 0, most = 0, last_off = UINT64_MAX, nmoved = 0;
    bool ended = false;
    mt_dat_event ev;
    mt_errc rc;
    for (;;) {
        mt_dat_pos pos;
        if (mt_dat_tell(r, &pos) && pos.offset != last_off) { /* a frame boundary */
            last_off = pos.offset;
            frame_allocs = 0;
        }
        if ((rc = mt_dat_next(r, &ev, &err)) != MT_OK)
            break;
        if (ev.kind == MT_DAT_END)
            ended = true;
        if (ev.kind == MT_DAT_PROCESS && ev.u.proc.tick_order != ticks)
            fail("%s: the file says tick order %d, the writer wrote %d", label,
                 ev.u.proc.tick_order, ticks);
        if (ev.kind != MT_DAT_ALLOC && ev.kind != MT_DAT_FREE)
            continue;
        if (ev.kind == MT_DAT_ALLOC && ++frame_allocs > most)
            most = frame_allocs;
        unsigned i = 0;
        while (i < g_nth && (uint32_t)g_th[i].tid != ev.u.ev.tid)
            i++;
        if (i == g_nth || g_th[i].ngot >= g_th[i].n) {
            fail("%s: an event of thread %u that it did not make", label, ev.u.ev.tid);
            break;
        }
        tmodel *m = &g_th[i];
        m->got = grow(m->got, &m->got_cap, m->ngot + 1, sizeof *m->got);
        m->got[m->ngot++] = (want){ev.t_ns,       ev.u.ev.size,     ev.u.ev.birth_ms,
                                   ev.u.ev.trace, (uint8_t)ev.kind, (uint8_t)ev.u.ev.flags};
    }
    if (rc != MT_E_EMPTY)
        fail("%s: reading: %s", label, err.msg);
    if (!ended)
        fail("%s: no END record", label);
    if (most > MT_DAT_FRAME_ALLOCS_MAX)
        fail("%s: %llu allocations in one frame", label, (unsigned long long)most);
    for (unsigned i = 0; i < g_nth && rc == MT_E_EMPTY && !failures; i++)
        compare_thread(label, i, ticks, &nmoved);
    if (!ticks && nmoved)
        fail("%s: %llu events out of order in thread order", label, (unsigned long long)nmoved);
    if (moved)
        *moved += nmoved;
    if (atomic_load(&mt_w.dropped) != g_lost)
        fail("%s: %llu events dropped", label, (unsigned long long)atomic_load(&mt_w.dropped));
    g_lost = 0;
    mt_dat_close(r);
    unlink(g_path);
    return most;
}

/* n allocations of one trace, each thread filling its ring without a
 * drain (MT_RING_CHUNK events), then one writer pass over all of them:
 * nothing ends the frame early (its time is checked after the pass). */
static uint64_t one_pass_allocs(uint64_t n, const char *label)
{
    begin(1);
    recipe rc = {.alloc_pct = 100, .ntraces = 1};
    unsigned nw = (unsigned)((n + MT_RING_CHUNK - 1) / MT_RING_CHUNK);
    if (nw > MAX_THREADS)
        abort();
    start_workers(nw);
    for (unsigned i = 0; i < nw; i++) {
        uint64_t left = n - (uint64_t)i * MT_RING_CHUNK;
        rc.steps = left < MT_RING_CHUNK ? left : MT_RING_CHUNK;
        batch(i, &rc);
    }
    mt_recw_drain_sync();
    uint64_t most = check_file(label, NULL);
    if (getenv("MT_TEST_VERBOSE"))
        printf("%s: %llu allocations, most in one frame %llu\n", label, (unsigned long long)n,
               (unsigned long long)most);
    return most;
}

/* In one pass, the small first frame ends after its first few records
 * (MT_RING_CHUNK events each: one per ring); the next frame is then filled
 * to the limit exactly, and anything past it goes to a frame after it. */
static void frame_allocs_limits(void)
{
    const uint64_t max = MT_DAT_FRAME_ALLOCS_MAX;
    static const struct {
        uint64_t n;
        const char *label;
        bool fills; /* some frame must hold exactly the limit */
    } cases[] = {
        {MT_DAT_FRAME_ALLOCS_MAX, "the limit's worth", false},
        {MT_DAT_FRAME_ALLOCS_MAX + 4 * MT_RING_CHUNK, "a frame at the limit", true},
        {MT_DAT_FRAME_ALLOCS_MAX + 4 * MT_RING_CHUNK + 1, "one past the limit", true},
        {2 * MT_DAT_FRAME_ALLOCS_MAX + 3 * MT_RING_CHUNK + 7, "twice the limit", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t most = one_pass_allocs(cases[i].n, cases[i].label);
        if (cases[i].fills && most != max)
            fail("%s: most allocations in one frame %llu, want %llu", cases[i].label,
                 (unsigned long long)most, (unsigned long long)max);
    }
}

/* One tick of one thread: 400 random allocations and frees of traces 0 to
 * 3, addresses reused.  Tick order reads them back sorted, so some are
 * read at another place than recorded (check_file: the same events in the
 * tick); thread order reads each where it was made. */
static void tick_order_sorts(void)
{
    for (unsigned ticks = 0; ticks < 2; ticks++) {
        mt_rec_order_env(ticks ? "tick" : "thread");
        begin(3);
        recipe rc = {.steps = 400, .alloc_pct = 60, .ntraces = 3, .reuse_pct = 50};
        start_workers(1);
        batch(0, &rc);
        mt_recw_drain_sync();
        uint64_t moved = 0;
        check_file(ticks ? "one tick, tick order" : "one tick, thread order", &moved);
        if (ticks && !moved)
            fail("one tick, tick order: every event read where it was made");
    }
}

/* Model thread th's ring (owned by its worker). */
static mt_rec_ring *ring_of(unsigned th)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next)
        if (r->tid == g_th[th].tid && MT_RING_STATE(mt_ring_state(r)) == MT_RING_OWNED)
            return r;
    return NULL;
}

/* A writer pass as the writer thread makes it (not `all`). */
static void writer_pass(void)
{
    mt_spin_lock(&mt_w.lock);
    mt_rr_drain_rings(false);
    mt_spin_unlock(&mt_w.lock);
}

/* n allocations of model thread 0 at time t (traces 1 to 3). */
static void allocs_at(uint64_t t, uint64_t n)
{
    g_th[0].t = t;
    recipe rc = {.steps = n, .alloc_pct = 100, .ntraces = 3, .tick_steps = UINT32_MAX};
    batch(0, &rc);
}

/* Tick order holds back a ring's newest run while its tick is the
 * clock's current one (record_events.c tick_end), but: the ring's LOST
 * counts are still written at that pass, as in thread order (a thread
 * that allocates in every tick would otherwise keep them to its end);
 * and a full chunk is never held back (a hook at the buffer's bound waits
 * for tail == head to reuse it, record_buffer.c try_next_chunk). */
static void tick_order_hands_back(void)
{
    mt_rec_order_env("tick");
    begin(3);
    start_workers(1);
    uint64_t t = mt_now_ns() + 60000000000ull; /* the clock's current tick for the test */
    allocs_at(t, 2000);                        /* a batch: the ring is due */
    allocs_at(t + 4000000u, 100);              /* the newest run, held back */
    mt_rec_ring *r = ring_of(0);
    if (!r) {
        fail("tick order hands back: no ring");
        return;
    }
    atomic_fetch_add(&r->lost.why[MT_DAT_LOST_NOWAIT], 1); /* as count_lost does */
    atomic_fetch_add(&r->lost.n[MT_LOST_AB], 16);
    atomic_fetch_add(&r->lost.n[MT_LOST_AC], 1);
    g_lost = 1;
    writer_pass();
    uint64_t head = atomic_load(&r->head), tail = atomic_load(&r->tail);
    if (head - tail != 100)
        fail("tick order hands back: %llu events left, not the newest run's 100",
             (unsigned long long)(head - tail));
    if (mt_w.sum_lost[MT_LOST_AC] != 1)
        fail("tick order hands back: the ring's LOST count not written at the pass");
    allocs_at(t + 4000000u, MT_RING_CHUNK - (head - r->wbase)); /* its chunk full */
    writer_pass();
    head = atomic_load(&r->head);
    if (atomic_load(&r->tail) != head)
        fail("tick order hands back: %llu events of a full chunk held back",
             (unsigned long long)(head - atomic_load(&r->tail)));
    check_file("tick order hands back", NULL);
}

static void random_workloads(unsigned rounds)
{
    for (unsigned k = 0; k < rounds; k++) {
        uint64_t seed = rng;
        recipe base = {
            .alloc_pct = 40 + (unsigned)(rnd() % 55),
            .ntraces = 1 + (unsigned)(rnd() % (rnd() % 2 ? 16 : 3000)),
            .reuse_pct = (unsigned)(rnd() % 101),
            .bogus_pct = (unsigned)(rnd() % 4 ? 0 : rnd() % 30),
            .unknown_pct = (unsigned)(rnd() % 3 ? 0 : rnd() % 20),
            .dt_max = (unsigned)(rnd() % 3 ? rnd() % 3000 : rnd() % 50000000),
            .tick_steps = rnd() % 2 ? 1 + (unsigned)(rnd() % 20000) : 0,
        };
        mt_rec_order_env(k % 2 ? "thread" : "tick"); /* the writer's setting: both */
        begin(base.ntraces);
        unsigned nthreads = 1 + (unsigned)(rnd() % 6);
        start_workers(nthreads);
        uint64_t total = rnd() % 2 ? rnd() % 20000 : 200000 + rnd() % 700000;
        while (total) {
            recipe rc = base;
            rc.steps = 1 + rnd() % (rnd() % 2 ? 64 : MT_RING_CHUNK * 3);
            rc.steps = rc.steps < total ? rc.steps : total;
            total -= rc.steps;
            rc.drain_every = rnd() % 2 ? 0 : 1 + (unsigned)(rnd() % 20000);
            batch((unsigned)(rnd() % nthreads), &rc);
            if (rnd() % 3 == 0)
                mt_recw_drain_sync();
        }
        char label[96];
        snprintf(label, sizeof label, "random workload, seed %llu, %s order",
                 (unsigned long long)seed, k % 2 ? "thread" : "tick");
        check_file(label, NULL);
        if (failures)
            return;
    }
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 12;
    const char *s = getenv("MT_TEST_SEED");
    rng = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
    if (!rng)
        rng = 1;
    printf("seed %llu (MT_TEST_SEED)\n", (unsigned long long)rng);
    mt_clock_origin_ns = mt_mono_raw_ns(CLOCK_MONOTONIC_COARSE) - 1000000000ull;
    frame_allocs_limits();
    if (!failures)
        tick_order_sorts();
    if (!failures)
        tick_order_hands_back();
    if (!failures)
        random_workloads(rounds);
    printf("%s\n", failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
