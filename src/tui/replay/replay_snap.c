/* replay_snap.c -- the replay state at the cursor as an mt_view, the
 * shape every report and export reads (see replay.h).
 *
 * Traces: one record per definition visible at the cursor; at the end of
 * a recording with a complete FINAL state set, that set's counters (the
 * target's own, exact even for per-trace peaks).  Growth checkpoints come
 * from the replay's checkpoints (the newest at least one publish interval,
 * 30 s and 300 s before the cursor); ages from the live groups at the
 * cursor (age_scan_ns = the cursor); process figures the events cannot
 * give (RSS, allocator, unknown frees) from the newest TOTALS record:
 * RSS, memtop's own bytes and threads are unknown before the first.  A
 * sampled recording's counts of allocations and frees: the target's exact
 * ones at its end, estimates (marked so) elsewhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_impl.h"

static const uint64_t age_limits_s[MT_AGE_BUCKETS - 1] = {1, 10, 60, 600, 3600, 21600, 86400};

static unsigned age_bucket(uint64_t age_ns)
{
    unsigned b = 0;
    while (b < MT_AGE_BUCKETS - 1 && age_ns >= age_limits_s[b] * 1000000000ull)
        b++;
    return b;
}

static void fill_trace(const mt_rtrace *t, uint32_t id, mt_shm_trace *o)
{
    memset(o, 0, sizeof *o);
    o->id = id;
    o->alloc_count = t->alloc_count;
    o->alloc_bytes = t->alloc_bytes;
    o->free_count = t->free_count < t->alloc_count ? t->free_count : t->alloc_count;
    o->free_bytes = t->free_bytes < t->alloc_bytes ? t->free_bytes : t->alloc_bytes;
    o->live_count = o->alloc_count - o->free_count;
    o->live_bytes = o->alloc_bytes - o->free_bytes;
    o->peak_live_bytes = t->peak_live_bytes > o->live_bytes ? t->peak_live_bytes : o->live_bytes;
    o->temporary_count = t->temp_count;
    o->temporary_bytes = t->temp_bytes;
    o->oldest_birth_ns = MT_UNKNOWN;
}

static void fill_ages(const mt_replay *r, mt_shm_trace *tr, size_t ntr, uint64_t now)
{
    const mt_rlive *lv = &r->st.live;
    for (size_t i = 0; i < lv->cap; i++) {
        mt_rgroup gi;
        const mt_rgroup *g = &gi;
        if (!mt_rlive_get(lv, i, &gi) || g->trace >= ntr || g->count <= 0 || g->bytes <= 0)
            continue;
        mt_shm_trace *t = &tr[g->trace];
        uint64_t birth = g->birth_ms > UINT64_MAX / 1000000u ? UINT64_MAX : g->birth_ms * 1000000u;
        t->age_bytes[age_bucket(now > birth ? now - birth : 0)] += (uint64_t)g->bytes;
        if (birth < t->oldest_birth_ns)
            t->oldest_birth_ns = birth;
    }
}

static void fill_growth(const mt_replay *r, mt_shm_slot *slot, mt_shm_trace *tr, size_t ntr)
{
    uint64_t ms = r->proc.publish_interval_ms ? r->proc.publish_interval_ms : 1000;
    const uint64_t ages[MT_CKPTS] = {ms * 1000000ull, 30000000000ull, 300000000000ull};
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        const mt_rckpt *c = mt_rckpts_before(&r->ckpts, slot->t_ns, ages[k]);
        if (!c || c->s.t_ns == 0)
            continue;
        slot->ckpt_ns[k] = c->s.t_ns;
        for (size_t i = 0; i < ntr && i < c->s.ndefs; i++) {
            const mt_rtrace *t = &c->traces[i];
            tr[i].ckpt_live_bytes[k] =
                t->alloc_bytes > t->free_bytes ? t->alloc_bytes - t->free_bytes : 0;
        }
    }
}

static void sum_totals(mt_shm_totals *t, const mt_shm_trace *tr, size_t ntr)
{
    for (size_t i = 0; i < ntr; i++) {
        t->live_bytes += tr[i].live_bytes;
        t->live_count += tr[i].live_count;
        t->alloc_count += tr[i].alloc_count;
        t->alloc_bytes += tr[i].alloc_bytes;
        t->free_count += tr[i].free_count;
        t->free_bytes += tr[i].free_bytes;
        t->temporary_count += tr[i].temporary_count;
        t->temporary_bytes += tr[i].temporary_bytes;
    }
    t->trace_count = ntr;
}

static uint64_t field(const mt_rscalars *s, unsigned i, uint64_t dflt)
{
    return s->have_totals && s->last_totals.nfields > i ? s->last_totals.f[i] : dflt;
}

/* A sampled recording: the traces' sums of allocations and frees are
 * estimates; the target's exact counts (TOTALS fields 2-4,
 * docs/recording-format.md) replace them where the file holds them for the
 * cursor, at the end of a complete FINAL state set (whose traces the view
 * shows then).  False where they stay estimates (mt_view_totals_exact). */
static bool exact_counts(const mt_replay *r, mt_shm_totals *t)
{
    const mt_dat_totals *ft = &r->final_totals;
    if (!r->final_complete || !mt_replay_at_end(r) || !r->final_totals_seen || ft->nfields < 5)
        return false;
    t->alloc_count = ft->f[2];
    t->alloc_bytes = ft->f[3];
    t->free_count = ft->f[4];
    return true;
}

static void fill_totals(const mt_replay *r, mt_shm_totals *t, const mt_shm_trace *tr, size_t ntr,
                        bool *estimated)
{
    memset(t, 0, sizeof *t);
    sum_totals(t, tr, ntr);
    *estimated = r->proc.sample_rate_bytes && !exact_counts(r, t);
    const mt_rscalars *s = &r->st.s;
    uint64_t peak = s->peak_live_bytes > s->totals_peak ? s->peak_live_bytes : s->totals_peak;
    if (r->final_complete && mt_replay_at_end(r) && s->totals_peak)
        peak = s->totals_peak; /* the target's own, exact; a replay across threads is not */
    t->peak_live_bytes = peak > t->live_bytes ? peak : t->live_bytes;
    /* A recording begun mid-run knows the process's peak from its first
     * TOTALS on; before it, only the peak within the recording. */
    if ((r->proc.flags & MT_DAT_PROC_MID_RUN) && !s->have_totals)
        t->peak_live_bytes = MT_UNKNOWN;
    t->unknown_free_count = field(s, 9, 0);
    t->untracked_alloc_count = field(s, 10, 0);
    t->missed_free_count = field(s, 11, s->missed_free_count);
    t->dropped_traces = field(s, 12, 0);
    t->allocator_bytes = field(s, 13, MT_UNKNOWN);
    t->allocator_inuse_bytes = field(s, 14, MT_UNKNOWN);
    /* Unknown (not 0) before the first TOTALS, e.g. in a recording's first
     * second from process start written by an older writer. */
    t->rss_bytes = field(s, 15, MT_UNKNOWN);
    t->tracker_bytes = field(s, 16, MT_UNKNOWN);
    t->thread_count = field(s, 18, MT_UNKNOWN);
}

static mt_errc fill_timeline(const mt_replay *r, mt_snapshot *snap, mt_err *err)
{
    mt_shm_slot *sl = &snap->slot;
    const mt_shm_totals *t = &sl->totals;
    mt_shm_point last = {sl->t_ns,       t->live_bytes, t->live_count,      t->alloc_count,
                         t->alloc_bytes, t->free_count, t->allocator_bytes, t->rss_bytes};
    snap->timeline = malloc(MT_TIMELINE_POINTS * sizeof *snap->timeline);
    if (!snap->timeline)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the timeline");
    sl->ntimeline = (uint32_t)mt_rtl_until(&r->tl, sl->t_ns, &last, snap->timeline,
                                           MT_TIMELINE_POINTS, &sl->timeline_step_ns);
    return MT_OK;
}

static void fill_identity(const mt_replay *r, mt_view *out)
{
    mt_identity *id = &out->seg.id;
    memset(&out->seg, 0, sizeof out->seg);
    out->seg.fd = -1;
    snprintf(out->seg.path, sizeof out->seg.path, "%s", r->path);
    snprintf(out->path, sizeof out->path, "%s", r->path);
    id->pid = r->proc.pid;
    id->ppid = r->proc.ppid;
    id->uid = r->proc.uid;
    id->proc_start_ticks = r->proc.proc_start_ticks;
    id->start_unix_ns = r->proc.start_unix_ns;
    id->max_depth = r->proc.max_depth;
    id->publish_interval_ms = r->proc.publish_interval_ms;
    id->temporary_ns = r->proc.temporary_ns;
    id->sample_rate_bytes = r->proc.sample_rate_bytes; /* mt_view_sample_rate */
    memcpy(id->exe, r->proc.exe, sizeof id->exe);
    memcpy(id->cmdline, r->proc.cmdline, sizeof id->cmdline);
}

/* Rates between the last two timeline points (the cursor's and the one
 * before it).  Where a sampled recording's counts at the cursor are
 * estimates, the cursor's point is left out: the others are TOTALS
 * records, exact, and an estimate less an exact count is no rate. */
#define RATE_WINDOW_NS 1000000000ull

static void fill_rates(const mt_replay *r, mt_view *out)
{
    const mt_snapshot *s = &out->snap;
    memset(&out->rates, 0, sizeof out->rates);
    uint32_t n = s->slot.ntimeline - (s->slot.ntimeline && !mt_view_totals_exact(out));
    if (n < 2)
        return;
    /* Over the last second or more before the cursor (before the newest
     * TOTALS when the cursor's point is left out): the last point is the
     * cursor itself, often only microseconds after the one before it. */
    const mt_shm_point *q = &s->timeline[n - 1], *p = q - 1;
    while (p > s->timeline && q->t_ns - p->t_ns < RATE_WINDOW_NS)
        p--;
    if (q->t_ns <= p->t_ns)
        return;
    double dt = (double)(q->t_ns - p->t_ns) / 1e9;
    out->rates.valid = true;
    out->rates.window_s = dt;
    out->rates.stopped_s = (double)mt_rsilence_within(&r->silence, p->t_ns, q->t_ns) / 1e9;
    out->rates.allocs_per_s = ((double)q->alloc_count - (double)p->alloc_count) / dt;
    out->rates.alloc_bytes_per_s = ((double)q->alloc_bytes - (double)p->alloc_bytes) / dt;
    out->rates.frees_per_s = ((double)q->free_count - (double)p->free_count) / dt;
}

void mt_replay_view_free(mt_view *out)
{
    mt_snapshot_free(&out->snap);
    out->have_snap = false;
}

static void fill_traces(const mt_replay *r, mt_shm_trace *tr, size_t ntr)
{
    bool final = r->final_complete && mt_replay_at_end(r);
    for (size_t i = 0; i < ntr; i++) {
        const mt_rtrace *t = final && i < r->final_n ? &r->final[i] : &r->st.traces[i];
        fill_trace(t, (uint32_t)i, &tr[i]);
    }
}

static void fill_slot(const mt_replay *r, mt_snapshot *snap, size_t ntr, bool *estimated)
{
    mt_shm_slot *sl = &snap->slot;
    sl->t_ns = mt_replay_cursor(r);
    sl->unix_ns = r->proc.start_unix_ns + sl->t_ns;
    sl->publish_seq = r->st.s.ntotals;
    sl->age_scan_ns = sl->t_ns ? sl->t_ns : 1;
    fill_traces(r, snap->traces, ntr);
    fill_ages(r, snap->traces, ntr, sl->t_ns);
    fill_growth(r, sl, snap->traces, ntr);
    fill_totals(r, &sl->totals, snap->traces, ntr, estimated);
    sl->ntraces = ntr;
    sl->defs_count = ntr;
    sl->modules_count = r->st.s.nmodules < r->mods.count ? r->st.s.nmodules : r->mods.count;
    /* the allocator's figures are the newest TOTALS', as old as it says
     * (field 20; older than the recording's clock: from its start, 1) */
    uint64_t age_ms = field(&r->st.s, MT_DAT_TOTALS_ALLOCATOR_AGE, 0);
    uint64_t totals_t = r->st.s.last_totals_t;
    snap->allocator_at_ns = !r->st.s.have_totals           ? 0
                            : age_ms < totals_t / 1000000u ? totals_t - age_ms * 1000000u
                                                           : 1;
    /* RSS and the other process figures are the newest TOTALS': dated */
    snap->totals_at_ns = r->st.s.have_totals ? (totals_t ? totals_t : 1) : 0;
    snap->flags = mt_replay_flags(r);
    if (r->proc.flags & MT_DAT_PROC_FORK_CHILD)
        snap->flags |= MT_FLAG_FORK_CHILD;
    /* A recording does not say that the trace table filled up, but the
     * overflow trace (id 0, no frames) only counts blocks once it has. */
    if (ntr && snap->traces[0].alloc_count && !r->defs.items[0].nframes)
        snap->flags |= MT_FLAG_TRACES_FULL;
}

/* A recording's ALLOCATORS records name the allocators: at the cursor,
 * the newest one written by then (what the live view showed then, their
 * figures not recorded; not an allocator a plugin loaded later brought).
 * Older writers' recordings know only how many memtop could not see
 * (TOTALS), not which: they become unnamed entries ("more").  Not known
 * (seq 0) before the first of either. */
static void fill_allocators(const mt_replay *r, mt_view *out)
{
    const mt_shm_allocators *al = mt_dat_allocators_at(r->rd, mt_replay_cursor(r));
    if (al) {
        out->allocs = *al;
        return;
    }
    memset(&out->allocs, 0, sizeof out->allocs);
    uint64_t n = field(&r->st.s, MT_DAT_TOTALS_ALLOC_INEXACT, UINT64_MAX);
    if (n == UINT64_MAX || n > UINT32_MAX)
        return;
    out->allocs.seq = 2;
    out->allocs.more = out->allocs.inexact = (uint32_t)n;
}

mt_errc mt_replay_fill(const mt_replay *r, mt_view *out, mt_err *err)
{
    mt_replay_view_free(out);
    size_t ntr = r->st.s.ndefs < r->defs.count ? r->st.s.ndefs : r->defs.count;
    mt_snapshot *snap = &out->snap;
    memset(snap, 0, sizeof *snap);
    snap->traces = calloc(ntr ? ntr : 1, sizeof *snap->traces);
    if (!snap->traces)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for %zu traces", ntr);
    fill_slot(r, snap, ntr, &out->counts_estimated);
    mt_errc rc = fill_timeline(r, snap, err);
    if (rc) {
        mt_replay_view_free(out);
        return rc;
    }
    fill_identity(r, out);
    /* A fork child's times count from its parent's start: its own began
     * with its recording (MEMTOP_RECORD: at its first tracked event after
     * the fork; docs/recording-format.md, "Starting and stopping"). */
    out->start_ns = r->proc.flags & MT_DAT_PROC_FORK_CHILD ? r->proc.record_start : 0;
    fill_allocators(r, out);
    out->defs = r->defs;
    mt_modules_index_holders(&r->mods); /* built once, and shared by the alias */
    out->mods = r->mods;
    out->attached = false;
    out->have_snap = true;
    out->have_prev = false;
    fill_rates(r, out);
    return MT_OK;
}
