/* replay_state.c -- applying recording events to the replay state (see
 * replay_state.h). */
#include "replay_state.h"

#include "replay_weights.h"

#include <stdlib.h>
#include <string.h>

#define PRUNE_MIN_GROUPS 4096u

void mt_rstate_init(mt_rstate *st)
{
    memset(st, 0, sizeof *st);
    mt_rlive_init(&st->live);
}

void mt_rstate_free(mt_rstate *st)
{
    free(st->traces);
    mt_rlive_free(&st->live);
    mt_rweights_free(&st->weights);
    mt_rstate_init(st);
}

size_t mt_rstate_bytes(const mt_rstate *st)
{
    return sizeof st->s + st->s.ndefs * sizeof(mt_rtrace) + st->live.count * sizeof(mt_rgroup);
}

/* Traces 0..n-1 exist (zeroed when new). */
static int ensure_traces(mt_rstate *st, uint64_t n)
{
    if (n <= st->s.ndefs)
        return 0;
    if (n > st->traces_cap) {
        size_t cap = st->traces_cap ? st->traces_cap : 256;
        while (cap < n)
            cap *= 2;
        mt_rtrace *t = realloc(st->traces, cap * sizeof *t);
        if (!t)
            return -1;
        st->traces = t;
        st->traces_cap = cap;
    }
    memset(&st->traces[st->s.ndefs], 0, (size_t)(n - st->s.ndefs) * sizeof *st->traces);
    st->s.ndefs = n;
    return 0;
}

/* The scalars every allocation and free changes, apart from the state:
 * a batch keeps them in registers (through the trace counters' stores,
 * which the compiler must otherwise assume may change them). */
typedef struct hot {
    uint64_t t_ns, events;
    int64_t live_bytes, live_count;
    uint64_t peak_live_bytes, peak_t_ns, missed_free_count;
} hot;

static inline hot hot_get(const mt_rscalars *s)
{
    return (hot){
        s->t_ns,      s->events,           s->live_bytes, s->live_count, s->peak_live_bytes,
        s->peak_t_ns, s->missed_free_count};
}

static inline void hot_put(mt_rscalars *s, const hot *h)
{
    s->t_ns = h->t_ns;
    s->events = h->events;
    s->live_bytes = h->live_bytes;
    s->live_count = h->live_count;
    s->peak_live_bytes = h->peak_live_bytes;
    s->peak_t_ns = h->peak_t_ns;
    s->missed_free_count = h->missed_free_count;
}

static inline __attribute__((always_inline)) void raise_peaks(hot *h, mt_rtrace *tr, uint64_t t_ns)
{
    int64_t live = (int64_t)(tr->alloc_bytes - tr->free_bytes);
    if (live > 0 && (uint64_t)live > tr->peak_live_bytes)
        tr->peak_live_bytes = (uint64_t)live;
    if (h->live_bytes > 0 && (uint64_t)h->live_bytes > h->peak_live_bytes) {
        h->peak_live_bytes = (uint64_t)h->live_bytes;
        h->peak_t_ns = t_ns;
    }
}

/* What a block stands for: itself, or in a sampled recording the weight
 * the target gave it (the same function, sample_weight.h, by way of the
 * per-size table: replay_weights.h).  exact (a constant where inlined):
 * the recording is known to be exact, so that a batch's loop for exact
 * recordings reads no sample rate per event. */
static inline __attribute__((always_inline)) mt_sample_weight
weigh_as(bool exact, mt_rstate *st, uint64_t size, uint32_t trace, uint64_t birth_ms)
{
    if (exact || !st->s.sample_rate) /* exact: inline (the call cost more than the rest of it) */
        return (mt_sample_weight){size, 1};
    return mt_rweights_weigh(&st->weights, size, st->s.sample_rate, mt_sample_key(trace, birth_ms));
}

static inline __attribute__((always_inline)) mt_sample_weight
weigh(mt_rstate *st, uint64_t size, uint32_t trace, uint64_t birth_ms)
{
    return weigh_as(false, st, size, trace, birth_ms);
}

static inline __attribute__((always_inline)) int on_alloc(bool exact, mt_rstate *st, hot *h,
                                                          const mt_dat_ev *e, uint64_t t_ns)
{
    if (e->trace >= st->s.ndefs)
        return 0; /* the reader checks ids; a state restored short of them ignores */
    mt_sample_weight w = weigh_as(exact, st, e->size, e->trace, e->birth_ms);
    mt_rtrace *tr = &st->traces[e->trace];
    tr->alloc_count += w.count;
    tr->alloc_bytes += w.bytes;
    h->live_bytes += (int64_t)w.bytes;
    h->live_count += (int64_t)w.count;
    raise_peaks(h, tr, t_ns);
    if (e->deferred)
        return 0; /* its group: at its frame's end, if still live (mt_rstate_add_blocks) */
    return mt_rlive_add(&st->live, e->trace, e->birth_ms, (int64_t)w.count, (int64_t)w.bytes);
}

static inline __attribute__((always_inline)) int on_free(bool exact, mt_rstate *st, hot *h,
                                                         const mt_dat_ev *e)
{
    if (e->trace >= st->s.ndefs)
        return 0;
    mt_sample_weight w = weigh_as(exact, st, e->size, e->trace, e->birth_ms);
    mt_rtrace *tr = &st->traces[e->trace];
    tr->free_count += w.count;
    tr->free_bytes += w.bytes;
    if (e->flags & MT_DAT_EVF_TEMPORARY) {
        tr->temp_count += w.count;
        tr->temp_bytes += w.bytes;
    }
    if (e->flags & MT_DAT_EVF_MISSED)
        h->missed_free_count++;
    h->live_bytes -= (int64_t)w.bytes;
    h->live_count -= (int64_t)w.count;
    if (e->deferred)
        return 0; /* a block of the frame: its allocation was not added either */
    return mt_rlive_add(&st->live, e->trace, e->birth_ms, -(int64_t)w.count, -(int64_t)w.bytes);
}

/* exact as weigh_as. */
static inline __attribute__((always_inline)) int
add_block(bool exact, mt_rstate *st, uint32_t trace, uint64_t size, uint64_t birth_ms)
{
    if (trace >= st->s.ndefs)
        return 0; /* as on_alloc */
    mt_sample_weight w = weigh_as(exact, st, size, trace, birth_ms);
    return mt_rlive_add(&st->live, trace, birth_ms, (int64_t)w.count, (int64_t)w.bytes);
}

/* Negative groups older than the events' reordering window are the frees
 * of dropped allocations: pruned once a second (at TOTALS) when there are
 * enough groups to matter, so dropped events cannot grow the table. */
#define PRUNE_WINDOW_MS 2000u

static int prune(mt_rstate *st, uint64_t t_ns)
{
    if (st->live.count < PRUNE_MIN_GROUPS || t_ns / 1000000u < PRUNE_WINDOW_MS)
        return 0;
    return mt_rlive_prune(&st->live, t_ns / 1000000u - PRUNE_WINDOW_MS);
}

bool mt_rstate_prune_needs_exact(const mt_rstate *st, uint64_t t_ns)
{
    return st->live.nneg && t_ns / 1000000u >= PRUNE_WINDOW_MS;
}

static void on_totals(mt_rstate *st, const mt_dat_event *ev)
{
    st->s.ntotals++;
    if (!st->s.have_totals || ev->t_ns >= st->s.last_totals_t) {
        st->s.last_totals = ev->u.totals;
        st->s.last_totals_t = ev->t_ns;
        st->s.have_totals = true;
    }
    uint64_t peak = ev->u.totals.f[8]; /* peak_live_bytes */
    if (ev->u.totals.nfields > 8 && peak > st->s.totals_peak)
        st->s.totals_peak = peak;
}

/* An INITIAL state set: the counters and live blocks when recording began. */
static int on_initial(mt_rstate *st, const mt_dat_event *ev)
{
    if (ev->kind == MT_DAT_TRACE_STATE) {
        const mt_dat_trace_state *s = &ev->u.ts;
        if (s->id >= st->s.ndefs)
            return 0;
        mt_rtrace *tr = &st->traces[s->id];
        st->s.live_bytes -= (int64_t)(tr->alloc_bytes - tr->free_bytes);
        st->s.live_count -= (int64_t)(tr->alloc_count - tr->free_count);
        *tr = (mt_rtrace){s->alloc_count,     s->alloc_bytes,     s->free_count,     s->free_bytes,
                          s->temporary_count, s->temporary_bytes, s->peak_live_bytes};
        st->s.live_bytes += (int64_t)(tr->alloc_bytes - tr->free_bytes);
        st->s.live_count += (int64_t)(tr->alloc_count - tr->free_count);
        return 0;
    }
    const mt_dat_live_block *b = &ev->u.lb;
    mt_sample_weight w = weigh(st, b->size, b->trace, b->birth_ms);
    return mt_rlive_add(&st->live, b->trace, b->birth_ms, (int64_t)(w.count * b->count),
                        (int64_t)(w.bytes * b->count));
}

static bool passes(const mt_rfilter *f, uint64_t t)
{
    return t <= f->hi && (!f->has_lo || t > f->lo);
}

/* Blocks allocated and freed within a culled recording's threshold. */
static void on_culled(mt_rstate *st, const mt_dat_culled *c)
{
    st->s.culled_blocks += c->count;
    st->s.written_early = c->written_early;
    st->s.young = c->young;
    if (c->id >= st->s.ndefs)
        return;
    mt_rtrace *tr = &st->traces[c->id];
    tr->alloc_count += c->count;
    tr->alloc_bytes += c->bytes;
    tr->free_count += c->count;
    tr->free_bytes += c->bytes;
    tr->temp_count += c->temporary_count;
    tr->temp_bytes += c->temporary_bytes;
}

/* An allocation or a free, if it passes the filter; exact as weigh_as,
 * all (a constant where inlined): f is known to let every event through. */
static inline __attribute__((always_inline)) int apply_ev(bool exact, bool all, mt_rstate *st,
                                                          hot *h, mt_dat_kind kind, uint64_t t_ns,
                                                          const mt_dat_ev *e, const mt_rfilter *f)
{
    if (!all && !passes(f, t_ns))
        return 0;
    if (t_ns > h->t_ns)
        h->t_ns = t_ns;
    h->events++;
    return kind == MT_DAT_ALLOC ? on_alloc(exact, st, h, e, t_ns) : on_free(exact, st, h, e);
}

static int apply_timed(mt_rstate *st, const mt_dat_event *ev)
{
    if (ev->t_ns > st->s.t_ns)
        st->s.t_ns = ev->t_ns;
    switch (ev->kind) {
    case MT_DAT_ALLOC:
    case MT_DAT_FREE:
        return mt_rstate_apply_ev(st, ev->kind, ev->t_ns, &ev->u.ev,
                                  &(mt_rfilter){false, 0, UINT64_MAX});
    case MT_DAT_TOTALS:
        on_totals(st, ev);
        return prune(st, ev->t_ns);
    case MT_DAT_CULLED:
        on_culled(st, &ev->u.culled);
        return 0;
    case MT_DAT_LOST:
        st->s.lost_events += ev->u.lost.alloc_count + ev->u.lost.free_count;
        for (unsigned i = 0; i < MT_DAT_LOST_WHY_N; i++)
            st->s.lost_why[i] += ev->u.lost.why[i];
        return 0;
    case MT_DAT_END:
        st->s.ended = true;
        st->s.end_reason = ev->u.end.reason;
        return 0;
    default:
        return 0;
    }
}

int mt_rstate_apply(mt_rstate *st, const mt_dat_event *ev, const mt_rfilter *f)
{
    switch (ev->kind) {
    case MT_DAT_PROCESS:
        st->s.sample_rate = ev->u.proc.sample_rate_bytes;
        return 0;
    case MT_DAT_DEF:
        return ensure_traces(st, (uint64_t)ev->u.def.id + 1);
    case MT_DAT_MODULE:
        if (ev->u.mod.index + 1 > st->s.nmodules)
            st->s.nmodules = ev->u.mod.index + 1;
        return 0;
    case MT_DAT_STATE_BEGIN:
        st->s.set_kind = ev->u.state.kind;
        return 0;
    case MT_DAT_STATE_END:
        /* What was live when the recording began counts toward its peak. */
        if (st->s.set_kind == MT_DAT_STATE_INITIAL && (!f->has_lo || ev->t_ns > f->lo) &&
            st->s.live_bytes > 0 && (uint64_t)st->s.live_bytes > st->s.peak_live_bytes) {
            st->s.peak_live_bytes = (uint64_t)st->s.live_bytes;
            st->s.peak_t_ns = ev->t_ns;
        }
        st->s.set_kind = 0;
        return 0;
    case MT_DAT_TRACE_STATE:
    case MT_DAT_LIVE_BLOCK:
        /* The initial state is the state at the recording's start, though
         * it is stamped when its capture ended a few ms later: a cursor at
         * the start must show it. */
        if (st->s.set_kind == MT_DAT_STATE_INITIAL)
            return !f->has_lo || ev->t_ns > f->lo ? on_initial(st, ev) : 0;
        return 0;
    default:
        return passes(f, ev->t_ns) ? apply_timed(st, ev) : 0;
    }
}

int mt_rstate_apply_ev(mt_rstate *st, mt_dat_kind kind, uint64_t t_ns, const mt_dat_ev *e,
                       const mt_rfilter *f)
{
    hot h = hot_get(&st->s);
    int rc = apply_ev(false, false, st, &h, kind, t_ns, e, f);
    hot_put(&st->s, &h);
    return rc;
}

/* The live group of the event (or block) this many later is prefetched. */
#define AHEAD 8u

/* The blocks' loop, as apply_run's. */
static inline __attribute__((always_inline)) int add_run(bool exact, mt_rstate *st,
                                                         const mt_dat_block *b, size_t n)
{
    int rc = 0;
    size_t i = 0;
    for (; i + AHEAD < n && !rc; i++) {
        mt_rlive_prefetch(&st->live, b[i + AHEAD].trace, b[i + AHEAD].birth_ms);
        rc = add_block(exact, st, b[i].trace, b[i].size, b[i].birth_ms);
    }
    for (; i < n && !rc; i++)
        rc = add_block(exact, st, b[i].trace, b[i].size, b[i].birth_ms);
    return rc;
}

int mt_rstate_add_blocks(mt_rstate *st, const mt_dat_block *b, size_t n)
{
    for (size_t i = 0; i < n && i < AHEAD; i++)
        mt_rlive_prefetch(&st->live, b[i].trace, b[i].birth_ms);
    return st->s.sample_rate ? add_run(false, st, b, n) : add_run(true, st, b, n);
}

/* The batch's loop, exact and all as apply_ev: two loops, the first
 * with the prefetch of the event AHEAD later and no test of its bound. */
static inline __attribute__((always_inline)) int apply_run(bool exact, bool all, mt_rstate *st,
                                                           hot *h, const mt_dat_hev *b, size_t n,
                                                           const mt_rfilter *f)
{
    int rc = 0;
    size_t i = 0;
    for (; i + AHEAD < n && !rc; i++) {
        mt_rstate_prefetch(st, &b[i + AHEAD].ev);
        rc = apply_ev(exact, all, st, h, b[i].kind, b[i].t_ns, &b[i].ev, f);
    }
    for (; i < n && !rc; i++)
        rc = apply_ev(exact, all, st, h, b[i].kind, b[i].t_ns, &b[i].ev, f);
    return rc;
}

int mt_rstate_apply_batch(mt_rstate *st, const mt_dat_hev *b, size_t n, const mt_rfilter *f)
{
    for (size_t i = 0; i < n && i < AHEAD; i++)
        mt_rstate_prefetch(st, &b[i].ev);
    hot h = hot_get(&st->s);
    /* the sample rate and the filter do not change within a batch: a copy
     * of the loop for the usual cases (every event through, the first
     * pass; exact or sampled) */
    bool exact = !st->s.sample_rate, all = !f->has_lo && f->hi == UINT64_MAX;
    int rc = !all    ? apply_run(false, false, st, &h, b, n, f)
             : exact ? apply_run(true, true, st, &h, b, n, f)
                     : apply_run(false, true, st, &h, b, n, f);
    hot_put(&st->s, &h);
    return rc;
}
