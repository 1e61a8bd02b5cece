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

/* A hint: an event of `tag` on trace (a guess: it may be wrong, or no
 * trace at all), naming the block ref if a FREE_REF, is coming; the slot
 * of the block table it will touch is fetched into the cache. */
static inline __attribute__((always_inline)) void
mt_dctx_prefetch_ev(const mt_dctx *c, unsigned tag, uint32_t trace, uint64_t ref)
{
    if (trace >= c->ntraces) /* no state of it yet, or no trace */
        return;
    unsigned kind = tag & MT_DAT_EV_KIND_MASK;
    if (kind == MT_DAT_EV_ALLOC)
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

/* A FREE_PREV's block (trace's state exists): its size and birth, and
 * e->deferred 0 (a block of the frame before was given at that frame's
 * end, or never deferred).  While a seek rebuilds the frame before its
 * target (r->rebuilding), the frame before that one is not known: the
 * event is accepted and changes nothing (a FREE_PREV leaves the last
 * size, so the frame's own context is still right). */
static inline mt_errc mt_dat_ev2_take_prev(mt_dat_reader *r, uint32_t trace, uint64_t ref,
                                           mt_dat_ev *e, mt_err *err)
{
    int k = mt_dctx_take_prev(&r->ctx, trace, ref, &e->size, &e->birth_ms);
    e->deferred = 0;
    if (k == MT_DPREV_OK || r->rebuilding)
        return MT_OK;
    return mt_dat_ev2_bad(r,
                          k == MT_DPREV_NONE ? "free of a block not allocated in the frame before"
                                             : "free of a block that is not live",
                          err);
}

/* Whether the file's version has runs of references and rising sizes
 * (dat_format.h, "Version 7"). */
static inline bool mt_dat_v7(const mt_dat_reader *r)
{
    return r->info.version >= MT_DAT_VERSION_RUNS;
}

/* Whether the file's version has TAG_PAIRS and paired tags (dat_format.h,
 * "Version 8"): before it, a TAG_PAIRS is an unknown record. */
static inline bool mt_dat_v8(const mt_dat_reader *r)
{
    return r->info.version >= MT_DAT_VERSION_PAIRS;
}

#define MT_DSAME_TT (MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE)

/* A reference's ref from its column's value v (version 7): prev_ref + 1 +
 * v in a run (SAME_TIME and SAME_TRACE right after an event of the same
 * kind, whose ref is prev_ref), else v.  tag: the reference's byte in the
 * tags column, read with the byte before it (the previous event's) only
 * on SAME_TRACE, which the caller has checked is not on the record's
 * first event.  False when it overflows. */
static inline __attribute__((always_inline)) bool
mt_dref_of(const unsigned char *tag, uint64_t prev_ref, uint64_t v, uint64_t *ref)
{
    *ref = v;
    if ((*tag & MT_DSAME_TT) != MT_DSAME_TT || ((tag[-1] ^ *tag) & MT_DAT_EV_KIND_MASK))
        return true;
    if (v >= UINT64_MAX - prev_ref)
        return false;
    *ref = prev_ref + 1 + v;
    return true;
}

/* Version 7's rising sizes: an ALLOC with SAME_TIME and SAME_TRACE and
 * without SAME_SIZE, of a trace t with a last size s in this frame, has
 * size s + 1 + *size; an error when it overflows. */
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
