/* unwind_libunwind.c -- libunwind, behind memtop's own walker.
 *
 * libunwind unwinds what the own walker (unwind_walk.c) leaves to it, and
 * everything with MEMTOP_UNWIND=libunwind.  unw_backtrace() takes
 * libunwind's fast path, which keeps a per-thread cache of the frames it
 * walked (Gtrace.c, its own, whatever the caching policy); unw_step, used
 * on that cache's misses and by step-by-step walks, runs without a cache
 * (UNW_CACHE_NONE, see mt_libunwind_bind).  We ask for just a few frames
 * more than the depth: the ones of memtop's own code, recognised by address
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

#include "core_log.h"
#include "core_spinlock.h"
#include "shm_layout.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "core_dlerror.h"
#include "core_nocancel.h"
#include "core_loader_gate.h"

#include <dlfcn.h>
#include <libunwind.h>

/* memtop's frames in libunwind's buffer: the hook, the tracker,
 * unwind_backtrace.c's (more in check mode), and a recording's detour. */
#define OWN_FRAMES_MAX 8

typedef int (*backtrace_fn)(void **, int);
typedef void (*flush_fn)(unw_addr_space_t, unw_word_t, unw_word_t);
static backtrace_fn g_unw_backtrace;
static flush_fn g_unw_flush_cache;
static unw_addr_space_t *g_unw_space;
static int (*g_unw_set_policy)(unw_addr_space_t, unw_caching_policy_t);
/* The step-by-step API, for walks without the per-thread frame cache
 * (walk_step_by_step). */
static struct {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
} g_unw_step;

/* Bumped by every flush.  unw_backtrace's per-thread frame cache
 * (Gtrace.c) is not invalidated by unw_flush_cache: a thread whose cache
 * may hold frames from before the last flush walks step by step from then
 * on (fast_cache_stale). */
static _Atomic uint64_t g_flush_gen;
/* 1 + g_flush_gen when the thread first used unw_backtrace; 0: never. */
static MT_TLS uint64_t tls_fast_since;

/* Whether this thread's unw_backtrace frame cache may predate the last
 * flush.  The first call on a thread says no and marks the thread as a
 * user of the cache (the caller then takes the fast path).  A flush during
 * that first fast walk makes the next call say yes: cautious, never
 * wrong. */
static bool fast_cache_stale(void)
{
    uint64_t gen = atomic_load_explicit(&g_flush_gen, memory_order_acquire);
    if (tls_fast_since == 0) {
        tls_fast_since = gen + 1;
        return false;
    }
    return tls_fast_since != gen + 1;
}

/* libunwind's own definitions, whatever else the process defines: dlsym on
 * libunwind's handle searches that object (and its dependencies) only. */
bool mt_libunwind_bind(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) {
        mt_dl_forget_error();
        return false;
    }
    g_unw_backtrace = (backtrace_fn)dlsym(h, "unw_backtrace");
    *(void **)&g_unw_set_policy = dlsym(h, "_ULx86_64_set_caching_policy");
    g_unw_space = (unw_addr_space_t *)dlsym(h, "_ULx86_64_local_addr_space");
    /* No cache for unw_step's rules (set by policy_ready, before the
     * first libunwind walk).  UNW_CACHE_PER_THREAD would be the
     * fast choice, but a libunwind built without TLS support (Debian's
     * 1.6.2) silently turns it into UNW_CACHE_GLOBAL: one process-wide
     * mutex, taken with signals blocked on every unw_step, that memtop
     * cannot hold across fork (it is libunwind's, not exported).  A child
     * forked while another thread was inside unw_step would find it
     * locked and hang at its first libunwind walk.  UNW_CACHE_NONE takes
     * no lock: each step parses the frame's CFI again, which costs little
     * behind the own walker (libunwind walks are rare, and unw_backtrace's
     * frame cache still serves a thread's repeated fallbacks). */
    g_unw_flush_cache = (flush_fn)dlsym(h, "_Ux86_64_flush_cache");
    *(void **)&g_unw_step.getcontext = dlsym(h, "_Ux86_64_getcontext");
    *(void **)&g_unw_step.init_local = dlsym(h, "_ULx86_64_init_local");
    *(void **)&g_unw_step.step = dlsym(h, "_ULx86_64_step");
    *(void **)&g_unw_step.get_reg = dlsym(h, "_ULx86_64_get_reg");
    /* The handle stays open: libmemtop.so depends on libunwind anyway. */
    return g_unw_backtrace != NULL;
}

const void *mt_libunwind_entry(void)
{
    return (const void *)(uintptr_t)g_unw_backtrace;
}

/* Setting the policy runs libunwind's own initialisation (tdep_init: its
 * memory pools, a pipe to validate addresses with; ~50 us of CPU), which
 * most processes, short ones above all, never need: behind the own walker
 * few ever walk with libunwind.  So it is set before the process's first
 * libunwind walk (policy_ready), not at start.  0: not yet, 1: being set,
 * 2: set. */
static _Atomic int g_policy;
static MT_TLS bool tls_setting_policy;

/* Whether libunwind may walk now: sets the policy first, once.  Called
 * inside the loader gate (a fork waits for it), before every walk, so no thread
 * is inside unw_step while the policy changes (libunwind reads it again
 * to release its global cache's lock: a change in between would leave
 * that lock held).  Other threads wait for the first; false only in a
 * signal handler that interrupted this thread's own setting: no libunwind
 * walk then (as when the stack has no room: unwind_backtrace.c). */
static bool policy_ready(void)
{
    if (atomic_load_explicit(&g_policy, memory_order_acquire) == 2)
        return true;
    int idle = 0;
    if (atomic_compare_exchange_strong_explicit(&g_policy, &idle, 1, memory_order_acquire,
                                                memory_order_acquire)) {
        tls_setting_policy = true;
        if (g_unw_set_policy && g_unw_space)
            g_unw_set_policy(*g_unw_space, UNW_CACHE_NONE);
        tls_setting_policy = false;
        atomic_store_explicit(&g_policy, 2, memory_order_release);
        return true;
    }
    if (tls_setting_policy)
        return false;
    for (unsigned spins = 0; atomic_load_explicit(&g_policy, memory_order_acquire) != 2; spins++)
        mt_spin_wait(spins); /* naps too: the setter may have a lower priority */
    return true;
}

/* Whether mt_libunwind_probe ran: until then every libunwind walk goes
 * step by step (walk_step_by_step), which never creates the key. */
static _Atomic bool g_probed;

void mt_libunwind_flush(void)
{
    /* unw_flush_cache clears what libunwind caches per address space (the
     * step rules: none under UNW_CACHE_NONE, and its unwind-table
     * lookups); unw_backtrace's per-thread frame caches ignore it, hence
     * the generation. */
    if (g_unw_flush_cache && g_unw_space &&
        atomic_load_explicit(&g_policy, memory_order_acquire) == 2) /* else nothing cached */
        g_unw_flush_cache(*g_unw_space, 0, 0);
    atomic_fetch_add_explicit(&g_flush_gen, 1, memory_order_release);
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

/* Whether this libunwind walk should go step by step (unw_step with no
 * cache: slower, but nothing it uses can be stale or held by another
 * thread).  Always in check mode: the reference must not depend on
 * a frame cache.  Always on a thread whose frame cache may be stale
 * (fast_cache_stale).  Otherwise: unw_backtrace
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
    if (!g_unw_step.getcontext || !g_unw_step.init_local || !g_unw_step.step || !g_unw_step.get_reg)
        return false;
    if (!atomic_load_explicit(&g_probed, memory_order_acquire))
        return true; /* no unw_backtrace before its key exists (mt_libunwind_probe) */
    int mode = mt_g.cfg.unwind;
    if (mode == MT_UNWIND_CHECK)
        return true;
    if (mode != MT_UNWIND_LIBUNWIND) {
        if (tls_step_walks < STEP_WALKS) {
            tls_step_walks++;
            return true;
        }
        if (mt_tls_exiting)
            return true;
    }
    return fast_cache_stale();
}

/* fork.  libunwind looks unwind tables up with dl_iterate_phdr, which
 * holds the loader's dl_load_write_lock, and glibc (2.36) does not reset
 * that lock in a fork child: a child forked while another thread was
 * walking would hang at its own first dl_iterate_phdr (its publisher's
 * module scan, or its first libunwind walk).  So a walk is a section of
 * the loader gate (core_loader_gate.c): fork waits, before it takes
 * memtop's locks, until no thread is inside one, and walks that would
 * start meanwhile wait for the fork to finish.  Walkers hold no memtop
 * lock. */
void mt_libunwind_fork_child(void)
{
    int setting = 1; /* by a parent's thread, past the gate's bound: again in the child */
    atomic_compare_exchange_strong_explicit(&g_policy, &setting, 0, memory_order_relaxed,
                                            memory_order_relaxed);
}

bool mt_libunwind_wants_probe(void)
{
    return g_unw_backtrace && !atomic_load_explicit(&g_probed, memory_order_relaxed);
}

void mt_libunwind_probe(void)
{
    /* One unw_backtrace makes libunwind create its per-thread cache key
     * (and this thread's 256 KiB cache, filled with empty entries: most of
     * the ~130 us this takes), on a thread whose own allocations pass
     * through untracked.  A key at index >= 32 lives in a second-level
     * block that glibc allocates on first use: if a thread's first
     * unw_backtrace ran inside the program's own pthread_setspecific(key
     * >= 32) -> calloc, libunwind's nested setspecific would install a
     * block the outer call then overwrites, and its cache would leak with
     * every thread.  So no thread takes unw_backtrace's path before the key
     * exists.  This runs once the process has lived MEMTOP_START_MS, on a
     * thread the publisher starts for it and joins (publish_thread.c
     * probe_libunwind: the cache goes with that thread), no longer at
     * tracking start: a short process does not pay for it, and the few
     * libunwind walks before it (behind the own walker) step. */
    if (!g_unw_backtrace || atomic_load_explicit(&g_probed, memory_order_relaxed))
        return;
    void *probe[4];
    mt_loader_enter(); /* a fork meanwhile must not copy a loader lock libunwind holds */
    if (policy_ready() && !fast_cache_stale())
        g_unw_backtrace(probe, 4);
    mt_loader_leave();
    atomic_store_explicit(&g_probed, true, memory_order_release); /* the key */
    mt_log(MT_LOG_DEBUG, "libunwind probed (its per-thread cache key exists)");
}

/* A hook's walk, on the program's thread: libunwind may read (its memory
 * validation's pipe), msync or open files in it, cancellation points, and
 * a cancel acted upon there would leave the walk counted for ever (every
 * fork would then wait the gate's 1 s bound): with the thread's cancellation
 * disabled (core_nocancel.h). */
uint32_t mt_libunwind_frames(uint64_t *frames, uint32_t depth, bool *truncated)
{
    void *buf[MT_MAX_DEPTH + OWN_FRAMES_MAX + 1];
    int want = (int)depth + OWN_FRAMES_MAX + 1;
    int cancel = mt_nocancel_begin();
    mt_loader_enter();
    int n = !policy_ready()       ? 0
            : walk_step_by_step() ? step_backtrace(buf, want)
                                  : g_unw_backtrace(buf, want);
    mt_loader_leave();
    mt_nocancel_end(cancel);
    int i = 0;
    while (i < n && (uintptr_t)buf[i] >= mt_g.self_lo && (uintptr_t)buf[i] < mt_g.self_hi)
        i++;
    uint32_t m = 0;
    for (; i < n && m < depth; i++)
        frames[m++] = (uint64_t)(uintptr_t)buf[i] - 1;
    *truncated = i < n || n == want;
    return m;
}
