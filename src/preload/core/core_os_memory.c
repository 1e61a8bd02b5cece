/* core_os_memory.c -- memtop's own memory, straight from mmap.
 *
 * Invariant: memtop's bookkeeping never calls the allocator it hooks.  All
 * of it comes from here, and the total is published as tracker_bytes so
 * users see what memtop itself costs.
 */
#include "core_os_memory.h"

#include "huge_map.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int64_t g_os_bytes;

/* mmap hands out whole pages: that is what a mapping costs, so it is what
 * tracker_bytes counts. */
size_t mt_os_whole_pages(size_t bytes)
{
    size_t page = (size_t)getauxval(AT_PAGESZ); /* a load from the aux vector */
    if (page == 0)
        page = 4096;
    return (bytes + page - 1) / page * page;
}

void *mt_os_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mt_os_account((int64_t)mt_os_whole_pages(bytes));
    return p;
}

void mt_os_free(void *p, size_t bytes)
{
    if (!p)
        return;
    munmap(p, bytes);
    mt_os_account(-(int64_t)mt_os_whole_pages(bytes));
}

void *mt_os_alloc_huge(size_t bytes)
{
    if (bytes < MT_HUGE_BYTES || bytes % MT_HUGE_BYTES)
        return mt_os_alloc(bytes);
    void *p = mt_huge_map(bytes);
    if (p)
        mt_os_account((int64_t)bytes);
    return p;
}

void *mt_os_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void mt_os_account(int64_t delta_bytes)
{
    atomic_fetch_add_explicit(&g_os_bytes, delta_bytes, memory_order_relaxed);
}

uint64_t mt_os_bytes(void)
{
    int64_t v = atomic_load_explicit(&g_os_bytes, memory_order_relaxed);
    return v < 0 ? 0 : (uint64_t)v;
}

long mt_os_read_self(void *dst, uintptr_t src, size_t n)
{
    /* the system calls, not libc's: a program may define its own open */
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/mem", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long got = syscall(SYS_pread64, fd, dst, n, (off_t)src);
    syscall(SYS_close, fd);
    return got;
}
