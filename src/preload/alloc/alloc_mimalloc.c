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
 * passes straight through.  The rest of its API (mi_heap_*, mi_strdup...)
 * is alloc_mimalloc_heap.c.  A mimalloc linked into a module (the Rust
 * mimalloc crate, a static link) is redirected to the same definitions,
 * found in the module's .symtab; only one mimalloc has the slots
 * (alloc_scan.c mi_claim; docs/allocators.md).
 */
#define _GNU_SOURCE
#include "alloc_mimalloc.h"
#include "alloc_mimalloc_hook.h"

/* The next definition of each function: libmimalloc's, or once its
 * entry is redirected, the trampoline to it. */
#define MI_SLOT(name)                                                                              \
    static _Atomic(void *) slot_##name;                                                            \
    static _Atomic unsigned long long miss_##name;
MT_MI_FUNCS(MI_SLOT)

MI_ALLOC(mi_malloc, (size_t n), (n), n)
MI_ALLOC(mi_zalloc, (size_t n), (n), n)
MI_ALLOC(mi_calloc, (size_t c, size_t n), (c, n), mt_mi_mul(c, n))
MI_ALLOC(mi_mallocn, (size_t c, size_t n), (c, n), mt_mi_mul(c, n))
MI_ALLOC(mi_malloc_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_zalloc_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_calloc_aligned, (size_t c, size_t n, size_t a), (c, n, a), mt_mi_mul(c, n))
MI_ALLOC(mi_new, (size_t n), (n), n)
MI_ALLOC(mi_new_nothrow, (size_t n), (n), n)
MI_ALLOC(mi_new_aligned, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_new_aligned_nothrow, (size_t n, size_t a), (n, a), n)
MI_ALLOC(mi_new_n, (size_t c, size_t n), (c, n), mt_mi_mul(c, n))

/* mimalloc's plain functions for a signal handler's call that finds the
 * thread inside memtop (hook_nested.h): what the slots hold, never looked
 * up there (a handler may not dlsym); mi_usable_size as the scan found it
 * (mt_mi_heap_helpers). */
static _Atomic(void *) g_usable_size;

static void *mi_loaded(_Atomic(void *) *slot)
{
    return atomic_load_explicit(slot, memory_order_acquire);
}

#define MI_PLAIN_FREE ((void (*)(void *))mi_loaded(&slot_mi_free))

static const mt_nested_fns *mi_nested_fns(mt_nested_fns *f)
{
    *f = (mt_nested_fns){(void *(*)(size_t))mi_loaded(&slot_mi_malloc),
                         (size_t(*)(void *))mi_loaded(&g_usable_size), MI_PLAIN_FREE};
    return f;
}

void mt_mi_usable_size_set(void *fn)
{
    if (fn)
        atomic_store_explicit(&g_usable_size, fn, memory_order_release);
}

MI_REALLOC_FNS(mi_realloc, (void *p, size_t n), (p, n), n, false,
               mi_nested_fns(&(mt_nested_fns){0}))
MI_REALLOC(mi_reallocf, (void *p, size_t n), (p, n), n, true)
MI_REALLOC_FNS(mi_reallocn, (void *p, size_t c, size_t n), (p, c, n), mt_mi_mul(c, n), false,
               mi_nested_fns(&(mt_nested_fns){0}))
MI_REALLOC(mi_realloc_aligned, (void *p, size_t n, size_t a), (p, n, a), n, false)

MI_FREE(mi_free, (void *p), (p), MI_PLAIN_FREE)
MI_FREE(mi_free_size, (void *p, size_t n), (p, n), MI_PLAIN_FREE)
MI_FREE(mi_free_aligned, (void *p, size_t a), (p, a), MI_PLAIN_FREE)
MI_FREE(mi_free_size_aligned, (void *p, size_t n, size_t a), (p, n, a), MI_PLAIN_FREE)

/* ---- redirecting libmimalloc's entry points ---- */

#define MI_ENTRY(name) {#name, (void *)name, &slot_##name},
const mt_patch_entry mt_mi_entries[MT_MI_N] = {MT_MI_FUNCS(MI_ENTRY)};
