/* huge_map.h -- an anonymous mapping aligned to 2 MiB and marked
 * MADV_HUGEPAGE (a hint: without THP, ordinary pages).
 *
 * Why: the tables probed at random once per event -- the viewer's block
 * table and live groups (big_table.c), the recording writer's frame
 * context (src/preload/record/record_blocks.c) -- miss the TLB on nearly
 * every probe on 4 KiB pages.  Header-only, straight from mmap, so that
 * libmemtop.so (which never calls the allocator it hooks) and the viewer
 * share it. */
#ifndef MEMTOP_HUGE_MAP_H
#define MEMTOP_HUGE_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define MT_HUGE_BYTES ((size_t)2 << 20)

/* len bytes (a multiple of MT_HUGE_BYTES), zeroed, aligned to
 * MT_HUGE_BYTES; NULL when mmap fails.  munmap(p, len) gives them back. */
static inline void *mt_huge_map(size_t len)
{
    /* One huge page more than needed, then the unaligned ends given back. */
    char *raw =
        mmap(NULL, len + MT_HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + MT_HUGE_BYTES - 1) & ~(uintptr_t)(MT_HUGE_BYTES - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + MT_HUGE_BYTES > p)
        munmap(p + len, (size_t)(raw + MT_HUGE_BYTES - p));
    madvise(p, len, MADV_HUGEPAGE);
    return p;
}

#endif
