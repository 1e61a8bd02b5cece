/* record_events.c -- the events of a recording: draining the threads'
 * rings into EVENTS2 records (dat_format.h), and LOST records for what
 * the rings dropped.  Writer thread, its lock held.
 *
 * Batching: a ring is drained once it holds MT_RR_BATCH events or its
 * oldest event is MT_RR_BATCH_NS old (or it is being retired, or the
 * caller wants everything), so that records hold thousands of events, not
 * a few: every record repeats its thread id and base time, and its first
 * event names its trace.  The hooks wake a sleeping writer every quarter
 * ring, so a busy ring never waits more than about half a ring.  A pass
 * takes at most MT_RR_PASS_MAX events (a chunk) of a ring that is behind,
 * so that when all are, each gets a chunk back in turn, soon: a hook
 * waiting at its buffer's bound waits for one chunk of each ring behind,
 * not four (record_buffer.h).  The
 * record stays open while the next events drained are its thread's too,
 * up to MT_RR_EVENTS_MAX events: it is written when another thread's
 * events come, when it is MT_RR_OPEN_NS old, and before its frame ends
 * (the frame context is the frame's).
 *
 * Encoding (EVENTS2): each field goes to its column (tags, times, traces,
 * sizes, refs, ages), which zstd compresses better than the fields
 * interleaved; a free whose block was allocated earlier in the same frame
 * or in the frame before names it (record_blocks.h), and a size equal to
 * the trace's last size in the frame is left out.
 *
 * Version 7 (tick order, mt_w.runs; dat_format.h): references count as
 * in version 6; within a run, a trace's frees of older blocks are looked
 * up first and written by kind and ascending ref, each ref after the
 * first as the gap from the one before; an allocation's size above the
 * trace's last one as the gap too.  Where the rule would apply and the
 * values do not rise, the trace is written (not SAME_TRACE), which a
 * reader always takes as is.
 *
 * Version 8 (mt_w.runs too): the tags column is coded by pairs when the
 * record is written (record_tag_pairs.h), after the frame's TAG_PAIRS if
 * one is due; the head gives the column's length.
 */
#define _GNU_SOURCE
#include "core_assert.h"
#include "core_clock.h"
#include "dat_format.h"
#include "record_blocks.h"
#include "record_buffer.h"
#include "record_cull.h"
#include "record_tag_pairs.h"
#include "record_tick.h"
#include "record_writer.h"

#include <string.h>

#define PREFETCH_AHEAD 8u
#define MT_RR_BATCH 1024u
#define MT_RR_BATCH_NS 10000000ull
#define MT_RR_PASS_MAX MT_RING_CHUNK /* events of one ring per pass */
#define MT_RR_OPEN_NS 20000000ull

_Static_assert(MT_RR_EVENTS_MAX <= MT_DAT_EVENTS_MAX, "an EVENTS2 record within its limit");

/* A varint into column c: its first byte to the lead part, the rest to
 * the tail part (dat_format.h, EVENTS2).  Inlined: with c a constant at
 * each call, the column's cursor is a fixed address (callgrind: a call
 * cost ~37 instructions, 4 calls per event). */
static inline __attribute__((always_inline)) void put_col(unsigned c, uint64_t v)
{
    mt_rec_buf *lead = &mt_w.cols[c][0], *tail = &mt_w.cols[c][1];
    mt_put_u8(lead, (unsigned)(v & 0x7f) | (v >= 0x80 ? 0x80u : 0u));
    if (v >= 0x80)
        mt_put_v(tail, v >> 7);
}

/* The size field of an ALLOC or FREE: left out when it repeats.  Inline
 * (a call cost ~15 instructions per event, callgrind). */
static inline __attribute__((always_inline)) unsigned put_size(mt_rb_trace *ts, uint64_t size)
{
    if (ts && ts->has_size && ts->last_size == size)
        return MT_DAT_EV_SAME_SIZE;
    put_col(MT_COL_SIZES, size);
    return 0;
}

/* An allocation; rise (version 7): its size is above the trace's last
 * one, under SAME_TIME and SAME_TRACE, and goes as the gap. */
static inline __attribute__((always_inline)) unsigned
put_alloc(const mt_rec_event *e, mt_rb_trace *ts, uint64_t t, bool rise)
{
    uint64_t size = mt_rev_size(e);
    unsigned tag = MT_DAT_EV_ALLOC;
    if (rise)
        put_col(MT_COL_SIZES, size - ts->last_size - 1);
    else
        tag |= put_size(ts, size);
    if (ts) /* block (trace, count) of this frame, born ms(t) as the reader sees it */
        mt_rb_note_alloc(e->addr, mt_rev_trace(e), ts->count++, size, t / 1000000u);
    return tag;
}

/* What a free names, as a sort key: RANK (FREE_REF, FREE_PREV, FREE) <<
 * RANK_SHIFT | ref.  Its block is looked up, and taken from the map: once
 * per free. */
#define RANK_SHIFT 62u
#define REF_MASK (((uint64_t)1 << RANK_SHIFT) - 1)
#define UNNAMED UINT64_MAX /* not looked up yet */
enum { RANK_REF, RANK_PREV, RANK_FREE };

static inline __attribute__((always_inline)) uint64_t resolve_free(const mt_rec_event *e,
                                                                   mt_rb_trace *ts)
{
    uint64_t birth = mt_rev_birth_ms(e), size = mt_rev_size(e), serial;
    uint32_t trace = mt_rev_trace(e);
    if (ts && mt_rb_take(e->addr, trace, size, birth, &serial))
        return (uint64_t)RANK_REF << RANK_SHIFT | (ts->count - 1u - serial);
    if (ts && ts->prev_count &&
        mt_rb_take_prev(e->addr, trace, size, birth, ts->prev_count, &serial))
        return (uint64_t)RANK_PREV << RANK_SHIFT | (ts->prev_count - 1u - serial);
    return (uint64_t)RANK_FREE << RANK_SHIFT;
}

static unsigned kind_of(uint64_t named)
{
    static const unsigned kinds[3] = {MT_DAT_EV_FREE_REF, MT_DAT_EV_FREE_PREV, MT_DAT_EV_FREE};
    return kinds[named >> RANK_SHIFT];
}

/* A free, named: a reference (v: its ref, or the gap from the previous
 * one), else in full with an age that gives the reader the birth the
 * target charged. */
static inline __attribute__((always_inline)) unsigned
put_free(const mt_rec_event *e, mt_rb_trace *ts, uint64_t t, uint64_t named, uint64_t v)
{
    unsigned tag = mt_rev_flags(e) << MT_DAT_EV_FLAGS_SHIFT | kind_of(named);
    if ((named >> RANK_SHIFT) != RANK_FREE) {
        put_col(MT_COL_REFS, v);
        return tag;
    }
    tag |= put_size(ts, mt_rev_size(e));
    put_col(MT_COL_AGES, t / 1000000u - mt_rev_birth_ms(e));
    return tag;
}

/* Where zstd ends a block after column part [c][k]: the tags; times with
 * the traces' leads (random low bits); the traces' tails; the sizes'
 * leads; their tails; the refs' leads; the rest (the refs' tails and the
 * ages, mostly small).  Each block's literals get an entropy table of
 * their own: the refs' leads in a block of their own made the bench's
 * 4-thread recording 0.8 % smaller and a redis-server one 3.5 %
 * (docs/performance.md "zstd's lazy matcher for EVENTS2"). */
static bool cut_after(unsigned c, unsigned k)
{
    return (c == MT_COL_TAGS && k == 0) || c == MT_COL_TRACES || c == MT_COL_SIZES ||
           (c == MT_COL_REFS && k == 0) || (c == MT_COL_AGES && k == 1);
}

void mt_rr_flush_events(void)
{
    mt_rr_open *o = &mt_w.open_rec;
    if (!o->n)
        return;
    if (mt_w.runs) {
        /* Version 8: the frame's TAG_PAIRS first.  Emitting it may end
         * the frame (a small one), which writes this record there, after
         * it: its references are that frame's. */
        mt_tp_before_record();
        if (!o->n)
            return;
    }
    uint32_t n = o->n;
    o->n = 0; /* emitting may end a frame, which flushes: nothing then */
    const unsigned char *tags = mt_w.cols[MT_COL_TAGS][0].p;
    size_t tags_len = n;
    if (mt_w.runs)
        tags = mt_tp_code(tags, n, &tags_len);
    mt_rec_buf *b = &mt_w.pay;
    mt_recw_part parts[MT_COL_N * 2];
    unsigned nparts = 0;
    mt_put_v(b, o->tid);
    mt_put_v(b, o->base);
    mt_put_v(b, n);
    if (mt_w.runs)
        mt_put_v(b, tags_len);
    for (unsigned c = MT_COL_TIMES; c < MT_COL_N; c++) {
        mt_put_v(b, mt_w.cols[c][0].len);
        mt_put_v(b, mt_w.cols[c][1].len);
    }
    parts[nparts++] = (mt_recw_part){tags, tags_len, cut_after(MT_COL_TAGS, 0)};
    for (unsigned c = MT_COL_TIMES; c < MT_COL_N; c++)
        for (unsigned k = 0; k < 2u; k++)
            parts[nparts++] =
                (mt_recw_part){mt_w.cols[c][k].p, mt_w.cols[c][k].len, cut_after(c, k)};
    mt_recw_emit_parts(MT_DAT_REC_EVENTS2, parts, nparts);
    for (unsigned c = 0; c < MT_COL_N; c++) /* after: zstd read them where they were */
        mt_w.cols[c][0].len = mt_w.cols[c][1].len = 0;
}

/* The open record, for events of thread tid from time t on: the one that
 * is open if it is that thread's and has room, else a new one.  exact: t
 * before the open record's last time also takes a new one (a culled
 * recording writes a young block's allocation late, at its own time),
 * else t is raised to it. */
static mt_rr_open *__attribute__((noinline)) open_new(uint32_t tid, uint64_t t)
{
    mt_rr_open *o = &mt_w.open_rec;
    if (o->n)
        mt_rr_flush_events();
    if (!o->n) {
        *o = (mt_rr_open){.tid = tid,
                          .base = t,
                          .prev_t = t,
                          .prev_trace = UINT64_MAX,
                          .prev_kind = MT_DAT_EV_FREE};
        o->opened_ns = mt_now_ns();
    }
    return o;
}

static inline mt_rr_open *open_for(uint32_t tid, uint64_t t, bool exact)
{
    mt_rr_open *o = &mt_w.open_rec;
    if (MT_LIKELY(o->n && o->tid == tid && o->n != MT_RR_EVENTS_MAX && !(exact && t < o->prev_t)))
        return o; /* the usual case: the open record takes the event */
    return open_new(tid, t);
}

/* The trace field: left out when it is the previous event's, or, for an
 * allocation right after an allocation of another trace P, when it is
 * next(P), the trace that came after P's allocation last time in this
 * frame (dat_format.h); next(P) is updated as the reader will. */
static inline __attribute__((always_inline)) unsigned put_trace(mt_rr_open *o, uint32_t trace,
                                                                bool alloc, bool same)
{
    if (same)
        return MT_DAT_EV_SAME_TRACE;
    /* P's state exists whenever P's allocation had one: same frame.  Not
     * for P's own trace written again (version 7): next(P) is never P. */
    mt_rb_trace *p = alloc && o->prev_kind == MT_DAT_EV_ALLOC && trace != o->prev_trace
                         ? mt_rb_trace_get((uint32_t)o->prev_trace)
                         : NULL;
    if (p && p->next == trace + 1u)
        return MT_DAT_EV_NEXT_TRACE;
    if (p)
        p->next = trace + 1u;
    /* tick order: the difference from the trace the column gave last
     * (dat_format.h), small in a run sorted by trace */
    put_col(MT_COL_TRACES,
            mt_w.tick_order ? mt_dat_zigzag((int64_t)trace - (int64_t)o->col_trace) : trace);
    o->col_trace = trace;
    return 0;
}

/* Version 7, an event with SAME_TIME of the previous event's trace: may
 * it say SAME_TRACE?  Not when the rule for its value (a ref after a ref
 * of its kind, a size not the last one) would need a value that does not
 * rise: then the trace is written.  *v: the gap when the rule applies (a
 * ref's), *rise: a size's. */
static inline __attribute__((always_inline)) bool
may_say_same(const mt_rr_open *o, const mt_rb_trace *ts, const mt_rec_event *e, uint64_t named,
             uint64_t *v, bool *rise)
{
    if (mt_rev_kind(e) == MT_DAT_EV_ALLOC) {
        if (!ts) /* the reader may know a last size the writer lost */
            return false;
        uint64_t size = mt_rev_size(e);
        *rise = ts->has_size && size > ts->last_size;
        return !ts->has_size || size >= ts->last_size;
    }
    unsigned kind = kind_of(named);
    if (kind == MT_DAT_EV_FREE || kind != o->prev_kind)
        return true;
    uint64_t ref = named & REF_MASK;
    if (ref <= o->prev_ref)
        return false;
    *v = ref - o->prev_ref - 1u;
    return true;
}

static inline __attribute__((always_inline)) void encode_event(mt_rr_open *o, const mt_rec_event *e,
                                                               uint64_t named)
{
    uint64_t t = e->t_ns > o->prev_t ? e->t_ns : o->prev_t;
    unsigned tag = t == o->prev_t ? MT_DAT_EV_SAME_TIME : 0;
    if (t != o->prev_t)
        put_col(MT_COL_TIMES, t - o->prev_t);
    uint32_t trace = mt_rev_trace(e);
    mt_rb_trace *ts = mt_rb_trace_get(trace);
    bool is_free = mt_rev_kind(e) == MT_DAT_EV_FREE;
    if (is_free && named == UNNAMED)
        named = resolve_free(e, ts);
    uint64_t v = named & REF_MASK;
    bool rise = false, same = trace == o->prev_trace;
    if (mt_w.runs && same && t == o->prev_t)
        same = may_say_same(o, ts, e, named, &v, &rise);
    tag |= put_trace(o, trace, !is_free, same);
    tag |= is_free ? put_free(e, ts, t, named, v) : put_alloc(e, ts, t, rise);
    /* a FREE_PREV leaves the last size (dat_format.h: a frame decodes
     * without the blocks of the frame before, but for FREE_PREV's own) */
    if (ts && (tag & MT_DAT_EV_KIND_MASK) != MT_DAT_EV_FREE_PREV) {
        ts->last_size = mt_rev_size(e);
        ts->has_size = 1;
    }
    mt_put_u8(&mt_w.cols[MT_COL_TAGS][0], tag);
    unsigned k = is_free ? MT_LOST_FC : MT_LOST_AC;
    mt_sample_weight w = mt_rec_event_weight(e); /* 1 and the size when exact */
    mt_w.sum_events[k] += w.count;
    mt_w.sum_events[k + 1] += w.bytes;
    o->prev_t = t;
    o->prev_trace = trace;
    o->prev_kind = tag & MT_DAT_EV_KIND_MASK;
    o->prev_ref = named & REF_MASK;
    o->n++;
}

static void encode_at(uint32_t tid, const mt_rec_event *ring_ev, bool exact)
{
    /* A copy in registers: through the pointer, every byte stored into a
     * column (char stores may alias anything) made the compiler load the
     * event's words again (callgrind: ~19 instructions per event). */
    const mt_rec_event copy = *ring_ev, *e = &copy;
    /* Counted once its record is open: opening may write the previous
     * record, and writing it may end the frame, and the events of the
     * open record always belong to the current frame. */
    mt_rr_open *o = open_for(tid, e->t_ns, exact);
    if (mt_rev_kind(e) == MT_DAT_EV_ALLOC && !mt_rb_count_alloc()) {
        mt_recw_end_frame(); /* a frame's allocations are bounded (dat_format.h) */
        mt_rb_count_alloc();
        o = open_for(tid, e->t_ns, exact);
    }
    encode_event(o, e, UNNAMED);
}

void mt_rr_encode_one(uint32_t tid, const mt_rec_event *e)
{
    encode_at(tid, e, true);
}

/* The frame context an event will touch, loaded ahead: its map slot and
 * trace state, and for a free its slot in the previous frame's map. */
static inline __attribute__((always_inline)) void prefetch_event(const mt_rec_event *a)
{
    mt_rb_prefetch(a->addr, mt_rev_trace(a));
    if (mt_rev_kind(a) != MT_DAT_EV_ALLOC)
        mt_rb_prefetch_prev(a->addr);
}

/* Version 7: the frees idx[0..n) of one trace in a run (of older blocks),
 * looked up, then written by kind and ref (mt_rt_order cannot: the
 * refs are the map's).  Their record is opened with room for all first:
 * writing a record may end the frame, which would make the names stale;
 * a free never ends one (encode_at: only an allocation). */
static void encode_frees(uint32_t tid, const mt_rec_event *ev, const uint32_t *idx, uint32_t n)
{
    mt_rr_open *o = &mt_w.open_rec;
    uint64_t t = ev[idx[0]].t_ns;
    o = o->n && o->tid == tid && o->n + n > MT_RR_EVENTS_MAX ? open_new(tid, t)
                                                             : open_for(tid, t, false);
    uint32_t epoch = mt_rb_h.epoch;
    mt_rb_trace *ts = mt_rb_trace_get(mt_rev_trace(&ev[idx[0]]));
    mt_rt_key *keys = mt_rt_keys();
    for (uint32_t a = 0; a < n; a++) /* prefetched by encode_ticks, across groups */
        keys[a] = (mt_rt_key){resolve_free(&ev[idx[a]], ts), idx[a]};
    mt_rt_sort(keys, n); /* stable: the frees in full keep the thread's order */
    for (uint32_t a = 0; a < n; a++)
        encode_event(o, &ev[keys[a].idx], keys[a].key);
    MT_ASSERT(mt_rb_h.epoch == epoch && o->tid == tid);
    (void)epoch;
}

/* Tick order (record_tick.h): the events copied out of the ring, then
 * each run of one time written in the order mt_rt_order gives, the frame
 * context's slots prefetched ahead in that order; version 7: each trace's
 * frees of older blocks by encode_frees. */
static void encode_ticks(uint32_t tid, const mt_rec_ring *r, uint64_t from, uint32_t n)
{
    mt_rec_event *ev = mt_rt_events();
    uint64_t len;
    for (uint32_t i = 0; i < n; i += (uint32_t)len) {
        const mt_rec_event *span = mt_ring_span(r, from + i, n - i, &len);
        memcpy(ev + i, span, len * sizeof *ev);
    }
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && ev[j].t_ns == ev[i].t_ns; j++)
            ;
        uint32_t nf;
        const uint32_t *order = mt_rt_order(ev + i, j - i, mt_w.runs, &nf);
        for (uint32_t k = 0, h; mt_w.runs && k < nf; k = h) {
            uint32_t trace = mt_rev_trace(&ev[i + order[k]]);
            for (h = k + 1; h < nf && mt_rev_trace(&ev[i + order[h]]) == trace; h++)
                ;
            /* the events PREFETCH_AHEAD on in the run's order, across the
             * groups (mostly of a few frees: prefetching within one alone
             * left most frees' map slots to miss) */
            for (uint32_t a = k; a < h && a + PREFETCH_AHEAD < j - i; a++)
                prefetch_event(&ev[i + order[a + PREFETCH_AHEAD]]);
            if (h - k == 1) /* nothing to sort */
                encode_at(tid, &ev[i + order[k]], false);
            else
                encode_frees(tid, ev + i, order + k, h - k);
        }
        for (uint32_t k = mt_w.runs ? nf : 0; k < j - i; k++) {
            if (k + PREFETCH_AHEAD < j - i) {
                prefetch_event(&ev[i + order[k + PREFETCH_AHEAD]]);
            }
            encode_at(tid, &ev[i + order[k]], false);
        }
    }
}

/* A chunk's span at a time; the frame context's map slot and trace state
 * of the event PREFETCH_AHEAD on are loaded meanwhile (both missed the
 * cache natively: perf, docs/performance.md "Recording").  The thread id
 * is read once: it shares a cache line with the ring's `busy`, which the
 * producer writes twice per event, so a load per event missed as well. */
static void encode_events(const mt_rec_ring *r, uint64_t from, uint64_t n)
{
    bool culled = mt_cull_on();
    uint32_t tid = (uint32_t)r->tid;
    uint64_t len;
    if (mt_w.tick_order && n <= MT_RT_EVENTS_MAX && mt_rt_ready()) { /* never culled */
        encode_ticks(tid, r, from, (uint32_t)n);
        return;
    }
    for (uint64_t i = 0; i < n; i += len) {
        const mt_rec_event *ev = mt_ring_span(r, from + i, n - i, &len);
        for (uint64_t k = 0; k < len; k++) {
            if (k + PREFETCH_AHEAD < len)
                prefetch_event(&ev[k + PREFETCH_AHEAD]);
            if (culled && mt_cull_event(tid, &ev[k]))
                continue; /* young, or culled with its allocation */
            encode_at(tid, &ev[k], culled);
        }
    }
}

void mt_rr_lost(uint32_t tid, const uint64_t lost[4], const uint64_t why[MT_DAT_LOST_CAUSES])
{
    if (!lost[MT_LOST_AC] && !lost[MT_LOST_FC])
        return;
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, mt_recw_now());
    mt_put_v(b, tid);
    for (unsigned i = 0; i < MT_LOST_N; i++) {
        mt_put_v(b, lost[i]);
        mt_w.sum_lost[i] += lost[i];
    }
    unsigned n = 0;
    for (unsigned c = 0; c < MT_DAT_LOST_CAUSES; c++)
        n += why[c] != 0;
    mt_put_v(b, n); /* the causes, ascending (dat_format.h) */
    for (unsigned c = 0; c < MT_DAT_LOST_CAUSES; c++) {
        if (!why[c])
            continue;
        mt_put_v(b, c);
        mt_put_v(b, why[c]);
        mt_w.sum_why[c] += why[c];
    }
    mt_recw_emit(MT_DAT_REC_LOST);
}

/* LOST of thread tid for l's counts: all of them (!to_cut), or at most
 * those of the cut. */
static void emit_lost(uint32_t tid, mt_rec_lost *l, bool to_cut)
{
    uint64_t n[MT_LOST_N], why[MT_DAT_LOST_CAUSES];
    for (unsigned i = 0; i < MT_LOST_N; i++) {
        if (!to_cut) {
            n[i] = atomic_exchange_explicit(&l->n[i], 0, memory_order_acquire);
            continue;
        }
        uint64_t have = atomic_load_explicit(&l->n[i], memory_order_acquire);
        n[i] = have < l->cut[i] ? have : l->cut[i];
        atomic_fetch_sub_explicit(&l->n[i], n[i], memory_order_relaxed);
    }
    mt_rec_lost_take_why(l, n[MT_LOST_AC] + n[MT_LOST_FC], why);
    mt_rr_lost(tid, n, why);
}

/* Writes r's events from tail up to `upto`; true if there were any. */
static bool drain_ring(mt_rec_ring *r, uint64_t upto)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    /* Every trace these events name got its id before the event was
     * appended (and head published with release), so defining the
     * traces counted now puts each TRACE record before its first use,
     * even for traces born after this pass began. */
    if (tail == upto)
        return false;
    mt_rr_defs();
    /* A chunk at a time, each handed back once encoded: a hook waiting
     * at the buffer's bound gets one after a chunk's work, not a pass's. */
    for (uint64_t t = tail, next; t != upto; t = next) {
        next = upto - t > MT_RING_CHUNK ? t + MT_RING_CHUNK : upto;
        encode_events(r, t, next - t);
        mt_ring_consumed(r, next);
    }
    atomic_fetch_add_explicit(&mt_w.events, upto - tail, memory_order_relaxed);
    return true;
}

static uint64_t head_of(mt_rec_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire);
}

/* An owned ring is drained once it holds a batch or its oldest event has
 * waited long enough. */
static bool due(const mt_rec_ring *r, uint64_t head, uint64_t now)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (head - tail >= MT_RR_BATCH)
        return true;
    if (head == tail)
        return false;
    uint64_t t0 = mt_ring_at(r, tail)->t_ns; /* written before head was published */
    return now > t0 && now - t0 >= MT_RR_BATCH_NS;
}

/* Is the chunk that holds event head - 1 full?  Then the thread's next
 * event needs another chunk, which at the buffer's bound is this one once
 * the writer has drained all of it (record_buffer.c try_next_chunk). */
static bool chunk_full(const mt_rec_ring *r, uint64_t head)
{
    const mt_rec_chunk *c = r->rchunk;
    while (head - 1 - c->base >= MT_RING_CHUNK)
        c = atomic_load_explicit(&c->next, memory_order_acquire);
    return head - c->base == MT_RING_CHUNK;
}

/* Tick order: where a pass over r's events up to head should stop so that
 * the runs it writes are whole ticks.  The newest run is held back while
 * its tick is the clock's current one (the thread may add to it), unless
 * it is all there is and fills a scratch (a tick of more events is written
 * in parts, each in tick order), or it ends a full chunk (a hook waiting
 * at the buffer's bound waits for all of it, as in thread order).  A pass
 * that stops short of head (the ring is behind) holds nothing back: it
 * must hand whole chunks back to hooks that may wait for one.  The
 * thread's times never decrease, so the run's start is a binary search
 * away; a tick held back in error (a thread that stamped it late) is only
 * split. */
static uint64_t tick_end(const mt_rec_ring *r, uint64_t tail, uint64_t head, uint64_t now)
{
    uint64_t last = mt_ring_at(r, head - 1)->t_ns;
    if (last < now || chunk_full(r, head))
        return head;
    uint64_t lo = tail, hi = head - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (mt_ring_at(r, mid)->t_ns < last)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == tail && head - tail >= MT_RT_EVENTS_MAX ? head : lo;
}

bool mt_rr_drain_rings(bool all)
{
    bool any = false;
    uint64_t now = mt_now_ns();
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        uint64_t st = mt_ring_state(r); /* before draining: RETIRING covers every event */
        uint64_t head = head_of(r);
        if (all || MT_RING_STATE(st) != MT_RING_OWNED || due(r, head, now)) {
            /* A pass takes a few chunks of each ring, so that every ring
             * gets chunks back soon when all are behind. */
            uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
            uint64_t upto = all || head - tail <= MT_RR_PASS_MAX ? head : tail + MT_RR_PASS_MAX;
            bool behind = upto != head;
            if (!all && mt_w.tick_order && !behind && head != tail &&
                MT_RING_STATE(st) == MT_RING_OWNED)
                upto = tick_end(r, tail, head, now); /* OWNED: never made free below */
            any |= drain_ring(r, upto);
            if (behind)
                continue; /* the rest next pass (its lost counts with it, it is not free) */
        }
        emit_lost((uint32_t)r->tid, &r->lost, false);
        if (mt_ring_try_free(r, st)) {
            /* Its thread may have taken it back for events in between. */
            any |= drain_ring(r, head_of(r));
            emit_lost((uint32_t)r->tid, &r->lost, false);
            mt_ring_recycle(r);
        }
    }
    emit_lost(0, mt_rings_lost_unowned(), false);
    if (all || now - mt_w.open_rec.opened_ns >= MT_RR_OPEN_NS)
        mt_rr_flush_events();
    return any;
}

void mt_rr_drain_cut(bool drop_rest)
{
    for (mt_rec_ring *r = mt_ring_first(); r; r = r->next) {
        drain_ring(r, r->cut);
        emit_lost((uint32_t)r->tid, &r->lost, true);
        if (!drop_rest)
            continue;
        mt_ring_consumed(r, head_of(r));
        mt_rec_lost_discard(&r->lost);
    }
    emit_lost(0, mt_rings_lost_unowned(), true);
    if (drop_rest)
        mt_rec_lost_discard(mt_rings_lost_unowned());
}
