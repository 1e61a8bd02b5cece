/* alloc_jemalloc.c -- a jemalloc memtop hooks: its own figures, and
 * memtop's hooks inside it through jemalloc's own hook API, the fallback
 * when its entry points are not redirected (alloc_je_redirect.c).
 *
 * jemalloc >= 5.2 calls hooks installed with the mallctl
 * "experimental.hooks.install" after every allocation, before every
 * deallocation and after every in-place resize, from all of its entry
 * points: malloc and friends, mallocx, rallocx, xallocx, dallocx,
 * sdallocx, its C++ operators, whatever their prefix (je_, _rjem_), and
 * whether the program reached them through the PLT or called them
 * directly inside a module (libjemalloc.a, tikv-jemallocator), without
 * decoding or patching any code.  It costs more than the redirect: a hook
 * turns jemalloc's fast path off in every thread, and the hooks run deep
 * inside jemalloc, whose frames each backtrace must walk and drop.  The
 * mallctl is the one the allocator scan found next to the entry points
 * (alloc_scan.c), so a prefixed jemalloc is hooked as well as an
 * unprefixed one.
 *
 * Counted once: a block that memtop's exported hooks (hook_libc.c) handle --
 * a shared libjemalloc reached through memtop's malloc -- arrives here
 * with the thread already inside memtop and passes through: the exported
 * hook records it.  memtop's own allocations (publisher, unwinder) pass
 * through the same way.  Everything else is accounted by the rules of
 * core_tracker.c: sizes are what the caller asked for (from the call's
 * arguments, which jemalloc hands over), realloc, rallocx and an in-place
 * xallocx free the old block (never temporary) and allocate the new one at
 * the call site, sdallocx and dallocx free like free.
 *
 * Backtraces: the hooks run deep inside jemalloc.  They walk from their
 * own frame and drop jemalloc's frames (mt_tls_trim, unwind_backtrace.h): the
 * whole module for a shared libjemalloc, else the ranges of its entry
 * points' object code, so that the first frame is the program's call.
 */
#define _GNU_SOURCE
#include "alloc_jemalloc.h"

#include "hook_enter.h"
#include "core_common.h"
#include "table_ptr.h"
#include "core_thread_state.h"
#include "core_tracker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* jemalloc's hook.h (5.2, 5.3): the call kinds, in their order there. */
enum {
    JE_ALLOC_MALLOC,
    JE_ALLOC_POSIX_MEMALIGN,
    JE_ALLOC_ALIGNED_ALLOC,
    JE_ALLOC_CALLOC,
    JE_ALLOC_MEMALIGN,
    JE_ALLOC_VALLOC,
    JE_ALLOC_MALLOCX,
    JE_ALLOC_REALLOC,
    JE_ALLOC_RALLOCX,
};
enum {
    JE_DALLOC_FREE,
    JE_DALLOC_DALLOCX,
    JE_DALLOC_SDALLOCX,
    JE_DALLOC_REALLOC,
    JE_DALLOC_RALLOCX
};
enum { JE_EXPAND_REALLOC, JE_EXPAND_RALLOCX, JE_EXPAND_XALLOCX };

typedef struct je_hooks {
    void (*alloc_hook)(void *extra, int type, void *result, uintptr_t result_raw,
                       uintptr_t args_raw[3]);
    void (*dalloc_hook)(void *extra, int type, void *address, uintptr_t args_raw[3]);
    void (*expand_hook)(void *extra, int type, void *address, size_t old_usize, size_t new_usize,
                        uintptr_t result_raw, uintptr_t args_raw[4]);
    void *extra;
} je_hooks;

typedef struct je_inst {
    mt_mallctl_fn mallctl;
    mt_trim trim;
    uint32_t index; /* of its entry in the allocator list */
    /* its own figures as last asked (mt_je_refresh; MT_UNKNOWN: not known) */
    _Atomic uint64_t allocated, active, resident, mapped;
} je_inst;

/* Written under the allocator scan's lock, read by the hooks through
 * `extra` (jemalloc's install synchronises with the hooks' calls) and by
 * the publisher after an acquire load of the count; the figures are
 * relaxed atomics, written by whoever refreshes (alloc_stats.h). */
static je_inst g_je[MT_ALLOC_MAX];
static _Atomic uint32_t g_nje;

#define HOOK_FRAME() ((const mt_hook_frame *)__builtin_frame_address(0))

/* The size the caller asked for, from the call's arguments. */
static size_t asked(int type, uintptr_t args[3])
{
    switch (type) {
    case JE_ALLOC_POSIX_MEMALIGN:
        return (size_t)args[2];
    case JE_ALLOC_ALIGNED_ALLOC:
    case JE_ALLOC_MEMALIGN:
    case JE_ALLOC_REALLOC:
    case JE_ALLOC_RALLOCX:
        return (size_t)args[1];
    case JE_ALLOC_CALLOC:
        return (size_t)args[0] * (size_t)args[1];
    default: /* malloc, valloc, mallocx */
        return (size_t)args[0];
    }
}

/* Records a block with the backtrace trimmed to the program's call. */
static inline void record(mt_thread *t, const je_inst *j, void *p, size_t size,
                          const mt_hook_frame *start)
{
    mt_tls_trim = &j->trim;
    mt_on_alloc(t, p, size, start);
    mt_tls_trim = NULL;
}

static void je_alloc_hook(void *extra, int type, void *result, uintptr_t result_raw,
                          uintptr_t args[3])
{
    if (!result || (type == JE_ALLOC_POSIX_MEMALIGN && result_raw != 0))
        return;
    mt_thread *t = hook_enter();
    if (!t) {
        count_untracked(mt_tls_in_hook ? NULL : result); /* inside memtop: its hook counts */
        return;
    }
    int saved = errno;
    record(t, extra, result, asked(type, args), HOOK_FRAME());
    hook_leave(t);
    errno = saved;
}

static void je_dalloc_hook(void *extra, int type, void *address, uintptr_t args[3])
{
    (void)extra;
    (void)args;
    if (!address)
        return;
    mt_thread *t = hook_enter();
    if (!t)
        return; /* inside memtop: its free hook accounts the block */
    int saved = errno;
    if (type == JE_DALLOC_REALLOC || type == JE_DALLOC_RALLOCX) {
        mt_block b;
        if (mt_take(address, &b))
            mt_charge_free(t, address, &b, false); /* the realloc rule: never temporary */
    } else {
        mt_on_free(t, address);
    }
    hook_leave(t);
    errno = saved;
}

/* An in-place resize: the old block freed, the new one allocated at the
 * call site.  xallocx(ptr, size, extra, flags) asked for `size`, or got
 * less (new_usize) when it could not grow that far. */
static void je_expand_hook(void *extra, int type, void *address, size_t old_usize, size_t new_usize,
                           uintptr_t result_raw, uintptr_t args[4])
{
    (void)old_usize;
    (void)result_raw;
    (void)type;
    mt_thread *t = hook_enter();
    if (!t)
        return;
    int saved = errno;
    size_t size = (size_t)args[1];
    if (new_usize < size)
        size = new_usize;
    mt_block b;
    if (mt_take(address, &b))
        mt_charge_free(t, address, &b, false);
    record(t, extra, address, size, HOOK_FRAME());
    hook_leave(t);
    errno = saved;
}

static uint64_t stat(mt_mallctl_fn mallctl, const char *name)
{
    size_t v = 0, len = sizeof v;
    return mallctl(name, &v, &len, NULL, 0) == 0 ? (uint64_t)v : MT_UNKNOWN;
}

void mt_je_version(mt_mallctl_fn mallctl, mt_shm_allocator *a)
{
    const char *v = NULL;
    size_t len = sizeof v;
    if (mallctl("version", &v, &len, NULL, 0) != 0 || !v)
        return;
    size_t n = strcspn(v, "-"); /* "5.3.0-0-g54eaed1d..." -> "5.3.0" */
    if (n >= sizeof a->version)
        n = sizeof a->version - 1;
    memcpy(a->version, v, n);
    a->version[n] = '\0';
}

/* Asks j's jemalloc for its figures (a new epoch first: jemalloc's
 * statistics are a snapshot it takes then) and keeps them. */
static void refresh_one(je_inst *j)
{
    uint64_t epoch = 1;
    size_t el = sizeof epoch;
    j->mallctl("epoch", &epoch, &el, &epoch, sizeof epoch);
    atomic_store_explicit(&j->allocated, stat(j->mallctl, "stats.allocated"), memory_order_relaxed);
    atomic_store_explicit(&j->active, stat(j->mallctl, "stats.active"), memory_order_relaxed);
    atomic_store_explicit(&j->resident, stat(j->mallctl, "stats.resident"), memory_order_relaxed);
    atomic_store_explicit(&j->mapped, stat(j->mallctl, "stats.mapped"), memory_order_relaxed);
}

/* What the program held from j's jemalloc (refreshed just before): its
 * stats.allocated also counts jemalloc's own internal blocks (thread
 * caches' structures) and the regions cached in thread caches, which the
 * program does not hold; without them it is the bytes (size classes) the
 * program was handed and has not freed.  stats.allocated alone (an upper
 * bound) where a figure is missing.  4096: MALLCTL_ARENAS_ALL. */
static uint64_t held_by_program(je_inst *j)
{
    uint64_t all = atomic_load_explicit(&j->allocated, memory_order_relaxed);
    uint64_t internal = stat(j->mallctl, "stats.arenas.4096.internal");
    uint64_t cached = stat(j->mallctl, "stats.arenas.4096.tcache_bytes");
    if (all == MT_UNKNOWN || internal == MT_UNKNOWN || cached == MT_UNKNOWN ||
        internal > all - cached || cached > all)
        return all;
    return all - internal - cached;
}

bool mt_je_install(mt_mallctl_fn mallctl, const mt_trim *trim, uint32_t index, mt_shm_allocator *a,
                   bool hook_api)
{
    uint32_t n = atomic_load_explicit(&g_nje, memory_order_relaxed);
    if (n == MT_ALLOC_MAX) {
        snprintf(a->note, sizeof a->note, "too many jemallocs: not hooked");
        return false;
    }
    je_inst *j = &g_je[n];
    j->mallctl = mallctl;
    j->trim = *trim;
    j->index = index;
    je_hooks h = {je_alloc_hook, je_dalloc_hook, je_expand_hook, j};
    void *handle = NULL;
    size_t hl = sizeof handle;
    int rc = hook_api ? mallctl("experimental.hooks.install", &handle, &hl, &h, sizeof h) : 0;
    if (rc != 0) {
        snprintf(a->note, sizeof a->note,
                 "jemalloc %s has no hook API (experimental.hooks.install: %s): not hooked",
                 a->version[0] ? a->version : "?", strerror(rc));
        return false;
    }
    /* What the program held before the hooks: read once they are in (the
     * hook API just installed, or the entries already redirected), never
     * before, where another thread's block allocated in between would be
     * neither counted nor said unseen (a false "exact").  Read after, such
     * a block is both: before_hooks may overstate (a false NOT exact, the
     * safe side). */
    refresh_one(j);
    a->before_hooks = held_by_program(j);
    atomic_store_explicit(&g_nje, n + 1, memory_order_release);
    a->flags |= MT_ALLOC_HOOKED;
    return true;
}

void mt_je_refresh(void)
{
    uint32_t n = atomic_load_explicit(&g_nje, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        refresh_one(&g_je[i]);
}

void mt_je_fill(mt_shm_allocators *found)
{
    uint32_t n = atomic_load_explicit(&g_nje, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        const je_inst *j = &g_je[i];
        if (j->index >= found->count)
            continue;
        mt_shm_allocator *a = &found->a[j->index];
        a->allocated = atomic_load_explicit(&j->allocated, memory_order_relaxed);
        a->active = atomic_load_explicit(&j->active, memory_order_relaxed);
        a->resident = atomic_load_explicit(&j->resident, memory_order_relaxed);
        a->mapped = atomic_load_explicit(&j->mapped, memory_order_relaxed);
        if (a->allocated != MT_UNKNOWN)
            a->flags |= MT_ALLOC_STATS;
    }
}

bool mt_je_main_bytes(uint64_t *held, uint64_t *inuse)
{
    if (!atomic_load_explicit(&g_nje, memory_order_acquire))
        return false;
    *held = atomic_load_explicit(&g_je[0].resident, memory_order_relaxed);
    *inuse = atomic_load_explicit(&g_je[0].allocated, memory_order_relaxed);
    return true;
}
