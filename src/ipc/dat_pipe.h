/* dat_pipe.h -- a recording's first pass read on a thread of its own.
 *
 * Why: the full sequential pass (the replay's first pass: `memtop -f FILE
 * --batch`, `--export`, opening a recording in the viewer) is instruction
 * bound on one core.  Its reading half (zstd, the EVENTS2 columns, the
 * frame context's block resolution) and its applying half (the replay's
 * live groups and counters) can run on two cores as a pipeline: a
 * producer thread runs the unchanged sequential reader, calling it the way
 * the replay's first pass does, and hands each call's result (an event, a
 * batch, the position mt_dat_tell gives after it, an error with its
 * message) and the deferred blocks each flush gives through a ring of
 * MT_DAT_PIPE_SLOTS slots.  The consumer's calls below give exactly what
 * the same calls on the reader give at the same point, errors included.
 *
 * Flushes: the producer flushes the frame's deferred blocks after every
 * TOTALS and wherever mt_dat_tell is true (the points where the first pass
 * may flush).  A consumer's flush gives the blocks of the producer's flush
 * at that point; blocks of a flush the consumer did not ask for are given
 * before the next call's result.  The groups are then exact at least
 * wherever the consumer flushed (mt_dat_defer_blocks' rule), and a TOTALS'
 * prune finds the same negative groups (replay_state.h).
 *
 * Memory: the one reader as before, plus the ring: MT_DAT_PIPE_SLOTS slots
 * of one event, one batch of up to MT_DAT_PIPE_BATCH events or as many
 * bytes of blocks each (dat_pipe.c's `slot`, ~12.6 KB: 3.2 MB in all),
 * whatever the file.
 *
 * Decompressing ahead: the producer is the slower thread (zstd, the
 * columns, the frame context) and the consumer waits for it; while the
 * ring is empty the consumer decompresses the recording ahead of the
 * producer, a chunk at a time (mt_dat_decode_ahead, dat_zstream.h), so
 * that the producer mostly finds the bytes decoded (docs/performance.md,
 * "Reading, thirteenth round").  MEMTOP_READ_AHEAD=0 turns that off (to
 * measure it); the bytes read are the same either way.
 *
 * Threads: MEMTOP_READ_THREADS=1 in the environment reads on the calling
 * thread (the calls then go straight to the reader), =2 on two; the default
 * is the pipeline when this process may run on two or more CPUs and the
 * last minute's load average leaves one of them free (mt_dat_pipe_threads).
 * MEMTOP_READ_STATS=1 prints each thread's CPU time and waits, and the
 * chunks the consumer decompressed, on stderr when the pass ends. */
#ifndef MEMTOP_DAT_PIPE_H
#define MEMTOP_DAT_PIPE_H

#include "dat_reader.h"

#define MT_DAT_PIPE_BATCH 256u
/* More than most cores' L2 holds (dat_pipe.c says why) */
#define MT_DAT_PIPE_SLOTS 256u

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

/* As mt_dat_next_batch with max = MT_DAT_PIPE_BATCH, the events given in
 * place: *out points to *n of them, the caller's to change, valid until
 * the pipe's next call. */
mt_errc mt_dat_pipe_next_batch(mt_dat_pipe *p, mt_dat_hev **out, size_t *n, mt_err *err);

/* Stop the producer (wherever it is), hand the reader back (deferral
 * off) and free the pipe.  After an error or MT_E_EMPTY the reader stands
 * where the same calls on it would have left it. */
void mt_dat_pipe_end(mt_dat_pipe *p);

/* The threads a pass would use: MEMTOP_READ_THREADS, else by the CPUs. */
unsigned mt_dat_pipe_threads(void);

#endif
