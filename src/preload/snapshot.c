/* snapshot.c -- turn the live counters into one published snapshot slot.
 *
 * Runs on the publisher thread (or the exiting thread, under the publish
 * lock).  Per publish: append new trace definitions and modules, rotate the
 * growth checkpoints, rescan block ages when due, then write the next slot
 * of the ring under its seqlock (see shm_layout.h for the protocol).
 *
 * Growth checkpoints: for window i, `pend` holds values taken at pend_t and
 * `cur` values at cur_t; every window[i] ns cur <- pend <- now.  So the
 * published checkpoint is between 1 and 2 windows old.  Window 0 is one
 * publish interval, so checkpoint 0 is the previous publish.
 *
 * Ages: a scan over the live-block table, one shard lock at a time.  It
 * costs O(live blocks), so above 1M blocks it runs every ceil(n/1M)-th
 * publish; the slot says when ages were computed (age_scan_ns).
 */
#include "snapshot.h"

#include "clock.h"
#include "modules.h"
#include "os_memory.h"
#include "procinfo.h"
#include "ptr_table.h"
#include "state.h"
#include "trace_table.h"

#include <string.h>
#include <time.h>

typedef struct {
    uint64_t ckpt_cur[MT_CKPTS];
    uint64_t ckpt_pend[MT_CKPTS];
    uint64_t age_bytes[MT_AGE_BUCKETS];
    uint64_t oldest_birth_ns;
} pub_trace;

struct mt_snapshot_state {
    pub_trace *traces; /* reserved for MT_TRACE_MAX, touched as used */
    uint32_t traces_touched;
    uint32_t defs_published;
    uint64_t window_ns[MT_CKPTS];
    uint64_t cur_t[MT_CKPTS], pend_t[MT_CKPTS];
    uint64_t age_scan_ns;
    uint64_t publishes_since_scan;
    bool dropping; /* some trace could not be published (segment full) */
    mt_modules *modules;
    mt_timeline timeline;
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
    s->window_ns[0] = (uint64_t)interval_ms * 900000ull; /* 0.9 interval: tolerate jitter */
    s->window_ns[1] = 30ull * 1000000000ull;
    s->window_ns[2] = 300ull * 1000000000ull;
    mt_timeline_init(&s->timeline, (uint64_t)interval_ms * 1000000ull);
    return s;
}

void mt_snapshot_state_reset_defs(mt_snapshot_state *s)
{
    s->defs_published = 0;
    s->dropping = false;
    mt_modules_reset(s->modules);
}

static uint64_t unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void publish_defs(mt_snapshot_state *s, mt_shm_writer *w, uint32_t count)
{
    while (s->defs_published < count) {
        mt_trace *t = mt_trace_get(s->defs_published);
        if (!atomic_load_explicit(&t->ready, memory_order_acquire))
            break; /* being created: next time */
        if (!mt_shm_append_def(w, s->defs_published, t->frames, t->nframes, t->flags, t->hash,
                               t->first_seen_ns)) {
            s->dropping = true;
            break;
        }
        s->defs_published++;
    }
    if (s->defs_published > s->traces_touched) {
        mt_os_account((int64_t)(s->defs_published - s->traces_touched) *
                      (int64_t)sizeof(pub_trace));
        for (uint32_t i = s->traces_touched; i < s->defs_published; i++)
            s->traces[i].oldest_birth_ns = MT_UNKNOWN; /* no live block seen by a scan yet */
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
    mt_snapshot_state *s;
    uint64_t now;
} age_ctx;

static void age_visit(const mt_block *b, void *arg)
{
    age_ctx *c = arg;
    if (b->trace >= c->s->traces_touched)
        return;
    pub_trace *p = &c->s->traces[b->trace];
    uint64_t age = c->now > b->birth_ns ? c->now - b->birth_ns : 0;
    p->age_bytes[age_bucket(age)] += b->size;
    if (b->birth_ns < p->oldest_birth_ns)
        p->oldest_birth_ns = b->birth_ns;
}

static void scan_ages(mt_snapshot_state *s, uint64_t now)
{
    uint64_t blocks = mt_ptr_count();
    uint64_t every = blocks / 1000000u + 1;
    if (s->age_scan_ns && ++s->publishes_since_scan < every)
        return;
    s->publishes_since_scan = 0;
    for (uint32_t i = 0; i < s->traces_touched; i++) {
        memset(s->traces[i].age_bytes, 0, sizeof s->traces[i].age_bytes);
        s->traces[i].oldest_birth_ns = MT_UNKNOWN;
    }
    age_ctx c = {s, now};
    mt_ptr_visit(age_visit, &c);
    s->age_scan_ns = now;
}

static void rotate_checkpoints(mt_snapshot_state *s, uint32_t ntr, uint64_t now)
{
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        bool first = s->pend_t[k] == 0;
        if (!first && now - s->pend_t[k] < s->window_ns[k])
            continue;
        for (uint32_t i = 0; i < ntr; i++) {
            pub_trace *p = &s->traces[i];
            p->ckpt_cur[k] = p->ckpt_pend[k];
            p->ckpt_pend[k] =
                atomic_load_explicit(&mt_trace_get(i)->live_bytes, memory_order_relaxed);
        }
        s->cur_t[k] = s->pend_t[k];
        s->pend_t[k] = now ? now : 1;
    }
}

/* Reads one trace's counters into a record; free side first (acquire) so
 * that alloc_count >= free_count in the record. */
static void read_trace(const mt_snapshot_state *s, uint32_t id, mt_shm_trace *r)
{
    mt_trace *t = mt_trace_get(id);
    const pub_trace *p = &s->traces[id];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->free_count = atomic_load_explicit(&t->free_count, memory_order_acquire);
    r->free_bytes = atomic_load_explicit(&t->free_bytes, memory_order_relaxed);
    r->temporary_count = atomic_load_explicit(&t->temp_count, memory_order_relaxed);
    r->temporary_bytes = atomic_load_explicit(&t->temp_bytes, memory_order_relaxed);
    r->alloc_count = atomic_load_explicit(&t->alloc_count, memory_order_acquire);
    r->live_bytes = atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
    r->peak_live_bytes = atomic_load_explicit(&t->peak_live_bytes, memory_order_relaxed);
    r->live_count = r->alloc_count - r->free_count;
    r->alloc_bytes = r->live_bytes + r->free_bytes;
    if (r->peak_live_bytes < r->live_bytes)
        r->peak_live_bytes = r->live_bytes;
    for (unsigned k = 0; k < MT_CKPTS; k++)
        r->ckpt_live_bytes[k] = s->cur_t[k] ? p->ckpt_cur[k] : 0;
    memcpy(r->age_bytes, p->age_bytes, sizeof r->age_bytes);
    r->oldest_birth_ns = s->age_scan_ns ? p->oldest_birth_ns : MT_UNKNOWN;
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

static void finish_totals(mt_shm_totals *t, uint32_t count, uint32_t ntr, bool dropping)
{
    t->peak_live_bytes = atomic_load_explicit(&mt_g.peak_live_bytes, memory_order_relaxed);
    if (t->peak_live_bytes < t->live_bytes)
        t->peak_live_bytes = t->live_bytes;
    t->unknown_free_count = atomic_load_explicit(&mt_g.unknown_free_count, memory_order_relaxed);
    t->untracked_alloc_count =
        atomic_load_explicit(&mt_g.untracked_alloc_count, memory_order_relaxed);
    t->missed_free_count = atomic_load_explicit(&mt_g.missed_free_count, memory_order_relaxed);
    t->thread_count = atomic_load_explicit(&mt_g.thread_count, memory_order_relaxed);
    t->dropped_traces = dropping && count > ntr ? count - ntr : 0;
    mt_allocator_bytes(&t->allocator_bytes, &t->allocator_inuse_bytes);
    t->rss_bytes = mt_proc_rss_bytes();
    t->tracker_bytes = mt_os_bytes();
    t->trace_count = ntr;
}

/* Writes the slot's payload; the caller holds its seqlock odd. */
static void fill_slot(mt_snapshot_state *s, unsigned char *slot, uint32_t ntr, uint32_t count,
                      uint64_t now)
{
    mt_shm_slot *h = (mt_shm_slot *)slot;
    mt_shm_point pt = {.t_ns = now};
    mt_timeline_add(&s->timeline, &pt); /* placeholder: filled once totals are known */
    mt_shm_point *tl = (mt_shm_point *)(slot + sizeof *h);
    mt_shm_trace *tr = (mt_shm_trace *)(tl + s->timeline.n);
    mt_shm_totals tot;
    memset(&tot, 0, sizeof tot);
    for (uint32_t i = 0; i < ntr; i++) {
        read_trace(s, i, &tr[i]);
        add_to_totals(&tot, &tr[i]);
    }
    finish_totals(&tot, count, ntr, s->dropping);
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
    h->unix_ns = unix_ns();
    for (unsigned k = 0; k < MT_CKPTS; k++)
        h->ckpt_ns[k] = s->cur_t[k];
    h->age_scan_ns = s->age_scan_ns;
    h->totals = tot;
    h->ntimeline = s->timeline.n;
    h->ntraces = ntr;
    h->timeline_step_ns = s->timeline.step_ns;
    h->defs_count = s->defs_published;
}

void mt_snapshot_sync_modules(mt_snapshot_state *s, mt_shm_writer *w)
{
    mt_modules_sync(s->modules, w, w->p.publish_count + 1);
}

void mt_snapshot_publish(mt_snapshot_state *s, mt_shm_writer *w)
{
    mt_shm_private *p = &w->p;
    uint64_t seq_no = p->publish_count + 1;
    uint64_t now = mt_now_precise_ns();
    mt_modules_sync(s->modules, w, seq_no);
    uint32_t count = mt_trace_count();
    publish_defs(s, w, count);
    uint32_t ntr = s->defs_published;
    scan_ages(s, now);
    rotate_checkpoints(s, ntr, now);

    unsigned i = (p->latest_slot + 1) % MT_SLOTS;
    mt_shm_slot_ref *ref = &p->slots[i];
    uint64_t fixed = sizeof(mt_shm_slot) + (uint64_t)(s->timeline.n + 1) * sizeof(mt_shm_point);
    if (fixed + (uint64_t)ntr * sizeof(mt_shm_trace) > ref->cap) {
        ntr = (uint32_t)((ref->cap - fixed) / sizeof(mt_shm_trace));
        s->dropping = true;
        mt_shm_set_flag(w, MT_FLAG_SEGMENT_FULL);
    }
    if (!mt_shm_commit(w, ref->off, fixed + (uint64_t)ntr * sizeof(mt_shm_trace)))
        return;
    uint64_t *seq = &w->hdr->slots[i].seq;
    __atomic_store_n(seq, ++ref->seq, __ATOMIC_RELAXED); /* odd: being written */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    mt_shm_slot *slot = (mt_shm_slot *)(w->base + ref->off);
    fill_slot(s, (unsigned char *)slot, ntr, count, now);
    slot->publish_seq = seq_no;
    slot->modules_count = p->modules_count;
    __atomic_store_n(seq, ++ref->seq, __ATOMIC_RELEASE); /* even: complete */
    p->latest_slot = i;
    p->publish_count = seq_no;
    __atomic_store_n(&w->hdr->latest_slot, i, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->publish_count, seq_no, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->heartbeat_unix_ns, unix_ns(), __ATOMIC_RELEASE);
}
