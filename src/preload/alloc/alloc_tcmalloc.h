/* alloc_tcmalloc.h -- tcmalloc's (gperftools) entry points memtop hooks
 * by redirecting them (alloc_tcmalloc.c), for the allocator scan. */
#ifndef MT_HOOKS_TCMALLOC_H
#define MT_HOOKS_TCMALLOC_H

#include "alloc_patch.h"

#include <stdint.h>

#define MT_TC_N 18

/* The index of a hooked tc_* function by name, -1 if name is none. */
int mt_tc_index(const char *name);
const char *mt_tc_name(int i);

/* Fills *p to redirect tcmalloc's function i (at addr, size bytes) to
 * memtop's hook for it, which then calls the trampoline. */
void mt_tc_patch(int i, uint64_t addr, uint64_t size, mt_patch *p);

#endif
