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
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    f = dlsym(RTLD_NEXT, name);
    mt_tls_in_hook = was;
    return mt_next_keep(slot, f);
}

/* mt_next_fn, and when dlsym(RTLD_NEXT) finds nothing, the definition in
 * any other loaded module (hook_loaded_sym.h): a library loaded RTLD_LOCAL
 * is not in the scope dlsym(RTLD_NEXT) searches, while the modules that
 * depend on it bind their references to memtop's definitions (mimalloc's
 * mi_*: alloc_mimalloc.c).  Not for dl_iterate_phdr's own slot (the lookup
 * calls it). */
static inline void *mt_next_fn_loaded(_Atomic(void *) *slot, const char *name)
{
    void *f = mt_next_fn(slot, name);
    if (MT_LIKELY(f))
        return f;
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    f = mt_loaded_sym(name);
    mt_tls_in_hook = was;
    return mt_next_keep(slot, f);
}

#endif
