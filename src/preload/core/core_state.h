/* core_state.h -- the preload library's process-wide state.
 *
 * libmemtop.so lives inside someone else's process, entered through
 * interposed symbols with no context argument, so it must have global
 * state.  mt_g holds what is process-wide: the configuration, the life
 * cycle and the health counters.  The rest belongs each to one module
 * (the tables, the publisher, the recording, the unwinder...), static to
 * it where it can be; CONCURRENCY.md lists every one with its owner, what
 * protects it and why it must be global.  A new global goes there too.
 */
#ifndef MT_STATE_H
#define MT_STATE_H

#include "core_config.h"
#include "core_common.h"

enum {
    MT_ST_UNINIT = 0, /* nothing done yet */
    MT_ST_STARTING,   /* one thread is initialising; others pass through */
    MT_ST_READY,      /* tracking */
    MT_ST_FORKED,     /* in a fork child: tracking, publisher not yet restarted */
    MT_ST_OFF,        /* disabled (MEMTOP_DISABLE, or initialisation failed) */
};

typedef struct mt_global {
    mt_config cfg;
    _Atomic int state;
    uintptr_t self_lo, self_hi; /* memtop's own code, left out of backtraces */
    /* Health counters: anything not exact is counted here. */
    _Atomic uint64_t unknown_free_count;
    _Atomic uint64_t untracked_alloc_count;
    _Atomic uint64_t missed_free_count;
    _Atomic uint64_t thread_count;
    /* Process-wide live bytes, kept only to give an exact process peak. */
    _Atomic uint64_t live_bytes;
    _Atomic uint64_t peak_live_bytes;
} mt_global;

extern mt_global mt_g;

/* Initialises tracking if needed.  Returns true when the caller may track;
 * false means pass the call straight through (initialisation is running on
 * another thread, tracking is off, or this is the init thread's own call). */
bool mt_ensure_ready(void);

#endif
