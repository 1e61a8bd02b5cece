/* core_allocator_figures.h -- what the allocator itself says it holds and
 * uses, for the totals (the publisher) and a recording's TOTALS (the
 * writer); glibc's figures taken at a pace (core_allocator_figures.c). */
#ifndef MT_CORE_ALLOCATOR_FIGURES_H
#define MT_CORE_ALLOCATOR_FIGURES_H

#include <stdint.h>

/* At most 1/MT_MALLINFO_PACE of the time goes to mallinfo2's walks: after
 * a walk that took d, the next one waits MT_MALLINFO_PACE * d. */
#define MT_MALLINFO_PACE 1000u

/* Bytes the allocator holds from the kernel and bytes it reports in use:
 * a hooked jemalloc's resident and allocated bytes, tcmalloc's or
 * mimalloc's as the publisher last asked, glibc's mallinfo2 as of its last
 * walk (arena + mmapped, used + mmapped), else MT_UNKNOWN.  *at_ns: when
 * they were taken (mt_now_precise_ns's clock).  Publisher and writer. */
void mt_allocator_bytes(uint64_t *held, uint64_t *inuse, uint64_t *at_ns);

/* fork child: forgets the parent's walk (its thread may have been in one). */
void mt_allocator_figures_child_reset(void);

#endif
