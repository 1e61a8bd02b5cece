/* sym_worker_impl.h -- the background symbolizer's state, shared by the
 * thread (sym_worker.c) and the lookups (sym_lookup.c).  Private to
 * src/tui/names. */
#ifndef MEMTOP_SYM_WORKER_IMPL_H
#define MEMTOP_SYM_WORKER_IMPL_H

#include <pthread.h>

#include "sym_intern.h"
#include "sym_mods.h"
#include "sym_queue.h"
#include "sym_table.h"
#include "sym_worker.h"
#include "symbols.h"

struct mt_symworker {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* work queued, or stopping */
    pthread_t thread;
    bool threaded; /* immutable: symbols enabled, the thread runs */
    /* The thread's only after start (the symbolizer); with symbols
     * disabled, only the plumbing list is used, read-only, under lock. */
    mt_symbols syms;

    /* Guarded by lock. */
    bool stopping;
    bool working;      /* the thread is symbolizing a record */
    uint64_t mods_gen; /* generation of the latest map */
    mt_symw_mods *cur; /* the latest map (never NULL) */
    mt_interner names;
    mt_symw_table table;
    mt_symw_queue queue;

    void *shape_job; /* waiting for the thread (mt_symworker_shape), or NULL */
    mt_symw_shape_fn shape_run;
    void (*shape_free)(void *);

    /* Written under lock with __atomic, read without it. */
    uint64_t generation; /* release / acquire: answers stored before */
    size_t pending;      /* relaxed: a hint */
    uint64_t wrap_gen;   /* relaxed: generation of wrappers */

    /* The thread's only: the map it symbolizes against (one reference). */
    mt_symw_mods *held;
    /* The shape rule's wrappers in use: the thread's only when threaded,
     * else guarded by lock. */
    mt_addr_set wrappers;
};

/* Intern f's strings (lock held); false when out of memory (a string is
 * then NULL). */
bool mt_symw_intern_frame(mt_symworker *w, mt_frame *f);

/* Refresh the pending hint (lock held). */
void mt_symw_publish_pending(mt_symworker *w);

#endif
