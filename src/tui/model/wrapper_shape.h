/* wrapper_shape.h -- the shape rule for allocator wrappers: which frames
 * allocate on behalf of their callers although no name says so (a
 * project's own `my_pool_get`, an unnamed `libsqlite3.so.0+0xa7503` in a
 * stripped library).  The name rule and the lists (src/symbolize/
 * plumbing.h) come first; this rule looks at the traces themselves.
 *
 * Walking each trace from the allocator outwards, past the frames already
 * known to be plumbing, the first other frame (the candidate: it calls an
 * allocation function directly) is a wrapper call site when
 *  - its traces come from at least MT_SHAPE_MIN_CALLERS distinct caller
 *    functions (unnamed callers: distinct addresses) AND the block size
 *    depends on the caller: the traces' mean block sizes are not all the
 *    same.  A function that allocates a fixed-size object of its own
 *    (a real `remember(item)` that leaks from many call sites) stays the
 *    location; a wrapper passes its callers' sizes through; or
 *  - it has no function name and its caller, in the same module, is
 *    plumbing: the inside of a stripped library's allocator (sqlite's
 *    unnamed sqlite3MemMalloc under the exported sqlite3Malloc).
 * Found wrappers are skipped and the walk goes on (a wrapper of a wrapper),
 * at most MT_SHAPE_ROUNDS levels.  A frame whose function a user's
 * "!name" (MEMTOP_SKIP_FUNCS) keeps is never a wrapper, and the walk of its
 * traces stops there.  Documented in README.md ("Location", next to the
 * name rule) and docs/man/memtop.1 (MEMTOP_SKIP_FUNCS). */
#ifndef MEMTOP_MODEL_WRAPPER_SHAPE_H
#define MEMTOP_MODEL_WRAPPER_SHAPE_H

#include "location.h"
#include "shm_defs.h"
#include "shm_snapshot.h"

#define MT_SHAPE_MIN_CALLERS 4 /* distinct caller functions of a wrapper */
#define MT_SHAPE_ROUNDS 8      /* wrapper levels looked through */

/* The wrapper call sites among the traces of defs into out (initialized
 * by the caller; its previous content is kept), with loc's symbolizer and
 * plumbing list (loc->wrappers is ignored).  snap gives each trace's mean
 * block size (NULL: unknown, and the first clause never holds).  0, or -1
 * when out of memory (out then holds the sites found so far, sealed). */
int mt_wrapper_shape(const mt_locator *loc, const mt_defs *defs, const mt_snapshot *snap,
                     mt_addr_set *out);

/* loc, plus the wrappers among defs' traces in set (initialized here; free
 * it with mt_addr_set_free after the last use of the locator): the locator
 * of a report.  Out of memory: the wrappers found so far. */
mt_locator mt_wrapper_locator(const mt_locator *loc, const mt_defs *defs, const mt_snapshot *snap,
                              mt_addr_set *set);

/* The same work for the viewer's background symbolizer thread (which alone
 * may symbolize, see sym_worker.h): a copy of each trace's first
 * MT_SHAPE_JOB_FRAMES frames and its mean block size, taken on the screen's
 * thread, run later with the worker's locator.  NULL when out of memory. */
#define MT_SHAPE_JOB_FRAMES 24
typedef struct mt_shape_job mt_shape_job;
mt_shape_job *mt_shape_job_new(const mt_defs *defs, const mt_snapshot *snap);
/* mt_wrapper_shape over the copy (job: an mt_shape_job; a mt_symw_shape_fn). */
int mt_shape_job_run(void *job, const mt_locator *loc, mt_addr_set *out);
void mt_shape_job_free(void *job); /* NULL ok */

#endif
