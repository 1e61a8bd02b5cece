/* hook_nested.h -- the program's allocation calls that find the thread
 * already inside memtop: a signal handler that interrupted a hook (its
 * bookkeeping, MT_IN_HOOK, or the real call, MT_IN_REAL) or memtop's fork
 * handlers (MT_IN_FORK).  Such a call cannot take the locks the
 * interrupted code may hold: its allocation is counted as untracked; its
 * free is accounted at once with try-locks, or queued for the interrupted
 * hook to account and free as it leaves, or, when neither can be, counted
 * so that the data says it is not exact.  hook_libc.c uses it for libc's
 * names, hook_direct.h for the allocators' own entry points, whose
 * allocator may reach another entry from inside a real call (MT_IN_REAL):
 * those calls are the allocator's, not the program's, and pass through
 * uncounted (mt_nested_entry_is_program). */
#ifndef MT_HOOK_NESTED_H
#define MT_HOOK_NESTED_H

#include "core_state.h"
#include "core_thread_state.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a nested realloc needs of the allocator whose entry was called, to
 * make the new block apart while the old one waits in the queue (plain
 * malloc, usable size and free: for a realloc-like call that keeps no
 * alignment, heap or flags).  A NULL function: not known, nothing is made
 * apart. */
typedef struct mt_nested_fns {
    void *(*malloc)(size_t);
    size_t (*usable_size)(void *);
    void (*free)(void *);
} mt_nested_fns;

/* Whether pc lies in memtop's code, in the module of an allocator memtop
 * hooks or its trampolines (mt_nested_code_add), or with runtimes, in the
 * C and C++ runtimes that allocators call (mt_nested_runtime_add).
 * Lock-free: a signal handler may ask. */
bool mt_nested_in_allocator(uintptr_t pc, bool runtimes);

/* Adds [lo, hi), a hooked allocator's module, which stays loaded for
 * good, or the page of the trampolines of an allocator's redirected
 * entries (alloc_patch.c: a call displaced there returns there, never
 * unmapped).  Under the allocator scan's lock; a full list drops the range
 * (its calls from inside a real call are then taken for the program's:
 * counted and flagged, never hidden). */
void mt_nested_code_add(uint64_t lo, uint64_t hi);

/* Adds [lo, hi), a C or C++ runtime's module (libc, the loader,
 * libstdc++...), likewise. */
void mt_nested_runtime_add(uint64_t lo, uint64_t hi);

/* A call through one of libc's names that found in_hook = in (and could
 * not enter memtop), returning to ret, is a hooked allocator's own: made
 * from inside memtop's real call (MT_IN_REAL) by the allocator's code
 * (libjemalloc's operator delete jumping to free@plt returns into memtop,
 * which called it; its aligned operator new calling aligned_alloc@plt
 * returns into libjemalloc).  The outer hook counts the block: it passes
 * through, neither counted untracked nor its free unknown.  A call that
 * returns into a runtime is not: libc's or libstdc++'s own allocations
 * (strdup in a signal handler, a bad_alloc's exception object) are blocks
 * of their own, counted as untracked as ever. */
static inline bool mt_nested_libc_is_own(int in, const void *ret)
{
    return in == MT_IN_REAL && mt_nested_in_allocator((uintptr_t)ret, false);
}

/* A call that found in_hook = MT_IN_OWN, memtop's own work on a program
 * thread (a symbol lookup on a function's first call, the allocator scan
 * of dlsym and dlclose, an exec's preparation, exit, a key with glibc's
 * calloc'd slots), is memtop's own when it returns into memtop, into a
 * hooked allocator's module or into a runtime: memtop calls nothing else
 * there (the loader and libc allocate for dlsym, dlopen, pthread_setspecific).
 * Otherwise it is the program's: a signal handler's (or a constructor's or
 * destructor's that memtop's dlopen or dlclose runs), once counted nowhere
 * while the data said exact.  Not told apart: a handler's call through a
 * runtime (strdup, libstdc++'s operator new), taken for memtop's.  memtop's
 * own threads block every signal. */
static inline bool mt_nested_own_is_program(const void *ret)
{
    /* Tracking ready: the first allocator scan has listed the runtimes
     * (before, its own dlopen's loader frees were taken for a handler's) */
    return atomic_load_explicit(&mt_g.state, memory_order_acquire) == MT_ST_READY &&
           !mt_nested_in_allocator((uintptr_t)ret, true);
}

/* A call through one of libc's names that found in_hook = in, returning
 * to ret, is the program's (not one before tracking, nor a hooked
 * allocator's own: mt_nested_libc_is_own, nor memtop's own work's:
 * mt_nested_own_is_program).  Inside a real call too: a handler that
 * interrupted the allocator, or an allocator memtop does not hook calling
 * the malloc family by name, counted as untracked as ever. */
static inline bool mt_nested_libc_is_program(int in, const void *ret)
{
    if (in == MT_IN_OWN)
        return mt_nested_own_is_program(ret);
    return (in == MT_IN_HOOK || in == MT_IN_FORK || in == MT_IN_REAL) &&
           !mt_nested_libc_is_own(in, ret);
}

/* A call into an allocator's redirected or interposed entry that found
 * in_hook = in, returning to ret, is the program's: from memtop's
 * bookkeeping (MT_IN_HOOK, MT_IN_FORK) always; from inside a real call
 * (MT_IN_REAL) when it returns neither into memtop nor into a hooked
 * allocator's module nor into a runtime: a signal handler that
 * interrupted the allocator.  Otherwise it is the allocator's own
 * entry-to-entry call (mi_reallocf calling mi_free; an operator delete
 * jumping to free returns into memtop, which made the real call; the
 * C++ runtime allocating a bad_alloc inside operator new), which the outer
 * hook counts or which was always left uncounted (docs/allocators.md).
 * From memtop's own work (MT_IN_OWN) likewise.  An allocator
 * linked into the executable shares its module with the program's
 * handlers: their calls from inside its real calls pass through
 * (docs/allocators.md). */
static inline bool mt_nested_entry_is_program(int in, const void *ret)
{
    if (in == MT_IN_HOOK || in == MT_IN_FORK)
        return true;
    if (in == MT_IN_OWN) /* memtop's own work: the same rule as libc's names */
        return mt_nested_own_is_program(ret);
    return in == MT_IN_REAL && !mt_nested_in_allocator((uintptr_t)ret, true);
}

/* The program's free of p, in = mt_tls_in_hook: accounted now if it can
 * be, else queued for the outer hook (which frees it with real_free, the
 * allocator's plain free; NULL: not known, nothing queued); true when
 * queued: the caller must not free p.  False: accounted (or counted
 * unmatched), the caller frees p now. */
bool mt_nested_free(void *p, int in, void (*real_free)(void *));

/* The program's block p that a call inside memtop ends without a free
 * call of its own (mi_heap_destroy frees a heap's blocks at once), in =
 * mt_tls_in_hook, before that call: accounted as mt_nested_free accounts
 * one (temporary_ok by free's rule), never queued (the call frees it). */
void mt_nested_gone(void *p, int in, bool temporary_ok);

/* The program's block p, resized in place by a call inside memtop
 * (mi_expand that succeeded, jemalloc's xallocx), in = mt_tls_in_hook,
 * after the call: its old record's free accounted (never temporary, as
 * realloc's), the block as it is now untracked (it once kept its record
 * and the size it had, counted nowhere).  Inside memtop's own work
 * (MT_IN_OWN, exact mode), where the record cannot be taken: the block
 * keeps it, and the resize counts as untracked (NOT exact: its bytes). */
void mt_nested_resized(void *p, int in);

/* The program's realloc of old to size, in = mt_tls_in_hook: the old
 * block's free accounted as mt_nested_free's (never temporary; inside
 * memtop's own work, after the call: mt_nested_realloc_done).  True when
 * the old block was queued and the new one made apart, *out (fns' malloc
 * and a copy: the real realloc would free old before the outer hook
 * accounts for it; fns NULL: never), or that malloc failed (*out NULL, the
 * old block live); false: the caller makes the real call (and counts its
 * block untracked). */
bool mt_nested_realloc_apart(void *old, size_t size, int in, const mt_nested_fns *fns, void **out);

/* After that real call (mt_nested_realloc_apart returned false), got its
 * result: inside memtop's own work (MT_IN_OWN, exact mode), where the old
 * block's record is never taken, its free is counted unmatched only if the
 * call freed it (moved, or realloc(p, 0)'s NULL); resized in place or
 * failed, it keeps its record (NOT exact, through the caller's untracked
 * count, when resized).  Elsewhere nothing: accounted before the call. */
void mt_nested_realloc_done(void *old, size_t size, const void *got, int in);

#endif
