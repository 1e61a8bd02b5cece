/* sym_worker.h -- the viewer's background symbolizer, so the screen never
 * waits for debug info: a lookup answers at once with what is known
 * (module + offset) and queues the symbolization; a worker thread, the only
 * user of the mt_symbolizer (libdwfl is not thread-safe), fills in function,
 * file and line, and the generation counter tells the screen to redraw.
 * Answers are exactly those of mt_trace_location / mt_locate_all with an
 * mt_symbols_locator (same plumbing skip, same frames).
 *
 * Every function may be called from any thread.  A lookup only takes a
 * lock for a hash lookup; the lock is never held while a symbolization
 * runs.  Requests are de-duplicated, the most recent are served first and
 * at most MT_SYMW_QUEUE_CAP wait: the oldest are dropped and asked again
 * by their next lookup, so keep asking for what is on screen.  Answers are
 * kept per trace id and per address (memory proportional to the distinct
 * ones asked about, strings interned) until mt_symworker_stop.  A frame
 * with no module is final for the current module map and is computed again
 * once set_modules brings new modules. */
#ifndef MEMTOP_SYM_WORKER_H
#define MEMTOP_SYM_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caller_labels.h"
#include "location.h"
#include "memtop_ipc.h"

#define MT_SYMW_QUEUE_CAP 1024u /* requests waiting, at most */

typedef struct mt_symworker mt_symworker;

/* Start the worker thread.  enabled=false (--no-symbols): never symbolizes
 * (no thread); every answer is module+offset and final at once.  skip_env:
 * MEMTOP_SKIP_FUNCS or NULL.  NULL on failure with a one-line message in
 * err.  The thread blocks every signal, so signals go to the caller's
 * threads. */
mt_symworker *mt_symworker_start(bool enabled, const char *skip_env, char *err, size_t n);

/* Joins the thread (after the symbolization under way, if any; queued
 * requests are dropped) and frees everything; NULL ok. */
void mt_symworker_stop(mt_symworker *w);

/* Give the worker the module map (copied; cheap when nothing changed). */
void mt_symworker_set_modules(mt_symworker *w, const mt_modules *mods);

/* Never blocks on symbolization.  The location of a trace (as
 * mt_trace_location gives it: the first frame that is not allocator
 * plumbing): fills *out and returns true when final; otherwise fills *out
 * with what is known now (module+offset of frames[0], function NULL),
 * queues the work and returns false.  Answers are kept by trace_id (a
 * trace_id seen with other frames is symbolized again).  n == 0: a zeroed
 * frame, final.  Strings in *out stay valid until mt_symworker_stop. */
bool mt_symworker_location(mt_symworker *w, uint32_t trace_id, const uint64_t *frames, unsigned n,
                           mt_frame *out);

/* The same for all source frames (inlined chain, innermost first) of one
 * address, a frame of trace (0: any; mt_locator.trace), as mt_locate_all:
 * returns the count (1..max; 0 only when max is 0); *final tells whether
 * it is symbolized yet. */
unsigned mt_symworker_frames(mt_symworker *w, uint64_t addr, uint32_t trace, mt_frame *out,
                             unsigned max, bool *final);

/* Never blocks on symbolization.  The callers of a trace past its
 * location (as mt_trace_callers gives them, without the shape rule's
 * wrappers) as mt_frame_short texts into out[0..max), innermost first;
 * returns how many: 0 while its location is not final, module+offset for
 * a caller not symbolized yet (queued: ask again after the generation
 * moves). */
unsigned mt_symworker_callers(mt_symworker *w, uint32_t trace_id, const uint64_t *frames,
                              unsigned n, char (*out)[MT_CALLER_MAX], unsigned max);

/* The shape rule for allocator wrappers (src/tui/model/wrapper_shape.h)
 * needs every trace symbolized, so it runs on the worker's thread: run(job,
 * loc, out) fills out (initialized) with the wrappers' call sites using the
 * worker's locator, 0 or -1.  The job waits until the thread is free of the
 * record it is symbolizing, replaces a job still waiting, and is freed with
 * free_job (by mt_symworker_shape itself when w is NULL).  Its set, once
 * computed, is used for every location; answers made with the previous set
 * are given as not final and made again.  Without symbols (no thread) the
 * job runs at once. */
typedef int (*mt_symw_shape_fn)(void *job, const mt_locator *loc, mt_addr_set *out);
void mt_symworker_shape(mt_symworker *w, mt_symw_shape_fn run, void (*free_job)(void *), void *job);

/* Increases whenever a new wrapper set is in use (see mt_symworker_shape). */
uint64_t mt_symworker_wrappers_gen(const mt_symworker *w);

/* Increases whenever new results (or a new module map) arrive. */
uint64_t mt_symworker_generation(const mt_symworker *w);

/* Requests waiting or being worked on (for a "resolving N names" hint). */
size_t mt_symworker_pending(const mt_symworker *w);

#endif
