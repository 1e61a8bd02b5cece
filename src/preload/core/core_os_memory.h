/* core_os_memory.h -- memtop's own memory, straight from mmap; and this
 * process's memory read with no fault (mt_os_read_self). */
#ifndef MT_OS_MEMORY_H
#define MT_OS_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Maps zeroed, private, read-write memory; NULL on failure.  Counted in
 * mt_os_bytes(). */
void *mt_os_alloc(size_t bytes);

/* bytes rounded up to whole pages: what a mapping of bytes really takes
 * (and what mt_os_alloc counts), so callers can use all of it. */
size_t mt_os_whole_pages(size_t bytes);
void mt_os_free(void *p, size_t bytes);

/* Like mt_os_alloc, but a multiple of 2 MiB is aligned to it and marked
 * MADV_HUGEPAGE (huge_map.h), so that a table probed at random takes a
 * TLB entry per 2 MiB instead of per 4 KiB.  mt_os_free frees it. */
void *mt_os_alloc_huge(size_t bytes);

/* Reserves address space that is backed only when touched (MAP_NORESERVE).
 * Callers report what they actually use with mt_os_account(). */
void *mt_os_reserve(size_t bytes);
void mt_os_account(int64_t delta_bytes);

/* Bytes of memory memtop uses for its own bookkeeping in this process. */
uint64_t mt_os_bytes(void);

/* Copies up to n bytes at address src of this process into dst, with no
 * fault where src is not mapped: bytes copied, or -1 (unmapped, no /proc).
 * Through /proc/thread-self/mem, not process_vm_readv, for which a seccomp
 * filter may kill the process (a hardened service's SystemCallFilter
 * without it); thread-self, not self: a zombie main thread has no memory
 * to read through its pid. */
long mt_os_read_self(void *dst, uintptr_t src, size_t n);

#endif
