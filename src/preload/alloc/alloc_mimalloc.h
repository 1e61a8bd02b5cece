/* alloc_mimalloc.h -- the mi_* functions memtop hooks (alloc_mimalloc.c),
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

/* The index of a hooked mi_* function by name, -1 if name is none. */
/* The mi_* entry points in MT_MI_FUNCS order, for redirecting them
 * (alloc_patch.h). */
extern const mt_patch_entry mt_mi_entries[MT_MI_N];

#endif
