/* publish_snapshot.c -- turn the live counters into one published snapshot slot.
 *
 * Runs on the publisher thread (or the exiting thread, under the publish
 * lock).  Per publish: append new trace definitions and modules, rotate the
 * growth checkpoints, rescan block ages when due, then write the next slot
 * of the ring under its seqlock (see shm_layout.h for the protocol).
 *
 * Growth checkpoints: checkpoint k is the oldest value of a ring of
 * ring_len[k] values per trace, the newest taken at the last publish at
 * least step[k] ns after the one before.  So once the ring is full the
 * published checkpoint is between (len-1) and len steps old; before, it is
 * the first one (the window is shorter right after start).  Checkpoint 0:
 * 2 values one publish interval apart (the previous publish); 1: 6 values
 * 6 s apart (30-36 s ago: the window of the viewer's growth rate, which
 * must read as "now": a burst is forgotten within 36 s); 2: 2 values 300 s
 * apart (300-600 s ago).  80 bytes per trace.
 *
 * Ages: a scan over the live-block table, one shard lock at a time.  It
 * costs O(live blocks), so above 1M blocks it runs every ceil(n/1M)-th
 * publish; the slot says when ages were computed (age_scan_ns).  The scan
 * adds into the trace records of the slot being written, and a publish
 * without a scan copies the ages from the previous slot of this segment,
 * which we wrote (offset and count from our own state, never read from
 * the segment): so ages cost no memory per trace here.  The first publish
 * into a segment (at start, in a fork child) always scans.
 *
 * Totals and folding: the totals are the sums over every trace of the
 * table, published or not, so they stay exact whatever the segment could
 * not hold.  A trace without a record of its own (its definition found no
 * room in the segment, the slot is full, or it is still being created) is
 * folded into the overflow trace's record (id 0): its counters, its ages
 * and its growth checkpoints.  So the records always sum to the totals.
 * The folded record's peak_live_bytes is the sum of its members' peaks: an
 * upper bound, not the exact peak of the sum (docs/shm-protocol.md).
 *
 * Sampled mode (MEMTOP_SAMPLE): the trace counters hold estimates
 * (sample_weight.h), so the sums do too, except the totals' alloc_count,
 * alloc_bytes and free_count, which come from the exact per-thread counts
 * instead (and so are not the sums of the records).
 */
#include "publish_snapshot.h"

#include "core_assert.h"
#include "unwind_backtrace.h"
#include "core_clock.h"
#include "publish_modules.h"
#include "core_os_memory.h"
#include "core_allocator_figures.h"
#include "core_procinfo.h"
#include "table_ptr.h"
#include "core_state.h"
#include "core_sample.h"
#include "sample_weight.h"
#include "table_trace.h"

#include <string.h>
#include <time.h>

/* Checkpoint rings: values per trace in each, and where each starts in
 * pub_trace.ring. */
#define RING_VALUES 10u
static const unsigned ring_len[MT_CKPTS] = {2, 6, 2};
static const unsigned ring_base[MT_CKPTS] = {0, 2, 8};

/* What the publisher keeps per trace between publishes: its live bytes at
 * the checkpoint rings' times. */
typedef struct {
    uint64_t ring[RING_VALUES];
} pub_trace;

struct mt_snapshot_state {
    pub_trace *traces; /* reserved for MT_TRACE_MAX, touched as used */
    uint32_t traces_touched;
    uint32_t defs_published;
    uint64_t step_ns[MT_CKPTS];
    uint64_t ring_t[RING_VALUES]; /* when each ring value was taken; 0 = not yet */
    unsigned head[MT_CKPTS];      /* per ring: the position written next (its oldest) */
    uint64_t last_t[MT_CKPTS];    /* per ring: when it was last written; 0 = never */
    uint64_t age_scan_ns;
    uint64_t publishes_since_scan;
    /* The latest slot's trace records, whose first `aged` hold the latest
     * scan's ages (segment offset; 0: no such slot in this segment). */
    uint64_t aged_off;
    uint32_t aged;
    bool dropping; /* some trace could not be published (segment full) */
    mt_published_modules *modules;
    mt_timeline timeline;
    uint64_t timeline_step_ns; /* its first spacing (it doubles as it fills) */
};

mt_snapshot_state *mt_snapshot_state_new(uint32_t interval_ms)
{
    mt_snapshot_state *s = mt_os_alloc(sizeof *s);
    if (!s)
        return NULL;
    s->traces = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(pub_trace));
    s->modules = mt_modules_new();
    if (!s->traces || !s->modules)
        return NULL;
    s->step_ns[0] = (uint64_t)interval_ms * 900000ull; /* 0.9 interval: tolerate jitter */
    s->step_ns[1] = 6ull * 1000000000ull;
    s->step_ns[2] = 300ull * 1000000000ull;
    s->timeline_step_ns = (uint64_t)interval_ms * 1000000ull;
    mt_timeline_init(&s->timeline, s->timeline_step_ns);
    return s;
}

void mt_snapshot_state_reset_for_child(mt_snapshot_state *s)
{
    s->aged_off = 0; /* a new segment: its first publish scans */
    s->defs_published = 0;
    s->dropping = false;
    mt_modules_reset(s->modules);
    /* Its history starts now: the parent's checkpoints and timeline made
     * a child's growth window longer than its life ("up 4s", growth over
     * 8 s), its graph the parent's past, and blocks it allocated at its
     * start a rising segment of the leak score against the parent's
     * values from before the fork. */
    memset(s->ring_t, 0, sizeof s->ring_t);
    memset(s->head, 0, sizeof s->head);
    memset(s->last_t, 0, sizeof s->last_t);
    mt_timeline_init(&s->timeline, s->timeline_step_ns);
}

static void publish_defs(mt_snapshot_state *s, mt_shm_writer *w, uint32_t count)
{
    while (s->defs_published < count) {
        mt_trace *t = mt_trace_get(s->defs_published);
        if (!mt_trace_ready(t))
            break; /* being created: next time */
        const mt_trace_def *d = mt_trace_def_get(s->defs_published);
        if (!mt_shm_append_def(w, s->defs_published, mt_trace_def_frames(d), d->nframes, d->flags,
                               d->hash, d->first_seen_ns)) {
            s->dropping = true;
            break;
        }
        s->defs_published++;
    }
    if (s->defs_published > s->traces_touched) {
        mt_os_account((int64_t)(s->defs_published - s->traces_touched) *
                      (int64_t)sizeof(pub_trace));
        s->traces_touched = s->defs_published;
    }
}

static unsigned age_bucket(uint64_t age_ns)
{
    static const uint64_t limits_s[MT_AGE_BUCKETS - 1] = {1, 10, 60, 600, 3600, 21600, 86400};
    unsigned b = 0;
    while (b < MT_AGE_BUCKETS - 1 && age_ns >= limits_s[b] * 1000000000ull)
        b++;
    return b;
}

typedef struct {
    mt_shm_trace *tr; /* the slot's records, ids 0..ntr-1 */
    uint32_t ntr;
    uint64_t now;
} age_ctx;

static void age_visit(const mt_block *b, void *arg)
{
    age_ctx *c = arg;
    if (!c->ntr)
        return;
    mt_shm_trace *r = &c->tr[b->trace < c->ntr ? b->trace : MT_TRACE_OVERFLOW]; /* folded */
    uint64_t age = c->now > b->birth_ns ? c->now - b->birth_ns : 0;
    /* sampled: the block's estimated bytes (the address only rounds counts) */
    r->age_bytes[age_bucket(age)] += mt_sample_weigh(b->size, mt_g.cfg.sample_rate, 0).bytes;
    if (b->birth_ns < r->oldest_birth_ns)
        r->oldest_birth_ns = b->birth_ns;
}

static bool scan_due(const mt_snapshot_state *s)
{
    uint64_t every = mt_ptr_count() / 1000000u + 1;
    return !s->aged_off || s->publishes_since_scan + 1 >= every;
}

/* Fills the ages of the records tr[0..ntr) (zero, oldest MT_UNKNOWN so
 * far): from a scan, or from the previous slot.  Records the slot for the
 * next publish. */
static void fill_ages(mt_snapshot_state *s, const mt_shm_writer *w, mt_shm_trace *tr, uint32_t ntr,
                      bool scan, uint64_t now)
{
    if (scan) {
        age_ctx c = {tr, ntr, now};
        mt_ptr_visit(age_visit, &c);
        s->age_scan_ns = now;
        s->publishes_since_scan = 0;
        s->aged = ntr;
    } else {
        const mt_shm_trace *prev = (const mt_shm_trace *)(w->base + s->aged_off);
        uint32_t n = ntr < s->aged ? ntr : s->aged;
        for (uint32_t i = 0; i < n; i++) {
            memcpy(tr[i].age_bytes, prev[i].age_bytes, sizeof tr[i].age_bytes);
            tr[i].oldest_birth_ns = prev[i].oldest_birth_ns;
        }
        s->publishes_since_scan++;
        s->aged = n; /* later traces were not seen by the scan: no ages */
    }
    s->aged_off = (uint64_t)((unsigned char *)tr - w->base);
}

static uint64_t live_bytes_of(uint32_t id)
{
    return atomic_load_explicit(&mt_trace_get(id)->live_bytes, memory_order_relaxed);
}

/* Live bytes of the traces [ntr, count), which are folded into record 0. */
static uint64_t folded_live_bytes(uint32_t ntr, uint32_t count)
{
    uint64_t sum = 0;
    for (uint32_t i = ntr; i < count; i++)
        sum += live_bytes_of(i);
    return sum;
}

static void rotate_checkpoints(mt_snapshot_state *s, uint32_t ntr, uint32_t count, uint64_t now)
{
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        if (s->last_t[k] && now - s->last_t[k] < s->step_ns[k])
            continue;
        unsigned at = ring_base[k] + s->head[k];
        for (uint32_t i = 0; i < ntr; i++)
            s->traces[i].ring[at] = live_bytes_of(i);
        if (ntr)
            s->traces[MT_TRACE_OVERFLOW].ring[at] += folded_live_bytes(ntr, count);
        s->ring_t[at] = now ? now : 1;
        s->last_t[k] = s->ring_t[at];
        s->head[k] = (s->head[k] + 1) % ring_len[k];
    }
}

/* Ring position of checkpoint k: its oldest value taken before now; -1
 * when there is none (the first publish). */
static int ckpt_at(const mt_snapshot_state *s, unsigned k, uint64_t now)
{
    for (unsigned j = 0; j < ring_len[k]; j++) {
        unsigned at = ring_base[k] + (s->head[k] + j) % ring_len[k];
        if (s->ring_t[at] && s->ring_t[at] < now)
            return (int)at;
    }
    return -1;
}

/* Reads one trace's counters into a record (mt_trace_read: one consistent
 * copy, whole events only, alloc_count >= free_count). */
static void read_counters(uint32_t id, mt_shm_trace *r)
{
    mt_trace *t = mt_trace_get(id);
    memset(r, 0, sizeof *r);
    r->id = id;
    mt_trace_counts c;
    mt_trace_read(t, &c);
    r->free_count = c.free_count;
    r->free_bytes = c.free_bytes;
    r->temporary_count = c.temp_count;
    r->temporary_bytes = c.temp_bytes;
    r->alloc_count = c.alloc_count;
    r->live_bytes = c.live_bytes;
    r->peak_live_bytes = c.peak_live_bytes;
    r->live_count = r->alloc_count - r->free_count;
    r->alloc_bytes = r->live_bytes + r->free_bytes;
    if (r->peak_live_bytes < r->live_bytes)
        r->peak_live_bytes = r->live_bytes;
}

/* A published trace's record: its counters, checkpoints, no ages yet. */
static void read_trace(const mt_snapshot_state *s, const int *at, uint32_t id, mt_shm_trace *r)
{
    const pub_trace *p = &s->traces[id];
    read_counters(id, r);
    for (unsigned k = 0; k < MT_CKPTS; k++)
        r->ckpt_live_bytes[k] = at[k] >= 0 ? p->ring[at[k]] : 0;
    r->oldest_birth_ns = MT_UNKNOWN; /* ages: fill_ages */
}

/* Adds a folded trace's counters to the overflow record. */
static void fold_into(mt_shm_trace *o, const mt_shm_trace *r)
{
    o->alloc_count += r->alloc_count;
    o->alloc_bytes += r->alloc_bytes;
    o->free_count += r->free_count;
    o->free_bytes += r->free_bytes;
    o->live_count += r->live_count;
    o->live_bytes += r->live_bytes;
    o->peak_live_bytes += r->peak_live_bytes;
    o->temporary_count += r->temporary_count;
    o->temporary_bytes += r->temporary_bytes;
}

static void add_to_totals(mt_shm_totals *t, const mt_shm_trace *r)
{
    t->live_bytes += r->live_bytes;
    t->live_count += r->live_count;
    t->alloc_count += r->alloc_count;
    t->alloc_bytes += r->alloc_bytes;
    t->free_count += r->free_count;
    t->free_bytes += r->free_bytes;
    t->temporary_count += r->temporary_count;
    t->temporary_bytes += r->temporary_bytes;
}

/* The totals beyond the traces' sums; returns when the allocator's
 * figures were taken (core_allocator_figures.h). */
static uint64_t finish_totals(mt_shm_totals *t, uint32_t count, uint32_t ntr, bool dropping)
{
    uint64_t allocator_at;
    t->peak_live_bytes = atomic_load_explicit(&mt_g.peak_live_bytes, memory_order_relaxed);
    if (t->peak_live_bytes < t->live_bytes)
        t->peak_live_bytes = t->live_bytes;
    t->unknown_free_count = atomic_load_explicit(&mt_g.unknown_free_count, memory_order_relaxed);
    t->untracked_alloc_count =
        atomic_load_explicit(&mt_g.untracked_alloc_count, memory_order_relaxed);
    t->missed_free_count = atomic_load_explicit(&mt_g.missed_free_count, memory_order_relaxed);
    t->thread_count = atomic_load_explicit(&mt_g.thread_count, memory_order_relaxed);
    t->dropped_traces = dropping && count > ntr ? count - ntr : 0; /* folded into id 0 */
    mt_allocator_bytes(&t->allocator_bytes, &t->allocator_inuse_bytes, &allocator_at);
    t->rss_bytes = mt_proc_rss_bytes();
    t->tracker_bytes = mt_os_bytes();
    t->trace_count = ntr;
    mt_exact_totals ex;
    if (mt_sample_exact_totals(&ex)) { /* the sums above are estimates; these stay exact */
        t->alloc_count = ex.allocs;
        t->alloc_bytes = ex.bytes;
        t->free_count = ex.frees;
    }
    return allocator_at;
}

/* Writes the slot's payload; the caller holds its seqlock odd. */
static void fill_slot(mt_snapshot_state *s, const mt_shm_writer *w, unsigned char *slot,
                      uint32_t ntr, uint32_t count, bool scan, uint64_t now)
{
    mt_shm_slot *h = (mt_shm_slot *)slot;
    mt_shm_point pt = {.t_ns = now};
    mt_timeline_add(&s->timeline, &pt); /* placeholder: filled once totals are known */
    mt_shm_point *tl = (mt_shm_point *)(slot + sizeof *h);
    mt_shm_trace *tr = (mt_shm_trace *)(tl + s->timeline.n);
    mt_shm_totals tot;
    memset(&tot, 0, sizeof tot);
    int at[MT_CKPTS];
    for (unsigned k = 0; k < MT_CKPTS; k++)
        at[k] = ckpt_at(s, k, now);
    for (uint32_t i = 0; i < ntr; i++) {
        read_trace(s, at, i, &tr[i]);
        add_to_totals(&tot, &tr[i]);
    }
    for (uint32_t i = ntr; i < count; i++) { /* no record of their own: fold them */
        mt_shm_trace r;
        read_counters(i, &r);
        add_to_totals(&tot, &r);
        if (ntr)
            fold_into(&tr[MT_TRACE_OVERFLOW], &r);
    }
    fill_ages(s, w, tr, ntr, scan, now);
    uint64_t allocator_at = finish_totals(&tot, count, ntr, s->dropping);
    /* before the slot's release: a figure taken during this publish is the slot's own */
    __atomic_store_n(&w->hdr->allocator_at_ns, allocator_at < now ? allocator_at : now,
                     __ATOMIC_RELAXED);
    pt = (mt_shm_point){now,
                        tot.live_bytes,
                        tot.live_count,
                        tot.alloc_count,
                        tot.alloc_bytes,
                        tot.free_count,
                        tot.allocator_bytes,
                        tot.rss_bytes};
    s->timeline.pts[s->timeline.n - 1] = pt;
    memcpy(tl, s->timeline.pts, s->timeline.n * sizeof *tl);
    h->t_ns = now;
    h->unix_ns = mt_unix_ns();
    for (unsigned k = 0; k < MT_CKPTS; k++)
        h->ckpt_ns[k] = at[k] >= 0 ? s->ring_t[at[k]] : 0;
    h->age_scan_ns = s->age_scan_ns;
    h->totals = tot;
    h->ntimeline = s->timeline.n;
    h->ntraces = ntr;
    h->timeline_step_ns = s->timeline.step_ns;
    h->defs_count = s->defs_published;
    h->max_traces = mt_g.cfg.max_traces;
}

/* At the first publish into a segment: commits room for each slot's
 * header, a full timeline and the overflow record, so that a segment that
 * runs out of room later (a full /dev/shm) can still take snapshots with
 * exact totals, every trace folded into the overflow record if need be. */
static void reserve_slots(mt_shm_writer *w, uint64_t fixed)
{
    uint64_t most = fixed + (uint64_t)MT_TIMELINE_POINTS * sizeof(mt_shm_point);
    for (unsigned i = 0; i < MT_SLOTS; i++)
        if (most + sizeof(mt_shm_trace) <= w->p.slots[i].cap)
            mt_shm_commit(w, w->p.slots[i].off, most + sizeof(mt_shm_trace));
}

/* How many of want records the slot can take: its capacity, and when the
 * segment cannot grow (a full /dev/shm), what is committed already. */
static uint32_t slot_room(mt_shm_writer *w, const mt_shm_slot_ref *ref, uint64_t fixed,
                          uint32_t want)
{
    uint64_t cap = ref->cap;
    if (fixed + (uint64_t)want * sizeof(mt_shm_trace) <= cap &&
        mt_shm_commit(w, ref->off, fixed + (uint64_t)want * sizeof(mt_shm_trace)))
        return want;
    uint64_t have = mt_shm_committed(w, ref->off);
    if (have < cap)
        cap = have;
    return cap > fixed ? (uint32_t)((cap - fixed) / sizeof(mt_shm_trace)) : 0;
}

/* The module list, and the unwinders' caches flushed if an object was
 * unloaded behind dlclose's back (unwind_backtrace.h). */
static void sync_modules(mt_snapshot_state *s, mt_shm_writer *w, uint64_t seq_no)
{
    mt_modules_sync(s->modules, w, seq_no);
    mt_backtrace_unloads_seen(mt_modules_unloads(s->modules));
}

void mt_snapshot_sync_modules(mt_snapshot_state *s, mt_shm_writer *w)
{
    sync_modules(s, w, w->p.publish_count + 1);
}

void mt_snapshot_publish(mt_snapshot_state *s, mt_shm_writer *w)
{
    mt_shm_private *p = &w->p;
    uint64_t seq_no = p->publish_count + 1;
    uint64_t now = mt_now_precise_ns();
    sync_modules(s, w, seq_no);
    uint32_t count = mt_trace_count();
    publish_defs(s, w, count);
    uint32_t ntr = s->defs_published;
    if (mt_traces_full() && !(p->flags & MT_FLAG_TRACES_FULL))
        mt_shm_set_flag(w, MT_FLAG_TRACES_FULL);

    unsigned i = (p->latest_slot + 1) % MT_SLOTS;
    mt_shm_slot_ref *ref = &p->slots[i];
    uint64_t fixed = sizeof(mt_shm_slot) + (uint64_t)(s->timeline.n + 1) * sizeof(mt_shm_point);
    if (!s->aged_off)
        reserve_slots(w, fixed);
    uint32_t room = slot_room(w, ref, fixed, ntr);
    if (room < ntr) {
        ntr = room;
        s->dropping = true;
        mt_shm_set_flag(w, MT_FLAG_SEGMENT_FULL);
    }
    if (!mt_shm_commit(w, ref->off, fixed + (uint64_t)ntr * sizeof(mt_shm_trace)))
        return;
    bool scan = scan_due(s);
    rotate_checkpoints(s, ntr, count, now);
    uint64_t *seq = &w->hdr->slots[i].seq;
    MT_ASSERT(ref->seq % 2 == 0);                        /* seqlock: no write of this slot open */
    __atomic_store_n(seq, ++ref->seq, __ATOMIC_RELAXED); /* odd: being written */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    mt_shm_slot *slot = (mt_shm_slot *)(w->base + ref->off);
    fill_slot(s, w, (unsigned char *)slot, ntr, count, scan, now);
    slot->publish_seq = seq_no;
    slot->modules_count = p->modules_count;
    __atomic_store_n(seq, ++ref->seq, __ATOMIC_RELEASE); /* even: complete */
    MT_ASSERT(ref->seq % 2 == 0);
    p->latest_slot = i;
    p->publish_count = seq_no;
    __atomic_store_n(&w->hdr->latest_slot, i, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->publish_count, seq_no, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->heartbeat_unix_ns, mt_unix_ns(), __ATOMIC_RELEASE);
}
