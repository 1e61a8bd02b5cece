/* alloc_tcmalloc.h -- tcmalloc's (gperftools) entry points memtop hooks
 * by redirecting them (alloc_tcmalloc.c), for the allocator scan. */
#ifndef MT_HOOKS_TCMALLOC_H
#define MT_HOOKS_TCMALLOC_H

#include "alloc_patch.h"

#include <stdint.h>

#define MT_TC_N 18

/* The index of a hooked tc_* function by name, -1 if name is none. */
/* The tc_* entry points, for redirecting them (alloc_patch.h). */
extern const mt_patch_entry mt_tc_entries[MT_TC_N];

/* tcmalloc's tc_malloc_size (NULL: not found), for a signal handler's
 * realloc made apart (alloc_tcmalloc.c); set by the scan before the
 * entries are redirected. */
void mt_tc_usable_size_set(void *fn);

#endif
