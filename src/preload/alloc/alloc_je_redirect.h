/* alloc_je_redirect.h -- jemalloc's entry points redirected in memory to
 * memtop's hooks (x86-64; alloc_je_redirect.c), for the allocator scan;
 * jemalloc's hook API (alloc_jemalloc.h) is the fallback. */
#ifndef MT_ALLOC_JE_REDIRECT_H
#define MT_ALLOC_JE_REDIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mt_je_redirected {
    MT_JE_NOT_REDIRECTED, /* nothing patched: why says it */
    MT_JE_REDIRECTED,     /* every entry point found is redirected */
    MT_JE_PARTLY,         /* some are (a write refused after others were done): why says which */
} mt_je_redirected;

/* Redirects the entry points of the jemalloc with this prefix in the module
 * loaded at bias from file: P+malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, mallocx, rallocx, xallocx,
 * dallocx, sdallocx, free_sized, free_aligned_sized (those defined) and the
 * C++ operators new and delete the module defines; all or nothing (a
 * function that cannot be moved leaves them all as they were).  Only one
 * jemalloc per process (the hooks have one set of trampolines): a second
 * one is NOT_REDIRECTED.  Under the allocator scan's lock, the thread
 * marked inside memtop; other threads are stopped meanwhile (alloc_patch.h).
 * why (cap bytes) says what was refused. */
mt_je_redirected mt_je_redirect(const char *file, uint64_t bias, const char *prefix, char *why,
                                size_t cap);

/* After a redirect that was complete (MT_JE_REDIRECTED): if the real
 * allocator memtop's hooks call (mt_real) is this jemalloc, the sampled
 * fast paths call its trampolines directly (mt_real_fast_direct) rather
 * than its redirected entries, which would only pass them through.
 * Under the scan's lock, before tracking is ready (like add_entry's
 * mt_real_fast_inside, which it overrides). */
void mt_je_fast_direct(void);

#endif
