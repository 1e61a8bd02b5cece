/* alloc_stats.c -- tcmalloc's and mimalloc's own view of their memory.
 *
 * Why: the header's "Allocator ... N MiB, X% not live" (fragmentation and
 * free lists) needs what the allocator holds, which memtop's counts do
 * not show.  jemalloc gives it through its mallctl (alloc_jemalloc.c);
 * tcmalloc (gperftools) through MallocExtension_GetNumericProperty:
 * generic.heap_size (mapped), tcmalloc.pageheap_unmapped_bytes (returned
 * to the kernel), tcmalloc.pageheap_free_bytes (free in the page heap),
 * generic.current_allocated_bytes (handed to the program); mimalloc
 * through mi_process_info, whose current commit is the memory it holds
 * (it does not count allocated bytes in a release build).  The functions
 * are the ones the allocator scan found in the allocator's own module.
 *
 * Where: the publisher asks, each interval, before it takes any memtop
 * lock (mt_alloc_stats_refresh, which asks jemalloc too: mt_je_refresh),
 * and so does the thread that exits or execs before the final publish:
 * the allocator takes its own locks, and a thread forking may hold those
 * (jemalloc's and tcmalloc's fork handlers take them) while it waits in
 * memtop's fork_prepare for the publish lock.  The figures are kept in relaxed atomics; the
 * publish copies them into the segment's entries, the totals' allocator
 * bytes read them, without calling the allocator.
 */
#define _GNU_SOURCE
#include "alloc_stats.h"

#include "alloc_jemalloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct stats_src {
    uint32_t kind, index;
    mt_stats_fns f;
    _Atomic uint64_t allocated, active, resident, mapped; /* MT_UNKNOWN until asked */
} stats_src;

static stats_src g_src[MT_ALLOC_MAX];
static _Atomic uint32_t g_nsrc; /* entries of g_src filled (release) */

static void tc_version_of(const mt_stats_fns *f, char *out, size_t cap)
{
    if (!f->tc_version)
        return;
    int major = 0, minor = 0;
    const char *patch = NULL;
    const char *(*fn)(int *, int *, const char **) =
        (const char *(*)(int *, int *, const char **))f->tc_version;
    fn(&major, &minor, &patch);
    snprintf(out, cap, "%d.%d%s", major, minor, patch ? patch : "");
}

static void mi_version_of(const mt_stats_fns *f, char *out, size_t cap)
{
    if (!f->mi_version)
        return;
    int v = ((int (*)(void))f->mi_version)(); /* 209: 2.0.9 */
    snprintf(out, cap, "%d.%d.%d", v / 100, v / 10 % 10, v % 10);
}

static uint64_t tc_prop(int (*fn)(const char *, size_t *), const char *name)
{
    size_t v = 0;
    return fn(name, &v) ? (uint64_t)v : MT_UNKNOWN;
}

void mt_alloc_stats_add(uint32_t kind, uint32_t index, const mt_stats_fns *f,
                        mt_shm_allocator *entry)
{
    if (kind == MT_ALLOC_KIND_TCMALLOC) {
        tc_version_of(f, entry->version, sizeof entry->version);
        if (f->tc_property && (entry->flags & MT_ALLOC_HOOKED)) /* what memtop did not see */
            entry->before_hooks = tc_prop((int (*)(const char *, size_t *))f->tc_property,
                                          "generic.current_allocated_bytes");
    } else
        mi_version_of(f, entry->version, sizeof entry->version);
    uint32_t n = atomic_load_explicit(&g_nsrc, memory_order_relaxed);
    if (n == MT_ALLOC_MAX || (kind == MT_ALLOC_KIND_TCMALLOC ? !f->tc_property : !f->mi_info))
        return;
    stats_src *s = &g_src[n];
    s->kind = kind;
    s->index = index;
    s->f = *f;
    atomic_store_explicit(&s->allocated, MT_UNKNOWN, memory_order_relaxed);
    atomic_store_explicit(&s->active, MT_UNKNOWN, memory_order_relaxed);
    atomic_store_explicit(&s->resident, MT_UNKNOWN, memory_order_relaxed);
    atomic_store_explicit(&s->mapped, MT_UNKNOWN, memory_order_relaxed);
    atomic_store_explicit(&g_nsrc, n + 1, memory_order_release);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a == MT_UNKNOWN || b == MT_UNKNOWN || b > a ? MT_UNKNOWN : a - b;
}

static void refresh_tc(stats_src *s)
{
    int (*fn)(const char *, size_t *) = (int (*)(const char *, size_t *))s->f.tc_property;
    uint64_t heap = tc_prop(fn, "generic.heap_size");
    uint64_t unmapped = tc_prop(fn, "tcmalloc.pageheap_unmapped_bytes");
    uint64_t free = tc_prop(fn, "tcmalloc.pageheap_free_bytes");
    atomic_store_explicit(&s->allocated, tc_prop(fn, "generic.current_allocated_bytes"),
                          memory_order_relaxed);
    atomic_store_explicit(&s->mapped, heap, memory_order_relaxed);
    atomic_store_explicit(&s->resident, minus(heap, unmapped), memory_order_relaxed);
    atomic_store_explicit(&s->active, minus(minus(heap, unmapped), free), memory_order_relaxed);
}

static void refresh_mi(stats_src *s)
{
    size_t elapsed = 0, user = 0, sys = 0, rss = 0, peak_rss = 0, commit = 0, peak_commit = 0,
           faults = 0;
    void (*fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *) =
        (void (*)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                  size_t *))s->f.mi_info;
    fn(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
    atomic_store_explicit(&s->resident, (uint64_t)commit, memory_order_relaxed);
}

void mt_alloc_stats_refresh(void)
{
    mt_je_refresh(); /* jemalloc's, kept in alloc_jemalloc.c */
    uint32_t n = atomic_load_explicit(&g_nsrc, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        if (g_src[i].kind == MT_ALLOC_KIND_TCMALLOC)
            refresh_tc(&g_src[i]);
        else
            refresh_mi(&g_src[i]);
    }
}

void mt_alloc_stats_fill(mt_shm_allocators *found)
{
    uint32_t n = atomic_load_explicit(&g_nsrc, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        const stats_src *s = &g_src[i];
        uint64_t resident = atomic_load_explicit(&s->resident, memory_order_relaxed);
        if (s->index >= found->count || resident == MT_UNKNOWN)
            continue;
        mt_shm_allocator *a = &found->a[s->index];
        a->allocated = atomic_load_explicit(&s->allocated, memory_order_relaxed);
        a->active = atomic_load_explicit(&s->active, memory_order_relaxed);
        a->resident = resident;
        a->mapped = atomic_load_explicit(&s->mapped, memory_order_relaxed);
        a->flags |= MT_ALLOC_STATS;
    }
}

bool mt_alloc_stats_main(uint64_t *held, uint64_t *inuse)
{
    if (!atomic_load_explicit(&g_nsrc, memory_order_acquire))
        return false;
    uint64_t resident = atomic_load_explicit(&g_src[0].resident, memory_order_relaxed);
    if (resident == MT_UNKNOWN)
        return false;
    *held = resident;
    *inuse = atomic_load_explicit(&g_src[0].allocated, memory_order_relaxed);
    return true;
}
