/* alloc_mimalloc_hook.h -- the shapes of memtop's definitions of mimalloc's
 * functions (alloc_mimalloc.c: its malloc family; alloc_mimalloc_heap.c:
 * mi_heap_* and the rest of its API).  Each definition calls the next one
 * (libmimalloc's, found with dlsym(RTLD_NEXT) or, for a libmimalloc loaded
 * RTLD_LOCAL, in the loaded modules (hook_next.h mt_next_fn_loaded); once
 * its entry point is redirected, the trampoline to it: slot_<name>, a
 * static of the file, beside miss_<name>, its lookup's negative cache) and
 * records the block by the rules of hook_libc.c. */
#ifndef MT_ALLOC_MIMALLOC_HOOK_H
#define MT_ALLOC_MIMALLOC_HOOK_H

#include "hook_direct.h"
#include "hook_next.h"
#include "core_common.h"

#include <stddef.h>
#include <stdint.h>

/* c * n as the caller asked it; SIZE_MAX when it overflows (the call then
 * fails, and a failed realloc-like call must not look like a free). */
static inline size_t mt_mi_mul(size_t c, size_t n)
{
    size_t total;
    return __builtin_mul_overflow(c, n, &total) ? SIZE_MAX : total;
}

/* An allocating function: size_expr is what the caller asked for. */
#define MI_ALLOC(name, params, args, size_expr)                                                    \
    MT_EXPORT void *name params                                                                    \
    {                                                                                              \
        void *(*real)params =                                                                      \
            (void *(*)params)mt_next_fn_loaded(&slot_##name, &miss_##name, #name);                 \
        if (MT_UNLIKELY(!real))                                                                    \
            return NULL;                                                                           \
        HOOK_ALLOC_RETURN(real args, size_expr);                                                   \
    }

/* A realloc-like function of the block p (realloc_done's rules);
 * nested_fns: HOOK_REALLOC_RETURN's. */
#define MI_REALLOC_FNS(name, params, args, size_expr, frees_on_failure, nested_fns)                \
    MT_EXPORT void *name params                                                                    \
    {                                                                                              \
        void *(*real)params =                                                                      \
            (void *(*)params)mt_next_fn_loaded(&slot_##name, &miss_##name, #name);                 \
        if (MT_UNLIKELY(!real))                                                                    \
            return NULL;                                                                           \
        HOOK_REALLOC_RETURN(p, real args, size_expr, frees_on_failure, nested_fns);                \
    }

/* One that keeps an alignment, a heap, zeroes or throws: a signal
 * handler's call is never made apart (hook_nested.h). */
#define MI_REALLOC(name, params, args, size_expr, frees_on_failure)                                \
    MI_REALLOC_FNS(name, params, args, size_expr, frees_on_failure, NULL)

/* A freeing function: the block is taken out before the real free, as in
 * hook_libc.c (the address may be reused at once by another thread).
 * plain_free: HOOK_FREE_CALL's. */
#define MI_FREE(name, params, args, plain_free)                                                    \
    MT_EXPORT void name params                                                                     \
    {                                                                                              \
        void(*real) params = (void(*) params)mt_next_fn_loaded(&slot_##name, &miss_##name, #name); \
        if (MT_UNLIKELY(!real))                                                                    \
            return;                                                                                \
        HOOK_FREE_CALL(p, real args, plain_free);                                                  \
    }

#endif
