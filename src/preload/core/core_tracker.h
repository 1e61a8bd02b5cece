/* core_tracker.h -- the accounting behind every hook: what a block costs whom. */
#ifndef MT_TRACKER_H
#define MT_TRACKER_H

#include "unwind_backtrace.h"
#include "table_ptr.h"
#include "core_thread_state.h"
#include "core_sample.h"
#include "core_state.h"

/* Records a new block p of `size` requested bytes, attributed to the
 * caller's backtrace.  Call with the thread inside a hook; start: the
 * hook's frame record, where the backtrace starts (unwind_backtrace.h). */
void mt_on_alloc(mt_thread *t, void *p, size_t size, const mt_hook_frame *start);

/* Forgets block p before it goes back to the real allocator and charges
 * the free to the trace that allocated it (or counts an unknown free). */
void mt_on_free(mt_thread *t, void *p);

/* The two halves of mt_on_free, for realloc: take the record out (false,
 * and an unknown free counted, if memtop never saw p); then either charge
 * it, or put it back untouched if the real realloc failed.  The free half
 * of a realloc passes temporary_ok = false. */
bool mt_take(void *p, mt_block *out);
void mt_charge_free(mt_thread *t, void *p, const mt_block *b, bool temporary_ok);
void mt_untake(void *p, const mt_block *b);

/* mt_on_free for a free that arrived while this thread was inside a hook
 * (a signal handler): false, with nothing done, if the block's shard is
 * locked (perhaps by the interrupted code) and the free must be deferred.
 * temporary_ok: false for the free half of a realloc (never temporary). */
bool mt_try_on_free(mt_thread *t, void *p, bool temporary_ok);

/* Sampled mode: the exact count of frees that have no thread to count
 * them (from a signal handler: the interrupted code may be updating its
 * thread's own count); the free half of a successful realloc. */
void mt_count_nested_free(void);
static inline void mt_count_realloc_free(mt_thread *t, void *old)
{
    if (MT_UNLIKELY(mt_g.cfg.sample_rate) && old)
        mt_exact_add(&t->exact_frees, 1);
}

/* Processes frees deferred while the thread was inside a hook. */
void mt_drain_deferred(mt_thread *t);

#endif
