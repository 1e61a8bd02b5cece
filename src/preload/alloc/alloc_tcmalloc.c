/* alloc_tcmalloc.c -- tcmalloc's entry points (gperftools), redirected.
 *
 * tcmalloc defines malloc, free, operator new/delete... as aliases of its
 * tc_* functions (the same code), whether it is linked into the program
 * (libtcmalloc_minimal.a: the executable's malloc wins over memtop's) or
 * shared.  The allocator scan redirects each tc_* entry point in memory
 * (alloc_patch.c) to the hook here, which records the block by the rules
 * of hook_libc.c and calls the trampoline, tcmalloc's original code: every
 * name reaches it, through the PLT or not.  Counted once: a call made
 * while the thread is inside memtop (memtop's malloc hook calling a
 * shared libtcmalloc's malloc, tc_valloc reaching tc_memalign) passes
 * straight through.  The hooks are memtop's own (hidden) functions, only
 * reached through the redirected entries, so each trampoline is set
 * before its hook can run.
 */
#include "alloc_tcmalloc.h"

#include "hook_enter.h"
#include "hook_direct.h"
#include "core_common.h"
#include "table_ptr.h"
#include "core_tracker.h"

#include <errno.h>
#include <stddef.h>

/* The trampolines: tcmalloc's code for each hooked function. */
static _Atomic(void *) orig[MT_TC_N];

enum {
    TC_MALLOC,
    TC_SKIP_NEW_HANDLER,
    TC_NEW,
    TC_NEW_NOTHROW,
    TC_NEW_ALIGNED,
    TC_NEW_ALIGNED_NOTHROW,
    TC_VALLOC,
    TC_PVALLOC,
    TC_CALLOC,
    TC_MEMALIGN,
    TC_POSIX_MEMALIGN,
    TC_REALLOC,
    TC_FREE,
    TC_FREE_SIZED,
    TC_DELETE_NOTHROW,
    TC_DELETE_ALIGNED,
    TC_DELETE_SIZED_ALIGNED,
    TC_DELETE_ALIGNED_NOTHROW,
    TC_COUNT
};

#define TC_ALLOC(fn, idx, params, args, size_expr)                                                 \
    HOOK_ALLOC_ENTRY(fn, orig[idx], params, args, size_expr)

TC_ALLOC(h_malloc, TC_MALLOC, (size_t n), (n), n)
TC_ALLOC(h_skip_new_handler, TC_SKIP_NEW_HANDLER, (size_t n), (n), n)
TC_ALLOC(h_new, TC_NEW, (size_t n), (n), n)
TC_ALLOC(h_new_nothrow, TC_NEW_NOTHROW, (size_t n, const void *nt), (n, nt), n)
TC_ALLOC(h_new_aligned, TC_NEW_ALIGNED, (size_t n, size_t a), (n, a), n)
TC_ALLOC(h_new_aligned_nothrow, TC_NEW_ALIGNED_NOTHROW, (size_t n, size_t a, const void *nt),
         (n, a, nt), n)
TC_ALLOC(h_valloc, TC_VALLOC, (size_t n), (n), n)
TC_ALLOC(h_pvalloc, TC_PVALLOC, (size_t n), (n), n)
TC_ALLOC(h_calloc, TC_CALLOC, (size_t c, size_t n), (c, n), c *n)
TC_ALLOC(h_memalign, TC_MEMALIGN, (size_t a, size_t n), (a, n), n)
HOOK_POSIX_MEMALIGN_ENTRY(h_posix_memalign, orig[TC_POSIX_MEMALIGN])

/* tcmalloc's plain functions for a signal handler's realloc inside memtop
 * whose old block must wait in the queue (hook_nested.h): the new block is
 * made apart with tc_malloc's trampoline, copied by tc_malloc_size, the old
 * one freed by tc_free's.  (Without them the old block's free was counted
 * nowhere, its record left live: a missed free at best.) */
static _Atomic(void *) g_usable_size;

void mt_tc_usable_size_set(void *fn)
{
    if (fn)
        atomic_store_explicit(&g_usable_size, fn, memory_order_release);
}

static const mt_nested_fns *tc_nested_fns(mt_nested_fns *f)
{
    *f = (mt_nested_fns){
        (void *(*)(size_t))atomic_load_explicit(&orig[TC_MALLOC], memory_order_acquire),
        (size_t(*)(void *))atomic_load_explicit(&g_usable_size, memory_order_acquire),
        (void (*)(void *))atomic_load_explicit(&orig[TC_FREE], memory_order_acquire)};
    return f;
}

HOOK_REALLOC_ENTRY(h_realloc, orig[TC_REALLOC], (void *p, size_t n), (p, n), n,
                   tc_nested_fns(&(mt_nested_fns){0}))

/* The block is taken out before the real free (its address may be reused
 * at once by another thread).  tc_free's trampoline frees a signal
 * handler's block that waits in the queue (hook_nested.h). */
#define TC_PLAIN_FREE ((void (*)(void *))atomic_load_explicit(&orig[TC_FREE], memory_order_acquire))
#define TC_FREE_HOOK(fn, idx, params, args)                                                        \
    HOOK_FREE_ENTRY(fn, orig[idx], params, args, TC_PLAIN_FREE)

TC_FREE_HOOK(h_free, TC_FREE, (void *p), (p))
TC_FREE_HOOK(h_free_sized, TC_FREE_SIZED, (void *p, size_t n), (p, n))
TC_FREE_HOOK(h_delete_nothrow, TC_DELETE_NOTHROW, (void *p, const void *nt), (p, nt))
TC_FREE_HOOK(h_delete_aligned, TC_DELETE_ALIGNED, (void *p, size_t a), (p, a))
TC_FREE_HOOK(h_delete_sized_aligned, TC_DELETE_SIZED_ALIGNED, (void *p, size_t n, size_t a),
             (p, n, a))
TC_FREE_HOOK(h_delete_aligned_nothrow, TC_DELETE_ALIGNED_NOTHROW,
             (void *p, size_t a, const void *nt), (p, a, nt))

/* Each tc_* name and its hook; the other names of each function (malloc,
 * _Znwm, tc_newarray, tc_delete...) are aliases: the same entry. */
const mt_patch_entry mt_tc_entries[MT_TC_N] = {
    [TC_MALLOC] = {"tc_malloc", (void *)h_malloc, &orig[TC_MALLOC]},
    [TC_SKIP_NEW_HANDLER] = {"tc_malloc_skip_new_handler", (void *)h_skip_new_handler,
                             &orig[TC_SKIP_NEW_HANDLER]},
    [TC_NEW] = {"tc_new", (void *)h_new, &orig[TC_NEW]},
    [TC_NEW_NOTHROW] = {"tc_new_nothrow", (void *)h_new_nothrow, &orig[TC_NEW_NOTHROW]},
    [TC_NEW_ALIGNED] = {"tc_new_aligned", (void *)h_new_aligned, &orig[TC_NEW_ALIGNED]},
    [TC_NEW_ALIGNED_NOTHROW] = {"tc_new_aligned_nothrow", (void *)h_new_aligned_nothrow,
                                &orig[TC_NEW_ALIGNED_NOTHROW]},
    [TC_VALLOC] = {"tc_valloc", (void *)h_valloc, &orig[TC_VALLOC]},
    [TC_PVALLOC] = {"tc_pvalloc", (void *)h_pvalloc, &orig[TC_PVALLOC]},
    [TC_CALLOC] = {"tc_calloc", (void *)h_calloc, &orig[TC_CALLOC]},
    [TC_MEMALIGN] = {"tc_memalign", (void *)h_memalign, &orig[TC_MEMALIGN]},
    [TC_POSIX_MEMALIGN] = {"tc_posix_memalign", (void *)h_posix_memalign, &orig[TC_POSIX_MEMALIGN]},
    [TC_REALLOC] = {"tc_realloc", (void *)h_realloc, &orig[TC_REALLOC]},
    [TC_FREE] = {"tc_free", (void *)h_free, &orig[TC_FREE]},
    [TC_FREE_SIZED] = {"tc_free_sized", (void *)h_free_sized, &orig[TC_FREE_SIZED]},
    [TC_DELETE_NOTHROW] = {"tc_delete_nothrow", (void *)h_delete_nothrow, &orig[TC_DELETE_NOTHROW]},
    [TC_DELETE_ALIGNED] = {"tc_delete_aligned", (void *)h_delete_aligned, &orig[TC_DELETE_ALIGNED]},
    [TC_DELETE_SIZED_ALIGNED] = {"tc_delete_sized_aligned", (void *)h_delete_sized_aligned,
                                 &orig[TC_DELETE_SIZED_ALIGNED]},
    [TC_DELETE_ALIGNED_NOTHROW] = {"tc_delete_aligned_nothrow", (void *)h_delete_aligned_nothrow,
                                   &orig[TC_DELETE_ALIGNED_NOTHROW]},
};

_Static_assert(TC_COUNT == MT_TC_N, "alloc_tcmalloc.h: MT_TC_N");
