/* backtrace.c -- stack capture with libunwind.
 *
 * unw_backtrace() takes libunwind's fast path, which caches the unwind
 * rule of each instruction address; the per-thread cache policy keeps it
 * free of the global lock (PITFALLS: libunwind).  We ask for just a few
 * frames more than the depth: the ones of memtop's own code, which are
 * recognised by address (the library's mapped range), so the skip is right
 * whatever the compiler inlined.
 *
 * We call libunwind through pointers looked up in libunwind's own object
 * (dlopen RTLD_NOLOAD + dlsym on its handle), not through our PLT: a
 * program that defines its own unw_backtrace (or links another unwinder
 * exporting the same names) would otherwise interpose on our calls.
 * Debian's libunwind.a is not PIC, so it cannot be linked in privately.
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

typedef int (*backtrace_fn)(void **, int);
static backtrace_fn g_unw_backtrace;

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

/* libunwind's own definitions, whatever else the process defines: dlsym on
 * libunwind's handle searches that object (and its dependencies) only. */
static bool bind_libunwind(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return false;
    g_unw_backtrace = (backtrace_fn)dlsym(h, "unw_backtrace");
    int (*set_policy)(unw_addr_space_t, unw_caching_policy_t) =
        (int (*)(unw_addr_space_t, unw_caching_policy_t))dlsym(h, "_ULx86_64_set_caching_policy");
    unw_addr_space_t *space = (unw_addr_space_t *)dlsym(h, "_ULx86_64_local_addr_space");
    if (set_policy && space)
        set_policy(*space, UNW_CACHE_PER_THREAD);
    /* One backtrace now makes libunwind create its per-thread cache key
     * while the process is young, so it gets a low index like ours.  A key
     * at index >= 32 lives in a second-level block that glibc allocates on
     * first use: if a thread's first backtrace ran inside the program's own
     * pthread_setspecific(key >= 32) -> calloc, libunwind's nested
     * setspecific would install a block the outer call then overwrites,
     * and its 256 KiB cache would leak with every thread. */
    void *probe[4];
    if (g_unw_backtrace)
        g_unw_backtrace(probe, 4);
    /* The handle stays open: libmemtop.so depends on libunwind anyway. */
    return g_unw_backtrace != NULL;
}

bool mt_backtrace_init(void)
{
    struct self_range r = {(uintptr_t)&mt_backtrace, 0, 0};
    dl_iterate_phdr(find_self, &r);
    mt_g.self_lo = r.lo;
    mt_g.self_hi = r.hi;
    return r.lo != 0 && bind_libunwind();
}

uint32_t mt_backtrace(uint64_t *frames, uint32_t depth, bool *truncated)
{
    void *buf[MT_MAX_DEPTH + OWN_FRAMES_MAX + 1];
    int want = (int)depth + OWN_FRAMES_MAX + 1;
    int n = g_unw_backtrace(buf, want);
    int i = 0;
    while (i < n && (uintptr_t)buf[i] >= mt_g.self_lo && (uintptr_t)buf[i] < mt_g.self_hi)
        i++;
    uint32_t m = 0;
    for (; i < n && m < depth; i++)
        frames[m++] = (uint64_t)(uintptr_t)buf[i] - 1;
    *truncated = i < n || n == want;
    return m;
}
