/* dat_pipe.h -- a recording's first pass read on two threads.
 *
 * Why: the full sequential pass (the replay's first pass: `memtop -f FILE
 * --batch`, `--export`, opening a recording in the viewer) is instruction
 * bound on one core.  It runs as a two-stage pipeline on a split reader
 * (dat_reader_split.h): a producer thread reads (zstd, the records, the
 * EVENTS2 columns and their checks, NEXT_TRACE's trace), calling the
 * reader the way the replay's first pass does, and hands each call's
 * result (an event, a batch of up to MT_DAT_PIPE_BATCH unapplied events,
 * the position mt_dat_tell gives after it, the frames it started, an
 * error with its message and how far its event got) through a ring of
 * MT_DAT_PIPE_SLOTS slots; the calling (consumer) thread applies the
 * events to the frame context (a free's block, SAME_SIZE, the deferred
 * blocks), then the replay applies them to its state.  The consumer's
 * calls below give exactly what the same calls on the reader give at the
 * same point, errors included (the first error in one thread's order,
 * whichever thread finds it).
 *
 * Flushes: the frame context and its deferred blocks are the consumer's:
 * mt_dat_pipe_flush_blocks flushes on the calling thread, as with one, and
 * a frame's end is flushed where the call that started the next frame is
 * taken (mt_dat_split_frames).
 *
 * Memory: the one reader as before (its frame context on the consumer's
 * side), plus the producer's map of each trace's next(P), allocations and
 * recent live blocks (one mt_dtrace, 104 bytes, per trace id used: as the
 * frame context's own trace states), the ring: MT_DAT_PIPE_SLOTS slots of
 * one event or MT_DAT_PIPE_BATCH unapplied events of 40 bytes (a slot
 * ~10.4 KB: 0.33 MB in all), and one batch of applied events (12 KB),
 * whatever the file.
 *
 * Threads: MEMTOP_READ_THREADS=1 in the environment reads on the calling
 * thread (the calls then go straight to the reader), =2 on two; the default
 * is the pipeline when two or more CPUs are online and the last minute's
 * load average leaves one of them free (mt_dat_pipe_threads).  MEMTOP_READ_STATS=1 prints
 * each thread's CPU time and waits on stderr when the pass ends.  The pipe
 * starts where the reader stands at a frame boundary (the first pass:
 * the file's start). */
#ifndef MEMTOP_DAT_PIPE_H
#define MEMTOP_DAT_PIPE_H

#include "dat_reader.h"

#define MT_DAT_PIPE_BATCH 256u
#define MT_DAT_PIPE_SLOTS 32u

typedef struct mt_dat_pipe mt_dat_pipe;

/* Start the first pass of r: its deferred blocks go to fn(ctx) (as
 * mt_dat_defer_blocks; fn may be NULL: off).  threads: 1 reads on the
 * caller's thread, 2 starts the producer, 0 chooses (see above).  NULL
 * with err set when out of memory.  The reader belongs to the pipe until
 * mt_dat_pipe_end. */
mt_dat_pipe *mt_dat_pipe_start(mt_dat_reader *r, mt_dat_block_fn fn, void *ctx, unsigned threads,
                               mt_err *err);

/* As mt_dat_next, mt_dat_tell and mt_dat_flush_blocks on the reader. */
mt_errc mt_dat_pipe_next(mt_dat_pipe *p, mt_dat_event *ev, mt_err *err);
bool mt_dat_pipe_tell(const mt_dat_pipe *p, mt_dat_pos *pos);
mt_errc mt_dat_pipe_flush_blocks(mt_dat_pipe *p, mt_err *err);

/* As mt_dat_next_batch with max = MT_DAT_PIPE_BATCH: *out points to *n
 * events, the caller's to change, valid until the pipe's next call. */
mt_errc mt_dat_pipe_next_batch(mt_dat_pipe *p, mt_dat_hev **out, size_t *n, mt_err *err);

/* Stop the producer (wherever it is), hand the reader back (deferral
 * off) and free the pipe.  After an error or MT_E_EMPTY the reader stands
 * where the same calls on it would have left it. */
void mt_dat_pipe_end(mt_dat_pipe *p);

/* The threads a pass would use: MEMTOP_READ_THREADS, else by the CPUs. */
unsigned mt_dat_pipe_threads(void);

#endif
