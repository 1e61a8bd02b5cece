/* alloc_mimalloc.c -- mimalloc's own API, interposed by name and
 * redirected in memory.
 *
 * A program linked with a shared libmimalloc calls mi_malloc,
 * mi_malloc_aligned, mi_realloc, mi_free_size... through the PLT: like
 * malloc (hook_libc.c), those calls reach libmemtop.so's definitions first,
 * which call the next definition (dlsym(RTLD_NEXT), libmimalloc's) and
 * record the block with the same rules.  Calls that bypass the PLT (a
 * pointer from dlsym(handle, "mi_malloc"), libmimalloc's malloc, which is
 * its mi_malloc) reach the same definitions when the scan redirected
 * libmimalloc's entry points (alloc_patch.c, mt_mi_redirect): the next
 * definition is then the trampoline that runs the original.  Counted
 * once: a call made while the thread is inside memtop (memtop's malloc
 * hook calling libmimalloc's malloc, mi_free_size jumping to mi_free)
 * passes straight through.  Not seen (docs/allocators.md): mimalloc
 * linked into a module, its mi_heap_* functions and the rest of its API:
 * the allocator scan says so (NOT exact).
 */
#define _GNU_SOURCE
#include "unwind_backtrace.h"
#include "hook_enter.h"
#include "hook_direct.h"
#include "hook_next.h"
#include "alloc_mimalloc.h"
#include "core_common.h"
#include "table_ptr.h"
#include "core_tracker.h"

#include <errno.h>
#include <stddef.h>

/* The next definition of each function: libmimalloc's, or once its
 * entry is redirected, the trampoline to it. */
#define MI_SLOT(name) static _Atomic(void *) slot_##name;
MT_MI_FUNCS(MI_SLOT)

/* An allocating function: size_expr is what the caller asked for. */
#define MI_ALLOC(name, params, args, size_expr)                                                    \
    MT_EXPORT void *name params                                                                    \
    {                                                                                              \
        void *(*real)params = (void *(*)params)mt_next_fn(&slot_##name, #name);                    \
        if (MT_UNLIKELY(!real))                                                                    \
            return NULL;                                                                           \
        HOOK_ALLOC_RETURN(real args, size_expr);                                                   \
    }

MI_ALLOC(mi_malloc, (size_t n), (n), n)
MI_ALLOC(mi_zalloc, (size_t n), (n), n)
MI_ALLOC(mi_calloc, (size_t c, size_t n), (c, n), c *n)
MI_ALLOC(mi_mallocn, (size_t c, size_t n), (c, n), c *n)
MI_ALLOC(mi_malloc_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_zalloc_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_calloc_aligned, (size_t c, size_t n, size_t a), (c, n, a), c *n)
MI_ALLOC(mi_new, (size_t n), (n), n)
MI_ALLOC(mi_new_nothrow, (size_t n), (n), n)
MI_ALLOC(mi_new_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_new_aligned_nothrow, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_new_n, (size_t c, size_t n), (c, n), c *n)

#define MI_REALLOC(name, params, args, size_expr, frees_on_failure)                                \
    MT_EXPORT void *name params                                                                    \
    {                                                                                              \
        void *(*real)params = (void *(*)params)mt_next_fn(&slot_##name, #name);                    \
        if (MT_UNLIKELY(!real))                                                                    \
            return NULL;                                                                           \
        mt_thread *t = hook_enter();                                                               \
        if (!t)                                                                                    \
            return real args;                                                                      \
        mt_block b;                                                                                \
        bool known = p && mt_take(p, &b);                                                          \
        void *q = real args;                                                                       \
        return realloc_done(t, p, known, &b, q, size_expr, frees_on_failure, HOOK_FRAME());        \
    }

MI_REALLOC(mi_realloc, (void *p, size_t n), (p, n), n, false)
MI_REALLOC(mi_reallocf, (void *p, size_t n), (p, n), n, true)
MI_REALLOC(mi_reallocn, (void *p, size_t c, size_t n), (p, c, n), c *n, false)
MI_REALLOC(mi_realloc_aligned, (void *p, size_t n, size_t a), (p, n, a), n, false)

/* A freeing function: the block is taken out before the real free, as in
 * hook_libc.c (the address may be reused at once by another thread). */
#define MI_FREE(name, params, args)                                                                \
    MT_EXPORT void name params                                                                     \
    {                                                                                              \
        void(*real) params = (void(*) params)mt_next_fn(&slot_##name, #name);                      \
        if (MT_UNLIKELY(!real))                                                                    \
            return;                                                                                \
        HOOK_FREE_CALL(p, real args);                                                              \
    }

MI_FREE(mi_free, (void *p), (p))
MI_FREE(mi_free_size, (void *p, size_t n), (p, n))
MI_FREE(mi_free_aligned, (void *p, size_t a), (p, a))
MI_FREE(mi_free_size_aligned, (void *p, size_t n, size_t a), (p, n, a))

/* ---- redirecting libmimalloc's entry points ---- */

#define MI_ENTRY(name) {#name, (void *)name, &slot_##name},
const mt_patch_entry mt_mi_entries[MT_MI_N] = {MT_MI_FUNCS(MI_ENTRY)};
