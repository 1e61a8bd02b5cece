/* replay_open.c -- the first pass over a recording: every event applied
 * in file order, names (definitions, modules) collected, the timeline and
 * checkpoints built, the FINAL state set kept as the authoritative end
 * state (see replay.h). */
#include <stdlib.h>
#include <string.h>

#include "dat_pipe.h"
#include "dat_reader_tables.h"
#include "replay_impl.h"

static mt_errc nomem(mt_err *err)
{
    return mt_err_set(err, MT_E_NOMEM, "out of memory replaying the recording");
}

static mt_errc apply_names(mt_replay *r, const mt_dat_event *ev, mt_err *err)
{
    switch (ev->kind) {
    case MT_DAT_PROCESS:
        r->proc = ev->u.proc;
        return MT_OK;
    case MT_DAT_MODULE:
        return mt_dat_modules_add(&r->mods, &ev->u.mod, r->st.s.ntotals + 1, err);
    case MT_DAT_UNLOAD:
        if (ev->u.unload.index < r->mods.count && !r->mods.items[ev->u.unload.index].unload_seq) {
            mt_module_info *m = &r->mods.items[ev->u.unload.index];
            m->unload_seq = r->st.s.ntotals + 1;
            m->unload_trace = ev->u.unload.next_trace;
            mt_modules_changed(&r->mods);
        }
        return MT_OK;
    case MT_DAT_DEF:
        return mt_dat_defs_add(&r->defs, &ev->u.def, ev->t_ns, err);
    default:
        return MT_OK;
    }
}

/* The FINAL state set: counters when the recording ended. */
static mt_errc note_final(mt_replay *r, const mt_dat_event *ev, mt_err *err)
{
    if (ev->kind == MT_DAT_STATE_BEGIN && ev->u.state.kind == MT_DAT_STATE_FINAL) {
        free(r->final);
        r->final_n = r->defs.count;
        r->final = calloc(r->final_n ? r->final_n : 1, sizeof *r->final);
        r->final_complete = false;
        r->final_totals_seen = false;
        return r->final ? MT_OK : nomem(err);
    }
    if (ev->kind == MT_DAT_TOTALS && r->final && r->st.s.set_kind == MT_DAT_STATE_FINAL) {
        r->final_totals = ev->u.totals;
        r->final_totals_seen = true;
    }
    if (ev->kind == MT_DAT_TRACE_STATE && r->final && r->st.s.set_kind == MT_DAT_STATE_FINAL &&
        ev->u.ts.id < r->final_n) {
        const mt_dat_trace_state *s = &ev->u.ts;
        r->final[s->id] =
            (mt_rtrace){s->alloc_count,     s->alloc_bytes,     s->free_count,     s->free_bytes,
                        s->temporary_count, s->temporary_bytes, s->peak_live_bytes};
    }
    if (ev->kind == MT_DAT_STATE_END && ev->u.state.kind == MT_DAT_STATE_FINAL && r->final)
        r->final_complete = true;
    if (ev->kind == MT_DAT_STATE_END && ev->u.state.kind == MT_DAT_STATE_INITIAL)
        r->initial_complete = true;
    return MT_OK;
}

static void note_point(mt_replay *r, const mt_dat_event *ev)
{
    const mt_dat_totals *t = &ev->u.totals;
    if (t->nfields < 16)
        return;
    mt_shm_point p = {ev->t_ns, t->f[0], t->f[1], t->f[2], t->f[3], t->f[4], t->f[13], t->f[15]};
    mt_rtl_add(&r->tl, &p);
}

static void count_event(mt_replay *r, const mt_dat_event *ev)
{
    r->info.allocs += ev->kind == MT_DAT_ALLOC;
    r->info.frees += ev->kind == MT_DAT_FREE;
    if (ev->kind == MT_DAT_TOTALS && ev->u.totals.events_dropped > r->info.dropped_events)
        r->info.dropped_events = ev->u.totals.events_dropped;
    if (ev->kind == MT_DAT_END) {
        r->info.finalized = true;
        r->info.end_reason = ev->u.end.reason;
        r->info.end_error = ev->u.end.error;
        if (ev->u.end.events_dropped > r->info.dropped_events)
            r->info.dropped_events = ev->u.end.events_dropped;
    }
    if (ev->kind == MT_DAT_TOTALS && ev->u.totals.nfields > 8) {
        uint64_t peak = ev->u.totals.f[8];
        if (!r->tpeak_seen)
            r->tpeak_first = peak;
        r->tpeak_seen = true;
        if (peak > r->tpeak) {
            r->tpeak = peak;
            r->tpeak_t = ev->t_ns;
        }
    }
}

/* A checkpoint, if the reader stands where it can restart: the frame's
 * deferred blocks added first (a checkpoint holds exact live groups). */
static mt_errc checkpoint(mt_replay *r, mt_err *err)
{
    mt_dat_pos pos;
    if (!mt_dat_pipe_tell(r->pipe, &pos))
        return MT_OK;
    mt_errc rc = mt_dat_pipe_flush_blocks(r->pipe, err);
    if (!rc && mt_rckpts_maybe_add(&r->ckpts, &r->st, &pos) != 0)
        rc = nomem(err);
    return rc;
}

static mt_errc step(mt_replay *r, const mt_dat_event *ev, const mt_rfilter *all, mt_err *err)
{
    mt_errc rc = apply_names(r, ev, err);
    if (!rc)
        rc = note_final(r, ev, err);
    if (!rc && ev->kind == MT_DAT_TOTALS && mt_rstate_prune_needs_exact(&r->st, ev->t_ns))
        rc = mt_dat_pipe_flush_blocks(r->pipe, err); /* TOTALS prunes: exact groups first */
    if (rc)
        return rc;
    bool timed = ev->kind == MT_DAT_ALLOC || ev->kind == MT_DAT_FREE || ev->kind == MT_DAT_TOTALS;
    if (mt_rstate_apply(&r->st, ev, all) != 0 || (timed && mt_rsilence_mark(&r->silence, ev->t_ns)))
        return nomem(err);
    count_event(r, ev);
    if (ev->kind == MT_DAT_TOTALS)
        note_point(r, ev);
    return checkpoint(r, err);
}

/* Replayed counters against the FINAL set: traces that differ. */
static uint64_t final_mismatches(const mt_replay *r)
{
    uint64_t bad = 0;
    for (uint64_t i = 0; r->final_complete && i < r->final_n && i < r->st.s.ndefs; i++) {
        const mt_rtrace *a = &r->final[i], *b = &r->st.traces[i];
        bad += a->alloc_count != b->alloc_count || a->alloc_bytes != b->alloc_bytes ||
               a->free_count != b->free_count || a->free_bytes != b->free_bytes ||
               a->temp_count != b->temp_count || a->temp_bytes != b->temp_bytes;
    }
    return bad;
}

/* The peak within the recording: the replayed one, with its time.  The
 * target's own figure (TOTALS: the process's high-water mark) when it is
 * higher: if it rose during the recording (or the recording began with the
 * process), events were dropped and the peak is the target's, by the first
 * TOTALS that showed it; if a mid-run recording's first TOTALS already
 * showed it, the process peaked before the recording began. */
static void peak_time(mt_replay *r)
{
    const mt_rscalars *s = &r->st.s;
    mt_replay_info *in = &r->info;
    in->peak_live_bytes = s->peak_live_bytes;
    /* No event, no peak: dated at the start, not at time 0 before it. */
    in->peak_t_ns = s->peak_t_ns > r->proc.record_start ? s->peak_t_ns : r->proc.record_start;
    if (r->tpeak <= in->peak_live_bytes)
        return;
    bool mid_run = r->proc.flags & MT_DAT_PROC_MID_RUN;
    if (!mid_run || r->tpeak > r->tpeak_first) {
        in->peak_live_bytes = r->tpeak;
        in->peak_t_ns = r->tpeak_t;
        in->peak_t_by = true;
    } else {
        in->process_peak_before = r->tpeak;
    }
}

/* The hooks stamp allocations and frees with the coarse clock
 * (src/preload/core/core_clock.h), which lags the precise one that stamps
 * record_start by up to a tick (1-4 ms, more on a loaded machine): an event
 * recorded just after the recording began can carry a time at or before
 * its start, even 0.  None happened before it (what was live then is the
 * INITIAL state), so such an event counts 1 ns after the start: a cursor at
 * the start shows the state the recording began with, and the peak is
 * never dated before the recording. */
static inline uint64_t fixed_time(uint64_t start, uint64_t t_ns)
{
    return t_ns <= start && start < UINT64_MAX ? start + 1 : t_ns;
}

static void fix_time(const mt_replay *r, uint64_t *t_ns)
{
    *t_ns = fixed_time(r->proc.record_start, *t_ns);
}

mt_errc mt_replay_next(mt_replay *r, mt_err *err)
{
    mt_errc rc = mt_dat_next(r->rd, &r->ev, err);
    bool hooked = r->ev.kind == MT_DAT_ALLOC || r->ev.kind == MT_DAT_FREE;
    if (rc == MT_OK && hooked)
        fix_time(r, &r->ev.t_ns);
    return rc;
}

/* The same in the first pass, through its pipe. */
static mt_errc first_next(mt_replay *r, mt_err *err)
{
    mt_errc rc = mt_dat_pipe_next(r->pipe, &r->ev, err);
    bool hooked = r->ev.kind == MT_DAT_ALLOC || r->ev.kind == MT_DAT_FREE;
    if (rc == MT_OK && hooked)
        fix_time(r, &r->ev.t_ns);
    return rc;
}

/* The first pass's look-ahead: allocations and frees wait in a small
 * queue, the slot of their live group prefetched (a random free's group is
 * a cache miss, the largest cost of the pass), and are applied RAHEAD
 * events later.  The queue is emptied, in order, before any other record
 * and at every restartable position, so the events are applied in file
 * order and every checkpoint holds exactly the events before it. */
#define RAHEAD 8u

typedef struct hooked_ev {
    mt_dat_kind kind;
    uint64_t t_ns;
    mt_dat_ev ev;
} hooked_ev;

typedef struct ahead {
    hooked_ev q[RAHEAD];
    unsigned head, n;
} ahead;

static mt_errc apply_oldest(mt_replay *r, ahead *a, const mt_rfilter *all, mt_err *err)
{
    const hooked_ev *h = &a->q[a->head];
    a->head = (a->head + 1) % RAHEAD;
    a->n--;
    if (mt_rstate_apply_ev(&r->st, h->kind, h->t_ns, &h->ev, all) != 0 ||
        mt_rsilence_mark(&r->silence, h->t_ns) != 0)
        return nomem(err);
    r->info.allocs += h->kind == MT_DAT_ALLOC;
    r->info.frees += h->kind == MT_DAT_FREE;
    return MT_OK;
}

static mt_errc drain(mt_replay *r, ahead *a, const mt_rfilter *all, mt_err *err)
{
    mt_errc rc = MT_OK;
    while (!rc && a->n)
        rc = apply_oldest(r, a, all, err);
    return rc;
}

static mt_errc push(mt_replay *r, ahead *a, const mt_rfilter *all, mt_err *err)
{
    if (a->n == RAHEAD && apply_oldest(r, a, all, err))
        return MT_E_NOMEM;
    hooked_ev *h = &a->q[(a->head + a->n++) % RAHEAD];
    *h = (hooked_ev){r->ev.kind, r->ev.t_ns, r->ev.u.ev};
    mt_rstate_prefetch(&r->st, &h->ev);
    return MT_OK;
}

/* Each batch: see replay_impl.h. */
/* Each event's time fixed (fix_time), the allocations counted and, with
 * marks, a silence mark per bucket the times fall in (not per event: a
 * call each was a tenth of the replaying thread's time; the bucket's
 * bounds kept, not a division per event): one pass over the batch, where
 * there were two.  -1 when out of memory. */
static int prepare(mt_replay *r, mt_dat_hev *b, size_t n, bool marks, size_t *allocs)
{
    uint64_t start = r->proc.record_start; /* a local: the stores to b might alias it */
    uint64_t lo = 1, hi = 0;               /* the bucket marked last: none yet */
    size_t a = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = b[i].t_ns = fixed_time(start, b[i].t_ns);
        a += b[i].kind == MT_DAT_ALLOC;
        if (!marks || (t >= lo && t <= hi))
            continue;
        if (mt_rsilence_mark(&r->silence, t) != 0)
            return -1;
        lo = t - t % MT_SILENCE_BUCKET_NS;
        hi = lo + (MT_SILENCE_BUCKET_NS - 1);
    }
    *allocs = a;
    return 0;
}

mt_errc mt_replay_apply_batch(mt_replay *r, mt_dat_hev *b, size_t n, const mt_rfilter *f,
                              bool marks, size_t *allocs, mt_err *err)
{
    size_t a;
    if (prepare(r, b, n, marks, &a) != 0)
        return nomem(err);
    if (allocs)
        *allocs = a;
    return mt_rstate_apply_batch(&r->st, b, n, f) != 0 ? nomem(err) : MT_OK;
}

/* The rest of the EVENTS2 record in progress, MT_REPLAY_BATCH events per
 * reader call (a call per event, and the queue's copies, cost more than
 * the events' own work): the queue emptied first (file order), then each
 * batch applied.  A checkpoint where the record ends a frame, as step()
 * would take after its last event. */
static mt_errc batches(mt_replay *r, ahead *a, const mt_rfilter *all, mt_err *err)
{
    _Static_assert(MT_REPLAY_BATCH == MT_DAT_PIPE_BATCH, "the pipe's batches are the pass's");
    mt_dat_hev *b;
    size_t n, allocs;
    mt_errc rc;
    while ((rc = mt_dat_pipe_next_batch(r->pipe, &b, &n, err)) == MT_OK && n) {
        if ((rc = drain(r, a, all, err)) != MT_OK ||
            (rc = mt_replay_apply_batch(r, b, n, all, true, &allocs, err)) != MT_OK)
            return rc;
        r->info.allocs += allocs; /* the others are frees */
        r->info.frees += n - allocs;
        if ((rc = checkpoint(r, err)) != MT_OK)
            return rc;
    }
    return rc;
}

/* The reader's deferred frame blocks (mt_dat_defer_blocks): to the live
 * groups.  Most blocks of a frame are freed within it, and then neither
 * their allocation nor their free touches the groups (a cache miss each
 * on a large table). */
static int add_blocks(void *st, const mt_dat_block *b, size_t n)
{
    return mt_rstate_add_blocks(st, b, n);
}

static mt_errc read_events(mt_replay *r, mt_err *err)
{
    mt_rfilter all = {false, 0, UINT64_MAX};
    mt_dat_pos pos;
    if (!mt_dat_pipe_tell(r->pipe, &pos) || mt_rckpts_maybe_add(&r->ckpts, &r->st, &pos) != 0)
        return nomem(err);
    ahead a = {.n = 0};
    mt_errc rc;
    while ((rc = first_next(r, err)) == MT_OK) {
        bool hooked = r->ev.kind == MT_DAT_ALLOC || r->ev.kind == MT_DAT_FREE;
        if (hooked && !mt_dat_pipe_tell(r->pipe, &pos)) {
            if ((rc = push(r, &a, &all, err)) == MT_OK)
                rc = batches(r, &a, &all, err);
        } else if ((rc = drain(r, &a, &all, err)) == MT_OK)
            rc = step(r, &r->ev, &all, err);
        if (rc)
            return rc;
    }
    if (rc != MT_E_EMPTY || (rc = drain(r, &a, &all, err)) != MT_OK)
        return rc;
    return mt_dat_pipe_flush_blocks(r->pipe, err);
}

mt_errc mt_replay_read_all(mt_replay *r, mt_err *err)
{
    /* read on a second thread when there is a core for it (dat_pipe.h) */
    r->pipe = mt_dat_pipe_start(r->rd, add_blocks, &r->st, 0, err);
    if (!r->pipe)
        return MT_E_NOMEM;
    mt_errc rc = read_events(r, err);
    mt_dat_pipe_end(r->pipe); /* deferral off: the seek passes add every event */
    r->pipe = NULL;
    if (rc)
        return rc;
    r->info.events = r->st.s.events;
    r->info.lost_events = r->st.s.lost_events;
    memcpy(r->info.lost_why, r->st.s.lost_why, sizeof r->info.lost_why);
    r->info.culled = r->proc.record_mode == MT_DAT_MODE_CULLED;
    r->info.cull_ms = r->proc.cull_ms;
    r->info.tick_order = r->proc.tick_order;
    r->info.culled_blocks = r->st.s.culled_blocks;
    r->info.written_early = r->st.s.written_early;
    r->info.final_state = r->final_complete;
    r->info.final_mismatches = final_mismatches(r);
    r->info.inexact_start = (r->proc.flags & MT_DAT_PROC_MID_RUN) && !r->initial_complete;
    if (mt_rsilence_finish(&r->silence, r->proc.record_start, UINT64_MAX) != 0)
        return nomem(err);
    peak_time(r);
    return MT_OK;
}
