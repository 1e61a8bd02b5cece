/* hook_next.h -- the next definition of an interposed function
 * (dlsym(RTLD_NEXT)), looked up once and kept in an atomic slot.
 *
 * Any thread that finds the slot empty looks the name up itself (the same
 * answer: nobody waits for another thread) and publishes it with release;
 * readers load it with acquire.  dlsym may allocate: the thread is marked
 * inside memtop meanwhile, so that allocation passes straight through,
 * untracked and not unwound.
 */
#ifndef MT_HOOK_NEXT_H
#define MT_HOOK_NEXT_H

#include "core_common.h"
#include "core_thread_state.h"

#include <dlfcn.h>
#include <stdatomic.h>

static inline void *mt_next_fn(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (MT_LIKELY(f))
        return f;
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    f = dlsym(RTLD_NEXT, name);
    mt_tls_in_hook = was;
    atomic_store_explicit(slot, f, memory_order_release);
    return f;
}

#endif
