/* dat_reader_events2.h -- what the two EVENTS2 decoders share: the one
 * event at a time (dat_reader_events2.c, the reference, which also starts
 * each record) and the batch (dat_reader_batch2.c, the rest of a record
 * in runs): the split varints, the NEXT_TRACE test and resolution, the
 * prefetch hint of a coming event.  Nothing outside the reader includes
 * it. */
#ifndef MEMTOP_DAT_READER_EVENTS2_H
#define MEMTOP_DAT_READER_EVENTS2_H

#include "dat_reader_impl.h"

/* split_v's values of 3 bytes or more (lead byte b has bit 7 set). */
static inline bool mt_dsplit_long(unsigned char b, mt_dcur *tail, uint64_t *out)
{
    uint64_t rest = 0;
    const unsigned char *at = tail->p;
    if (!mt_dcur_v(tail, &rest) || tail->p - at > 9 || (rest >> 57))
        return false;
    *out = (uint64_t)(b & 0x7f) | rest << 7;
    return true;
}

/* A varint of a column: its first byte from the lead part, the rest from
 * the tail part; at most 10 bytes, no overflow.  Inline for the values of
 * one or two bytes (most sizes, traces, refs and time deltas). */
static inline __attribute__((always_inline)) bool mt_dsplit_v(mt_dcur *lead, mt_dcur *tail,
                                                              uint64_t *out)
{
    if (lead->p >= lead->end)
        return false;
    unsigned char b = *lead->p++;
    if (!(b & 0x80)) {
        *out = b;
        return true;
    }
    if (tail->p < tail->end && !(*tail->p & 0x80)) {
        *out = (uint64_t)(b & 0x7f) | (uint64_t)*tail->p++ << 7;
        return true;
    }
    return mt_dsplit_long(b, tail, out);
}

/* A value v of the traces column as a trace: the id itself, or in tick
 * order a step from *col, the trace the column gave last (dat_format.h);
 * false unless a defined trace.  *col becomes it. */
static inline __attribute__((always_inline)) bool
mt_dcol_trace(bool tick, uint64_t v, uint64_t ndefs, uint32_t *col, uint32_t *trace)
{
    if (tick ? !mt_dat_trace_step(*col, v, ndefs, trace) : v >= ndefs)
        return false;
    if (!tick)
        *trace = (uint32_t)v;
    *col = *trace;
    return true;
}

/* An ALLOC whose trace is next(P) of the previous event's (version 4). */
static inline bool mt_dis_next_trace(unsigned tag)
{
    return (tag & (MT_DAT_EV_KIND_MASK | MT_DAT_EV_NEXT_TRACE)) ==
           (MT_DAT_EV_ALLOC | MT_DAT_EV_NEXT_TRACE);
}

/* next(trace) as known now, for a hint (it may change before the event
 * it is guessed for): UINT32_MAX if none. */
static inline uint32_t mt_dctx_guess_next(const mt_dctx *c, uint32_t trace)
{
    bool have = trace < c->ntraces && c->traces[trace].next;
    return have ? c->traces[trace].next - 1u : UINT32_MAX;
}

/* Version 7: a hint for a reference without OTHER, X's block ref of
 * trace: its pair looked up (the hint in the trace's state set, for the
 * decoder to find it again), its list's entry read (written at the
 * block's allocation: mostly in the cache) and the trace's entry at that
 * serial fetched.  Every index checked: these are loads. */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_own(mt_dctx *c, bool prev, uint32_t trace, uint32_t tid, uint64_t ref)
{
    mt_dpair *p = mt_dpairs_find(&c->pairs, trace, tid, mt_dtrace_hint(&c->traces[trace], tid));
    uint32_t serial = p ? mt_dpair_serial(p, prev, ref) : UINT32_MAX;
    if (serial != UINT32_MAX)
        __builtin_prefetch(prev ? &c->prev[trace].ents[serial] : &c->traces[trace].ents[serial], 1);
}

/* Version 7's farther hint, for the batch (dat_reader_batch2.c): X's
 * blocks of a trace are a second array (the pair's list) between the
 * trace's state and its entry, and a free of a random block misses in
 * both (callgrind's cache model on mt4.dat: 1.9 M misses on the lists,
 * 0.5 M on the pairs, as many as on the entries), so the look-ahead
 * fetches the list's entry first, LIST_AHEAD events ahead, then the
 * trace's entry (mt_dctx_prefetch_ev, which reads the list's entry, in
 * the cache by then).  The address computed as an integer: a bad ref
 * only fetches a line for nothing. */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_list(mt_dctx *c, unsigned tag, uint32_t trace, uint32_t tid, uint64_t ref)
{
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    if (trace >= c->ntraces || kind < MT_DAT_EV_FREE_REF || (tag & MT_DAT_EV_OTHER))
        return;
    mt_dpair *p = mt_dpairs_find(&c->pairs, trace, tid, mt_dtrace_hint(&c->traces[trace], tid));
    if (!p)
        return;
    bool prev = kind == MT_DAT_EV_FREE_PREV;
    uintptr_t list = (uintptr_t)(prev ? p->plist : p->list);
    uint64_t n = prev ? p->pcount : p->count;
    __builtin_prefetch((const void *)(list + (uintptr_t)(n - 1 - ref) * sizeof(uint32_t)));
}

/* A hint: an event of `tag` on trace (a guess: it may be wrong, or no
 * trace at all), naming the block ref if a FREE_REF or FREE_PREV, in a
 * record of tid, is coming; the entry of the block it will touch is
 * fetched into the cache.  v7: the file's version is 7 or more (a
 * constant where the caller is specialized). */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_ev(mt_dctx *c, bool v7, unsigned tag, uint32_t trace, uint32_t tid, uint64_t ref)
{
    if (trace >= c->ntraces) /* no state of it yet, or no trace */
        return;
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    if (v7 && kind >= MT_DAT_EV_FREE_REF && !(tag & MT_DAT_EV_OTHER))
        mt_dctx_prefetch_own(c, kind == MT_DAT_EV_FREE_PREV, trace, tid, ref);
    else if (kind == MT_DAT_EV_ALLOC)
        mt_dctx_prefetch_alloc(&c->traces[trace]);
    else if (kind == MT_DAT_EV_FREE_REF)
        mt_dctx_prefetch(&c->traces[trace], ref);
    else if (kind == MT_DAT_EV_FREE_PREV)
        mt_dctx_prefetch_prev(c, trace, ref);
}

/* Whether a tag's kind takes a ref (FREE_REF, FREE_PREV). */
static inline bool mt_dis_ref(unsigned tag)
{
    return (tag & MT_DAT_EV_KIND_MASK) >= MT_DAT_EV_FREE_REF;
}

/* "corrupt recording: what (record N)". */
mt_errc mt_dat_ev2_bad(const mt_dat_reader *r, const char *what, mt_err *err);

/* Whether the reader reads version 7's references by thread, runs of
 * references and rising sizes. */
static inline bool mt_dat_v7(const mt_dat_reader *r)
{
    return r->info.version >= MT_DAT_VERSION_RUNS;
}

/* mt_dctx_take_prev's answer k for a FREE_PREV: MT_OK, or the error.
 * While a seek rebuilds the frame before its target (r->rebuilding), the
 * frame before that one is not known: the event is accepted and changes
 * nothing (a FREE_PREV leaves the last size, so the frame's own context
 * is still right).  mine: the reference is by thread (version 7). */
static inline mt_errc mt_dat_ev2_prev_answer(mt_dat_reader *r, int k, bool mine, mt_dat_ev *e,
                                             mt_err *err)
{
    e->deferred =
        0; /* a block of the frame before was given at that frame's end, or never deferred */
    if (k == MT_DPREV_OK || r->rebuilding)
        return MT_OK;
    if (k == MT_DPREV_FREED)
        return mt_dat_ev2_bad(r, "free of a block that is not live", err);
    return mt_dat_ev2_bad(r,
                          mine ? "free of a block not allocated in the frame before by its thread"
                               : "free of a block not allocated in the frame before",
                          err);
}

/* A FREE_PREV's block (trace's state exists): its size and birth, and
 * e->deferred 0. */
static inline mt_errc mt_dat_ev2_take_prev(mt_dat_reader *r, uint32_t trace, uint64_t ref,
                                           mt_dat_ev *e, mt_err *err)
{
    int k = mt_dctx_take_prev(&r->ctx, trace, ref, &e->size, &e->birth_ms);
    return mt_dat_ev2_prev_answer(r, k, false, e, err);
}

/* X's block (trace, tid) of the frame (prev false, t its state) or of the
 * frame before that ref names (version 7, a reference without OTHER):
 * its serial among the trace's, UINT32_MAX when X has no such block. */
static inline __attribute__((always_inline)) uint32_t mt_dat_ev2_own(mt_dat_reader *r, mt_dtrace *t,
                                                                     uint32_t trace, uint32_t tid,
                                                                     bool prev, uint64_t ref)
{
    mt_dpair *p = mt_dpairs_find(&r->ctx.pairs, trace, tid, mt_dtrace_hint(t, tid));
    return p ? mt_dpair_serial(p, prev, ref) : UINT32_MAX;
}

/* A FREE_PREV naming X's block ref (version 7, without OTHER): as
 * mt_dat_ev2_take_prev. */
static inline mt_errc mt_dat_ev2_take_prev_own(mt_dat_reader *r, mt_dtrace *t, uint32_t trace,
                                               uint32_t tid, uint64_t ref, mt_dat_ev *e,
                                               mt_err *err)
{
    uint32_t serial = mt_dat_ev2_own(r, t, trace, tid, true, ref);
    int k = MT_DPREV_NONE;
    if (serial != UINT32_MAX) { /* X allocated T in the frame before: T's blocks are there */
        mt_dprev *p = &r->ctx.prev[trace];
        assert(p->epoch == r->ctx.epoch && serial < p->count);
        k = mt_dctx_take_prev_at(&r->ctx, p, serial, &e->size, &e->birth_ms);
    }
    return mt_dat_ev2_prev_answer(r, k, true, e, err);
}

/* A FREE_REF's block (t: its trace's state): the block ref names among
 * the trace's (v6 or OTHER) or among X's (own), its size and birth. */
static inline __attribute__((always_inline)) mt_errc
mt_dat_ev2_take_ref(mt_dat_reader *r, mt_dtrace *t, bool own, uint32_t trace, uint32_t tid,
                    uint64_t ref, mt_dat_ev *e, mt_err *err)
{
    uint64_t serial = t->count - 1 - ref;
    if (own) {
        serial = mt_dat_ev2_own(r, t, trace, tid, false, ref);
        if (serial == UINT32_MAX)
            return mt_dat_ev2_bad(r, "free of a block not allocated in its frame by its thread",
                                  err);
        assert(serial < t->count);
    } else if (ref >= t->count) {
        return mt_dat_ev2_bad(r, "free of a block not allocated in its frame", err);
    }
    if (!mt_dctx_take(&r->ctx, t, serial, &e->size, &e->birth_ms))
        return mt_dat_ev2_bad(r, "free of a block that is not live", err);
    e->deferred = r->defer_on && serial >= t->given; /* not given to defer_fn yet */
    return MT_OK;
}

/* An ALLOC of trace (t: its state) by tid: the block (trace, t->count),
 * and (v7) X's next block of the trace. */
static inline __attribute__((always_inline)) mt_errc
mt_dat_ev2_alloc(mt_dat_reader *r, bool v7, mt_dtrace *t, uint32_t trace, uint32_t tid,
                 uint64_t size, uint64_t birth_ms, mt_err *err)
{
    mt_errc rc = mt_dctx_alloc(&r->ctx, t, size, birth_ms, err);
    if (rc || !v7)
        return rc;
    return mt_dpairs_add(&r->ctx.pairs, trace, tid, mt_dtrace_hint(t, tid),
                         (uint32_t)(t->count - 1), err);
}

/* Version 7's runs of references: the kind and OTHER of an event, which a
 * reference's must equal its previous event's to continue its run. */
#define MT_DREF_KEY(tag) ((tag) & (MT_DAT_EV_KIND_MASK | MT_DAT_EV_OTHER))
#define MT_DSAME_TT (MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE)

/* A reference's ref from its column's value v (version 7): r + 1 + v in a
 * run (SAME_TIME and SAME_TRACE after an event of key prev_key, whose ref
 * is prev_ref), else v.  False when it overflows. */
static inline __attribute__((always_inline)) bool
mt_dref_of(unsigned tag, unsigned prev_key, uint64_t prev_ref, uint64_t v, uint64_t *ref)
{
    *ref = v;
    if ((tag & MT_DSAME_TT) != MT_DSAME_TT || MT_DREF_KEY(tag) != prev_key)
        return true;
    if (v >= UINT64_MAX - prev_ref)
        return false;
    *ref = prev_ref + 1 + v;
    return true;
}

/* Version 7's rising sizes: an ALLOC with SAME_TIME and SAME_TRACE and
 * without SAME_SIZE, of a trace t with a last size s, has size s + 1 +
 * *size; an error when it overflows. */
static inline __attribute__((always_inline)) mt_errc mt_dat_ev2_rise(const mt_dat_reader *r,
                                                                     unsigned tag,
                                                                     const mt_dtrace *t,
                                                                     uint64_t *size, mt_err *err)
{
    unsigned mask = MT_DAT_EV_KIND_MASK | MT_DSAME_TT | MT_DAT_EV_SAME_SIZE;
    if ((tag & mask) != (MT_DAT_EV_ALLOC | MT_DSAME_TT) || !t->has_size)
        return MT_OK;
    if (*size >= UINT64_MAX - t->last_size)
        return mt_dat_ev2_bad(r, "allocation size overflows", err);
    *size = t->last_size + 1 + *size;
    return MT_OK;
}

/* NEXT_TRACE: *trace, the previous event's (an ALLOC if prev_alloc),
 * becomes next(*trace); an error if there is none.  Inline, as the next
 * one: an ALLOC of another trace right after an ALLOC (a NEXT_TRACE or
 * a next() to set) is most allocations, and the calls cost 48 M
 * instructions on mt4.dat. */
static inline __attribute__((always_inline)) mt_errc
mt_dat_ev2_next_trace(mt_dat_reader *r, bool prev_alloc, uint32_t *trace, mt_err *err)
{
    if (!prev_alloc)
        return mt_dat_ev2_bad(r, "NEXT_TRACE not after an allocation", err);
    mt_dtrace *p = mt_dctx_trace_known(&r->ctx, *trace); /* its allocation made it */
    if (!p->next)
        return mt_dat_ev2_bad(r, "NEXT_TRACE with no trace after the previous one in its frame",
                              err);
    *trace = p->next - 1u;
    return MT_OK;
}

/* next(P) = Q, after an ALLOC of Q right after an ALLOC of P: P's
 * allocation made its state, so no look-up (and Q's state, taken before,
 * does not move). */
static inline __attribute__((always_inline)) void mt_dat_ev2_set_next(mt_dat_reader *r, uint32_t p,
                                                                      uint32_t q)
{
    mt_dctx_trace_known(&r->ctx, p)->next = q + 1u;
}

/* The rest of the record in runs (dat_reader_batch2.c): at most max
 * events, never the record's last (the one-event decoder checks the
 * columns are used up there).  *n events given; 0 with MT_OK when the
 * next event needs the one-event decoder (it will give it, or its error).
 * An error is the one the one-event decoder gives, after *n events. */
mt_errc mt_dat_run_events2(mt_dat_reader *r, mt_drec *d, mt_dat_hev *out, size_t max, size_t *n,
                           mt_err *err);

#endif
