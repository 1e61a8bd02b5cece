/* core_dlerror.h -- memtop's own dl* calls leave the thread's dl error
 * state as the program left it.
 *
 * When a dlopen or dlsym fails, glibc keeps the error for the thread's next
 * dlerror or dl* call: a result object and its message, both from malloc;
 * the next dl* call frees the message.  Both ways cross memtop's boundary:
 *  - memtop's failed call: made inside memtop, its two blocks are not
 *    tracked, and the program's next dl call frees them (memtop counted
 *    two frees of blocks it never saw: alloc_mi_local, under load, when a
 *    scan's RTLD_NOLOAD dlopen found a library not yet loaded);
 *  - the program's failed call, never read with dlerror: memtop's next dl
 *    call (inside memtop, where frees are not tracked) freed its message,
 *    a block memtop saw allocated, which then stayed live for ever in its
 *    numbers; and the program's dlerror returned NULL instead of its error.
 * So a section of memtop's code that makes dl calls on a program's thread
 * sets the program's pending error aside first (mt_dl_error_stash: glibc's
 * per-thread pointer to it, saved and cleared) and puts it back at its end
 * (mt_dl_error_restore), after draining what memtop's own calls left.  The
 * pointer is glibc's __libc_dlerror_result (GLIBC_PRIVATE, glibc >= 2.34),
 * in libc's static TLS: its offset from the thread pointer is the same in
 * every thread, found once at start (mt_dl_error_init).  Without it (older
 * or other C libraries) a section does nothing, and memtop's calls that
 * failed drain their own errors at once (mt_dl_forget_error), as before: a
 * program's pending error may then still be lost (docs/pitfalls.md).  Two
 * dlerror calls, still inside memtop, format the message and then free it
 * all; after a call that succeeded there is nothing left and dlerror
 * returns NULL.
 */
#ifndef MT_CORE_DLERROR_H
#define MT_CORE_DLERROR_H

#include "core_common.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The offset of glibc's __libc_dlerror_result from the thread pointer; 0:
 * unknown.  Stored once by the initialiser; read (relaxed) by sections on
 * any thread, some before MT_ST_READY (a first exec or dlclose): 0 or the
 * offset, either is right (the offset is the same in every thread). */
extern MT_HIDDEN _Atomic long mt_dlerr_offset;

static inline void **mt_dl_error_slot(void)
{
    long off = atomic_load_explicit(&mt_dlerr_offset, memory_order_relaxed);
    return off ? (void **)((char *)__builtin_thread_pointer() + off) : NULL;
}

/* Finds mt_dlerr_offset (core_dlerror.c). */
void mt_dl_error_init(void);

static inline void mt_dl_forget_error(void)
{
    (void)dlerror(); /* the message, formatted: the error is now "returned" */
    (void)dlerror(); /* frees a returned error's message and result object */
}

/* The program's pending dl error set aside: the value to give
 * mt_dl_error_restore. */
static inline void *mt_dl_error_stash(void)
{
    void **slot = mt_dl_error_slot();
    if (!slot)
        return NULL;
    void *saved = *slot;
    *slot = NULL;
    return saved;
}

/* The end of the section: memtop's own errors drained, the program's put
 * back.  Without the slot, nothing: draining would free the program's
 * error too (its callers drain after their own failed calls). */
static inline void mt_dl_error_restore(void *saved)
{
    void **slot = mt_dl_error_slot();
    if (!slot)
        return;
    mt_dl_forget_error();
    *slot = saved;
}

#endif
