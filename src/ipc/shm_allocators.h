/* shm_allocators.h -- the viewer's copy of the allocators the target found
 * (header.allocators, see shm_layout.h), validated, and how to say what
 * they mean for the data's exactness. */
#ifndef MEMTOP_SHM_ALLOCATORS_H
#define MEMTOP_SHM_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>

#include "shm_segment.h"

/* Copies the list out under its seqlock.  out->seq == 0: the target did
 * not publish one (built before this area existed), nothing is known.
 * MT_E_BUSY if the target was writing it at every try; MT_E_CORRUPT for a
 * count or kind out of range or an unterminated string.  Flag bits this
 * reader does not know are cleared, control characters in the strings
 * replaced (mt_allocators_known). */
mt_errc mt_segment_allocators(const mt_segment *seg, mt_shm_allocators *out, mt_err *err);

/* Validates a list copied from elsewhere (a recording): the same checks. */
mt_errc mt_allocators_check(const mt_shm_allocators *a, mt_err *err);
/* Clears the flag bits this reader does not know and makes the strings
 * printable (control characters become '?'), after the check. */
void mt_allocators_known(mt_shm_allocators *a);

/* The allocators' notes as one line, "statically linked jemalloc
 * (_rjem_) in x not hooked; ...", or "" when nothing unseen was found (or
 * nothing is known). */
void mt_allocators_inexact_text(const mt_shm_allocators *a, char *out, size_t cap);

/* True if the list says that some allocations or frees are unseen. */
static inline bool mt_allocators_inexact(const mt_shm_allocators *a)
{
    return a->inexact != 0;
}

/* The allocator whose own figures the snapshot's allocator_bytes are (the
 * first with MT_ALLOC_STATS), or NULL (glibc's, or none known). */
const mt_shm_allocator *mt_allocators_main(const mt_shm_allocators *a);

/* "jemalloc 5.3.0 (static)" */
void mt_allocator_name(const mt_shm_allocator *e, char *out, size_t cap);

/* "jemalloc", "mimalloc", ... for an MT_ALLOC_KIND_*. */
const char *mt_allocator_kind_name(unsigned kind);

/* How memtop hooks the allocator of entry e: "redirect" (its entry points
 * redirected in memory), "hook-api" (jemalloc's hook API), "interposition"
 * (by name, through the PLT); NULL when it does not. */
const char *mt_allocator_how(const mt_shm_allocator *e);

#endif
