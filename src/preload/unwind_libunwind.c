/* unwind_libunwind.c -- libunwind, behind memtop's own walker.
 *
 * libunwind unwinds what the own walker (unwind.c) leaves to it, and
 * everything with MEMTOP_UNWIND=libunwind.  unw_backtrace() takes
 * libunwind's fast path, which caches the unwind rule of each instruction
 * address; the per-thread cache policy keeps it free of the global lock
 * (PITFALLS: libunwind).  We ask for just a few frames more than the
 * depth: the ones of memtop's own code, which are recognised by address
 * (the library's mapped range), so the skip is right whatever the compiler
 * inlined.
 *
 * We call libunwind through pointers looked up in libunwind's own object
 * (dlopen RTLD_NOLOAD + dlsym on its handle), not through our PLT: a
 * program that defines its own unw_backtrace (or links another unwinder
 * exporting the same names) would otherwise interpose on our calls.
 * Debian's libunwind.a is not PIC, so it cannot be linked in privately.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "unwind_libunwind.h"

#include "shm_layout.h"
#include "state.h"
#include "thread_state.h"

#include <dlfcn.h>
#include <libunwind.h>

/* memtop's frames in libunwind's buffer: the hook, the tracker,
 * backtrace.c's (more in check mode), and a recording's detour. */
#define OWN_FRAMES_MAX 8

typedef int (*backtrace_fn)(void **, int);
typedef void (*flush_fn)(unw_addr_space_t, unw_word_t, unw_word_t);
static backtrace_fn g_unw_backtrace;
static flush_fn g_unw_flush_cache;
static unw_addr_space_t *g_unw_space;
/* The step-by-step API, for walks without the per-thread frame cache
 * (walk_step_by_step). */
static struct {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
} g_unw_step;

/* libunwind's own definitions, whatever else the process defines: dlsym on
 * libunwind's handle searches that object (and its dependencies) only. */
bool mt_libunwind_bind(void)
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
    g_unw_flush_cache = (flush_fn)dlsym(h, "_Ux86_64_flush_cache");
    g_unw_space = space;
    *(void **)&g_unw_step.getcontext = dlsym(h, "_Ux86_64_getcontext");
    *(void **)&g_unw_step.init_local = dlsym(h, "_ULx86_64_init_local");
    *(void **)&g_unw_step.step = dlsym(h, "_ULx86_64_step");
    *(void **)&g_unw_step.get_reg = dlsym(h, "_ULx86_64_get_reg");
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

void mt_libunwind_flush(void)
{
    /* libunwind's per-thread rule caches check this generation. */
    if (g_unw_flush_cache && g_unw_space)
        g_unw_flush_cache(*g_unw_space, 0, 0);
}

/* unw_backtrace without its per-thread frame cache: libunwind's own slow
 * path, an unw_step loop. */
static int step_backtrace(void **buf, int want)
{
    unw_context_t uc;
    unw_cursor_t c;
    unw_word_t ip;
    int n = 0;
    if (g_unw_step.getcontext(&uc) < 0 || g_unw_step.init_local(&c, &uc) < 0)
        return 0;
    while (n < want && g_unw_step.step(&c) > 0 && g_unw_step.get_reg(&c, UNW_REG_IP, &ip) >= 0)
        buf[n++] = (void *)(uintptr_t)ip;
    return n;
}

/* Whether this libunwind walk should go step by step.  unw_backtrace
 * gives each thread a 256 KiB frame cache, which libunwind 1.6 frees only
 * in the last round of the thread's key destructors (its destructor
 * re-arms itself): a cache first made during those rounds is never freed.
 * Before the own walker, a thread's first allocation created it; now its
 * first libunwind walk may well come from a key destructor (the thread's
 * first allocation, or a signal handler's, at exit).  So, behind the own
 * walker, a thread's first STEP_WALKS walks skip the cache (for a cold
 * thread that costs nothing: unw_backtrace would step to fill its cache),
 * and so do walks after memtop's own key destructor ran.  Threads that
 * keep needing libunwind get the cached fast path.  MEMTOP_UNWIND=libunwind
 * keeps the behaviour from before the own walker. */
#define STEP_WALKS 32u
static MT_TLS unsigned tls_step_walks;

static bool walk_step_by_step(void)
{
    if (!g_unw_step.getcontext || !g_unw_step.init_local || !g_unw_step.step ||
        !g_unw_step.get_reg || mt_g.cfg.unwind == MT_UNWIND_LIBUNWIND)
        return false;
    if (tls_step_walks < STEP_WALKS) {
        tls_step_walks++;
        return true;
    }
    return mt_tls_exiting;
}

uint32_t mt_libunwind_frames(uint64_t *frames, uint32_t depth, bool *truncated)
{
    void *buf[MT_MAX_DEPTH + OWN_FRAMES_MAX + 1];
    int want = (int)depth + OWN_FRAMES_MAX + 1;
    int n = walk_step_by_step() ? step_backtrace(buf, want) : g_unw_backtrace(buf, want);
    int i = 0;
    while (i < n && (uintptr_t)buf[i] >= mt_g.self_lo && (uintptr_t)buf[i] < mt_g.self_hi)
        i++;
    uint32_t m = 0;
    for (; i < n && m < depth; i++)
        frames[m++] = (uint64_t)(uintptr_t)buf[i] - 1;
    *truncated = i < n || n == want;
    return m;
}
