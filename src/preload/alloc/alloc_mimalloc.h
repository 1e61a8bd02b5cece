/* alloc_mimalloc.h -- the mi_* functions memtop hooks (alloc_mimalloc.c,
 * alloc_mimalloc_heap.c),
 * for the scan that redirects libmimalloc's entry points to them. */
#ifndef MT_HOOKS_MIMALLOC_H
#define MT_HOOKS_MIMALLOC_H

#include "alloc_patch.h"

#include <stdint.h>

#define MT_MI_FUNCS(X)                                                                             \
    X(mi_malloc)                                                                                   \
    X(mi_zalloc)                                                                                   \
    X(mi_calloc)                                                                                   \
    X(mi_mallocn)                                                                                  \
    X(mi_malloc_aligned)                                                                           \
    X(mi_zalloc_aligned)                                                                           \
    X(mi_calloc_aligned)                                                                           \
    X(mi_new)                                                                                      \
    X(mi_new_nothrow)                                                                              \
    X(mi_new_aligned)                                                                              \
    X(mi_new_aligned_nothrow)                                                                      \
    X(mi_new_n)                                                                                    \
    X(mi_realloc)                                                                                  \
    X(mi_reallocf)                                                                                 \
    X(mi_reallocn)                                                                                 \
    X(mi_realloc_aligned)                                                                          \
    X(mi_free)                                                                                     \
    X(mi_free_size)                                                                                \
    X(mi_free_aligned)                                                                             \
    X(mi_free_size_aligned)
#define MT_MI_N 20

/* The rest of its API (alloc_mimalloc_heap.c): mi_heap_*, the aligned-at,
 * zeroing and string variants, mi_heap_destroy. */
#define MT_MI_HEAP_FUNCS(X)                                                                        \
    X(mi_heap_malloc)                                                                              \
    X(mi_heap_zalloc)                                                                              \
    X(mi_heap_calloc)                                                                              \
    X(mi_heap_mallocn)                                                                             \
    X(mi_heap_malloc_small)                                                                        \
    X(mi_heap_malloc_aligned)                                                                      \
    X(mi_heap_malloc_aligned_at)                                                                   \
    X(mi_heap_zalloc_aligned)                                                                      \
    X(mi_heap_zalloc_aligned_at)                                                                   \
    X(mi_heap_calloc_aligned)                                                                      \
    X(mi_heap_calloc_aligned_at)                                                                   \
    X(mi_heap_alloc_new)                                                                           \
    X(mi_heap_alloc_new_n)                                                                         \
    X(mi_heap_strdup)                                                                              \
    X(mi_heap_strndup)                                                                             \
    X(mi_malloc_small)                                                                             \
    X(mi_zalloc_small)                                                                             \
    X(mi_malloc_aligned_at)                                                                        \
    X(mi_zalloc_aligned_at)                                                                        \
    X(mi_calloc_aligned_at)                                                                        \
    X(mi_strdup)                                                                                   \
    X(mi_strndup)                                                                                  \
    X(mi_memalign)                                                                                 \
    X(mi_valloc)                                                                                   \
    X(mi_pvalloc)                                                                                  \
    X(mi_aligned_alloc)                                                                            \
    X(mi_heap_realloc)                                                                             \
    X(mi_heap_reallocn)                                                                            \
    X(mi_heap_reallocf)                                                                            \
    X(mi_heap_realloc_aligned)                                                                     \
    X(mi_heap_realloc_aligned_at)                                                                  \
    X(mi_heap_rezalloc)                                                                            \
    X(mi_heap_recalloc)                                                                            \
    X(mi_heap_rezalloc_aligned)                                                                    \
    X(mi_heap_rezalloc_aligned_at)                                                                 \
    X(mi_heap_recalloc_aligned)                                                                    \
    X(mi_heap_recalloc_aligned_at)                                                                 \
    X(mi_realloc_aligned_at)                                                                       \
    X(mi_rezalloc)                                                                                 \
    X(mi_recalloc)                                                                                 \
    X(mi_rezalloc_aligned)                                                                         \
    X(mi_rezalloc_aligned_at)                                                                      \
    X(mi_recalloc_aligned)                                                                         \
    X(mi_recalloc_aligned_at)                                                                      \
    X(mi_reallocarray)                                                                             \
    X(mi_new_realloc)                                                                              \
    X(mi_new_reallocn)                                                                             \
    X(mi_heap_realpath)                                                                            \
    X(mi_realpath)                                                                                 \
    X(mi_expand)                                                                                   \
    X(mi_posix_memalign)                                                                           \
    X(mi_heap_destroy)
#define MT_MI_HEAP_N 52

/* The mi_* entry points in MT_MI_FUNCS order, for redirecting them
 * (alloc_patch.h). */
extern const mt_patch_entry mt_mi_entries[MT_MI_N];
extern const mt_patch_entry mt_mi_heap_entries[MT_MI_HEAP_N];

/* The hooked mimalloc's mi_heap_visit_blocks and mi_heap_get_backing
 * (NULL: not found), which memtop's mi_heap_destroy calls: a linked-in
 * mimalloc's are not found by name.  By the scan, before it redirects. */
void mt_mi_heap_helpers(void *visit, void *backing);

/* The hooked mimalloc's mi_usable_size (NULL: not found), with which a
 * signal handler's mi_realloc inside memtop may be made apart
 * (hook_nested.h).  By the scan, before it redirects. */
void mt_mi_usable_size_set(void *fn);

#endif
