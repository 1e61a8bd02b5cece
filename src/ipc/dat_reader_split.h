/* dat_reader_split.h -- the reader cut in two for a pipeline: a producer
 * thread reads (zstd, records, the EVENTS2 columns and every check that
 * needs no frame context) and a consumer thread applies the EVENTS2
 * events to the frame context (dat_reader_blocks.h: a free's block, the
 * deferred blocks, NEXT_TRACE and SAME_SIZE).
 *
 * Why: on one thread the pass is instruction bound; with the whole reader
 * on the producer (round readpar) the producer carried ~350 instructions
 * per event and the replay ~125.  The frame context is a state of its own
 * (references never leave their frame, docs/recording-format.md), so it
 * moves to the consumer with the replay: each side carries about half.
 *
 * With mt_dat_split on, mt_dat_next gives an EVENTS2 event unapplied (its
 * mt_draw, mt_dat_split_take) and the reader never touches its frame
 * context, its deferral state or mt_dat_flush_blocks' fields: those
 * belong to the consumer, which calls mt_dat_split_frames,
 * mt_dat_split_apply, mt_dat_split_partial and mt_dat_flush_blocks on the
 * same reader.  The two threads share no field.
 *
 * Errors: an event whose columns fail a check comes with the stage of the
 * one-event decoder's checks reached before it (mt_dstage): the consumer
 * runs the context's checks up to there first, so the first error, its
 * message and the events before it are those of one thread. */
#ifndef MEMTOP_DAT_READER_SPLIT_H
#define MEMTOP_DAT_READER_SPLIT_H

#include "dat_reader.h"

/* An EVENTS2 event as its columns give it. */
typedef struct mt_draw {
    uint64_t t;     /* its time */
    uint64_t v;     /* ALLOC, FREE: size (unless SAME_SIZE); FREE_REF: ref */
    uint64_t birth; /* ALLOC, FREE: birth ms */
    uint32_t trace; /* the trace given (one thread: after SAME_TRACE or NEXT_TRACE, a guess
                     * for hints only; split: resolved by the producer) */
    uint32_t tag;   /* the tag byte */
} mt_draw;

/* How far an event with an error in its columns got, in the one-event
 * decoder's order: the context's checks before the error. */
typedef enum mt_dstage {
    MT_DSTAGE_NONE,  /* none */
    MT_DSTAGE_TRACE, /* the trace's state */
    MT_DSTAGE_SIZE,  /* and SAME_SIZE's */
    MT_DSTAGE_ALL,   /* the whole event (then the record's end fails) */
} mt_dstage;

/* The producer's side of one call. */
typedef struct mt_dsplit_out {
    unsigned frames; /* frames started in the call: mt_dat_split_frames first */
    bool raw;        /* mt_dat_next gave an EVENTS2 event, or its error, as w */
    mt_dstage stage; /* after an error with raw: how far w got */
    mt_draw w;
    uint64_t record; /* the record of the call's events (error messages) */
    uint32_t tid;    /* their thread */
} mt_dsplit_out;

/* Split on or off (between calls, with no thread on the reader). */
void mt_dat_split(mt_dat_reader *r, bool on);

/* Producer: what the last mt_dat_next or mt_dat_split_next_batch gave
 * besides its result; reset for the next call. */
void mt_dat_split_take(mt_dat_reader *r, mt_dsplit_out *o);

/* Producer: mt_dat_next_batch, unapplied: up to max events into w; after
 * an error with raw (mt_dat_split_take), w[*n] (*n < max) is the event
 * that failed. */
mt_errc mt_dat_split_next_batch(mt_dat_reader *r, mt_draw *w, size_t max, size_t *n, mt_err *err);

/* Consumer: n frame starts (the frame's blocks given, the context emptied). */
mt_errc mt_dat_split_frames(mt_dat_reader *r, unsigned n, mt_err *err);

/* Consumer: w[0..n) of record `record` (thread tid) applied, into out;
 * *done of them before an error. */
mt_errc mt_dat_split_apply(mt_dat_reader *r, const mt_dsplit_out *o, const mt_draw *w, size_t n,
                           mt_dat_hev *out, size_t *done, mt_err *err);

/* Consumer: the context's checks of *w up to `stage` (an event whose
 * columns failed after them): MT_OK, or the error they give first. */
mt_errc mt_dat_split_partial(mt_dat_reader *r, const mt_dsplit_out *o, const mt_draw *w,
                             mt_dstage stage, mt_err *err);

#endif
