/* hook_next.h -- the next definition of an interposed function
 * (dlsym(RTLD_NEXT)), looked up once and kept in an atomic slot.
 *
 * Any thread that finds the slot empty looks the name up itself (the same
 * answer: nobody waits for another thread) and publishes it with release;
 * readers load it with acquire.  dlsym may allocate: the thread is marked
 * inside memtop meanwhile, so that allocation passes straight through,
 * untracked and not unwound.  A definition found after another thread
 * filled the slot gives way to the slot's (mt_next_keep).
 */
#ifndef MT_HOOK_NEXT_H
#define MT_HOOK_NEXT_H

#include "core_common.h"
#include "core_dlerror.h"
#include "core_thread_state.h"
#include "hook_loaded_sym.h"

#include <dlfcn.h>
#include <stdatomic.h>

/* Publishes f (release) unless the slot is no longer empty: the scan
 * stores the trampoline once it redirected the entry point (alloc_patch.c),
 * and f, found before, may be that entry, which now jumps back to the
 * hook.  Returns what the slot holds. */
static inline void *mt_next_keep(_Atomic(void *) *slot, void *f)
{
    void *cur = NULL;
    if (!f)
        return atomic_load_explicit(slot, memory_order_acquire);
    if (atomic_compare_exchange_strong_explicit(slot, &cur, f, memory_order_release,
                                                memory_order_acquire))
        return f;
    return cur;
}

static inline void *mt_next_fn(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (MT_LIKELY(f))
        return f;
    int was = mt_in_hook_set(MT_IN_OWN);
    void *program_error = mt_dl_error_stash(); /* core_dlerror.h */
    f = dlsym(RTLD_NEXT, name);
    mt_dl_error_restore(program_error);
    mt_in_hook_restore(was);
    return mt_next_keep(slot, f);
}

/* mt_next_fn, and when dlsym(RTLD_NEXT) finds nothing, the definition in
 * any other loaded module (hook_loaded_sym.h): a library loaded RTLD_LOCAL
 * is not in the scope dlsym(RTLD_NEXT) searches, while the modules that
 * depend on it bind their references to memtop's definitions (mimalloc's
 * mi_*: alloc_mimalloc.c).  Not for dl_iterate_phdr's own slot (the lookup
 * calls it).
 *
 * A miss is remembered in *miss (the load count when both lookups found
 * nothing, plus one; 0: none): until a module is loaded, the next call
 * returns NULL after one dl_iterate_phdr step instead of a dlsym and a
 * walk of every module's symbols (a program calling memtop's mi_malloc
 * with no mimalloc loaded: it got it from dlsym(RTLD_DEFAULT), or a weak
 * reference bound to it).  The count is read before the lookups, so a
 * load during them makes the next call look again.  Relaxed: the word is
 * only ever compared with a count this thread read itself. */
static inline void *mt_next_fn_loaded(_Atomic(void *) *slot, _Atomic unsigned long long *miss,
                                      const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (MT_LIKELY(f))
        return f;
    int was = mt_in_hook_set(MT_IN_OWN);
    unsigned long long adds = mt_loaded_adds();
    if (atomic_load_explicit(miss, memory_order_relaxed) != adds + 1) {
        void *program_error = mt_dl_error_stash(); /* core_dlerror.h */
        f = dlsym(RTLD_NEXT, name);
        mt_dl_error_restore(program_error);
        if (!f)
            f = mt_loaded_sym(name);
        if (!f)
            atomic_store_explicit(miss, adds + 1, memory_order_relaxed);
    }
    mt_in_hook_restore(was);
    return mt_next_keep(slot, f);
}

#endif
