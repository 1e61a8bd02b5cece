/* big_table.h -- zeroed memory for the viewer's large hash tables (the
 * reader's block table, the replay's live groups), on transparent huge
 * pages when the system gives them on request.
 *
 * Why: those tables are probed at random, once or twice per event read;
 * at a few megabytes, every probe on 4 KiB pages also misses the TLB
 * (about a third of a pass's time on random frees).  Tables under 2 MiB
 * come from calloc as before; larger ones from mmap, aligned to 2 MiB and
 * marked MADV_HUGEPAGE (a hint: without THP they are ordinary pages). */
#ifndef MEMTOP_BIG_TABLE_H
#define MEMTOP_BIG_TABLE_H

#include <stddef.h>

/* n zeroed elements of size bytes; NULL when out of memory or on overflow. */
void *mt_big_calloc(size_t n, size_t size);

/* Give back what mt_big_calloc(n, size) returned (NULL: nothing). */
void mt_big_free(void *p, size_t n, size_t size);

#endif
