/* backtrace.c -- stack capture with libunwind.
 *
 * unw_backtrace() takes libunwind's fast path, which caches the unwind
 * rule of each instruction address; the per-thread cache policy keeps it
 * free of the global lock (PITFALLS: libunwind).  We ask for just a few
 * frames more than the depth: the ones of memtop's own code, which are
 * recognised by address (the library's mapped range), so the skip is right
 * whatever the compiler inlined.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "backtrace.h"

#include "shm_layout.h"
#include "state.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <string.h>

#define OWN_FRAMES_MAX 4

struct self_range {
    uintptr_t probe, lo, hi;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct self_range *r = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (r->probe >= lo && r->probe < hi) {
            r->lo = lo;
            r->hi = hi;
            return 1;
        }
    }
    return 0;
}

bool mt_backtrace_init(void)
{
    struct self_range r = {(uintptr_t)&mt_backtrace, 0, 0};
    dl_iterate_phdr(find_self, &r);
    mt_g.self_lo = r.lo;
    mt_g.self_hi = r.hi;
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    return r.lo != 0;
}

uint32_t mt_backtrace(uint64_t *frames, uint32_t depth, bool *truncated)
{
    void *buf[MT_MAX_DEPTH + OWN_FRAMES_MAX + 1];
    int want = (int)depth + OWN_FRAMES_MAX + 1;
    int n = unw_backtrace(buf, want);
    int i = 0;
    while (i < n && (uintptr_t)buf[i] >= mt_g.self_lo && (uintptr_t)buf[i] < mt_g.self_hi)
        i++;
    uint32_t m = 0;
    for (; i < n && m < depth; i++)
        frames[m++] = (uint64_t)(uintptr_t)buf[i] - 1;
    *truncated = i < n || n == want;
    return m;
}
