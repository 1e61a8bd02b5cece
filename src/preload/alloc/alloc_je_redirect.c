/* alloc_je_redirect.c -- jemalloc's entry points, redirected in memory
 * (x86-64).
 *
 * jemalloc's hook API (alloc_jemalloc.c) sees every path into jemalloc,
 * but installing a hook turns jemalloc's fast path off in every thread,
 * and the hooks run deep inside jemalloc: each backtrace must walk and
 * trim jemalloc's frames.  Redirecting its entry points as tcmalloc's are
 * (alloc_patch.c) keeps its fast path and starts the walk at the
 * program's frame: each entry (P+malloc ... P+sdallocx, whatever the
 * prefix P, and the C++ operators the module defines) jumps to a hook
 * here, which records the block by the rules of hook_libc.c and calls the
 * trampoline, jemalloc's own code.  So this is tried first; the hook API
 * is the fallback (alloc_scan.c) when this refuses: not x86-64, an entry
 * that cannot be moved or has no symbol size, a thread that cannot be
 * stopped, or a second jemalloc in the process (one set of trampolines).
 *
 * Counted once: a redirected entry reached while the thread is inside
 * memtop passes straight through.  That covers jemalloc's entries calling
 * each other (operator delete jumps to free, operator new[] to operator
 * new, the aligned operators call aligned_alloc and sdallocx), memtop's
 * malloc hook calling a shared libjemalloc's malloc, and memtop's own
 * allocations.  Accounting as with the hook API: sizes as asked, rallocx
 * like realloc, xallocx (in place) frees the old block and allocates the
 * new one at the call site, at the size asked or the smaller size it got
 * (the hook API's expand event, which jemalloc raises whether or not the
 * size changed); dallocx, sdallocx, free_sized, free_aligned_sized and
 * the sized operators free whatever size they pass.  nallocx, sallocx and
 * malloc_usable_size are not touched.
 */
#define _GNU_SOURCE
#include "alloc_je_redirect.h"

#include "alloc_elf.h"
#include "alloc_patch.h"
#include "hook_direct.h"
#include "hook_real_alloc.h"

#include <stdio.h>
#include <string.h>

/* X(name, params, args, size_expr): allocating entries. */
#define JE_ALLOCS(X)                                                                               \
    X(malloc, (size_t n), (n), n)                                                                  \
    X(calloc, (size_t c, size_t n), (c, n), c *n)                                                  \
    X(aligned_alloc, (size_t a, size_t n), (a, n), n)                                              \
    X(memalign, (size_t a, size_t n), (a, n), n)                                                   \
    X(valloc, (size_t n), (n), n)                                                                  \
    X(pvalloc, (size_t n), (n), n)                                                                 \
    X(mallocx, (size_t n, int f), (n, f), n)                                                       \
    X(_Znwm, (size_t n), (n), n)                                                                   \
    X(_Znam, (size_t n), (n), n)                                                                   \
    X(_ZnwmRKSt9nothrow_t, (size_t n, const void *nt), (n, nt), n)                                 \
    X(_ZnamRKSt9nothrow_t, (size_t n, const void *nt), (n, nt), n)                                 \
    X(_ZnwmSt11align_val_t, (size_t n, size_t a), (n, a), n)                                       \
    X(_ZnamSt11align_val_t, (size_t n, size_t a), (n, a), n)                                       \
    X(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *nt), (n, a, nt), n)     \
    X(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *nt), (n, a, nt), n)

/* X(name, params, args): freeing entries of the block p. */
#define JE_FREES(X)                                                                                \
    X(free, (void *p), (p))                                                                        \
    X(dallocx, (void *p, int f), (p, f))                                                           \
    X(sdallocx, (void *p, size_t n, int f), (p, n, f))                                             \
    X(free_sized, (void *p, size_t n), (p, n))                                                     \
    X(free_aligned_sized, (void *p, size_t a, size_t n), (p, a, n))                                \
    X(_ZdlPv, (void *p), (p))                                                                      \
    X(_ZdaPv, (void *p), (p))                                                                      \
    X(_ZdlPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt))                                    \
    X(_ZdaPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt))                                    \
    X(_ZdlPvm, (void *p, size_t n), (p, n))                                                        \
    X(_ZdaPvm, (void *p, size_t n), (p, n))                                                        \
    X(_ZdlPvSt11align_val_t, (void *p, size_t a), (p, a))                                          \
    X(_ZdaPvSt11align_val_t, (void *p, size_t a), (p, a))                                          \
    X(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const void *nt), (p, a, nt))        \
    X(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const void *nt), (p, a, nt))        \
    X(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t a), (p, n, a))                            \
    X(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t a), (p, n, a))

#define JE_ENUM(name, ...) JE_##name,
enum {
    JE_ALLOCS(JE_ENUM) JE_FREES(JE_ENUM) JE_realloc,
    JE_rallocx,
    JE_posix_memalign,
    JE_xallocx,
    JE_COUNT
};

/* The trampolines: jemalloc's code for each entry, stored (release) before
 * the entry is redirected; written once, by the one redirect. */
static _Atomic(void *) orig[JE_COUNT];
static bool g_used; /* a jemalloc was redirected (under the scan's lock) */

#define JE_ALLOC_HOOK(name, params, args, size_expr)                                               \
    HOOK_ALLOC_ENTRY(h_##name, orig[JE_##name], params, args, size_expr)
/* jemalloc's free, for a signal handler's free that waits in the queue
 * (hook_nested.h; NULL until its entry is redirected). */
#define JE_PLAIN_FREE ((void (*)(void *))atomic_load_explicit(&orig[JE_free], memory_order_acquire))
#define JE_FREE_HOOK(name, params, args)                                                           \
    HOOK_FREE_ENTRY(h_##name, orig[JE_##name], params, args, JE_PLAIN_FREE)
JE_ALLOCS(JE_ALLOC_HOOK)
JE_FREES(JE_FREE_HOOK)

/* jemalloc's plain functions for a signal handler's realloc inside memtop
 * whose old block must wait in the queue (hook_nested.h): malloc's and
 * free's trampolines and P+malloc_usable_size (not redirected), found with
 * the entries.  (Without them the old block's free was counted nowhere,
 * its record left live: a missed free at best.)  rallocx keeps flags: never
 * made apart. */
static _Atomic(void *) g_usable_size;

static const mt_nested_fns *je_nested_fns(mt_nested_fns *f)
{
    *f = (mt_nested_fns){
        (void *(*)(size_t))atomic_load_explicit(&orig[JE_malloc], memory_order_acquire),
        (size_t(*)(void *))atomic_load_explicit(&g_usable_size, memory_order_acquire),
        JE_PLAIN_FREE};
    return f;
}

HOOK_REALLOC_ENTRY(h_realloc, orig[JE_realloc], (void *p, size_t n), (p, n), n,
                   je_nested_fns(&(mt_nested_fns){0}))
HOOK_REALLOC_ENTRY(h_rallocx, orig[JE_rallocx], (void *p, size_t n, int f), (p, n, f), n, NULL)
HOOK_POSIX_MEMALIGN_ENTRY(h_posix_memalign, orig[JE_posix_memalign])

/* xallocx resizes p in place and returns its usable size: the old block is
 * freed (never temporary) and the new one allocated here, at the size
 * asked or less if it could not grow that far. */
static size_t h_xallocx(void *p, size_t size, size_t extra, int flags)
{
    size_t (*real)(void *, size_t, size_t, int) =
        (size_t(*)(void *, size_t, size_t, int))atomic_load_explicit(&orig[JE_xallocx],
                                                                     memory_order_acquire);
    mt_thread *t = p ? hook_enter() : NULL;
    int in = mt_tls_in_hook;
    size_t got;
    if (!t && p && in && mt_nested_entry_is_program(in, __builtin_return_address(0))) {
        /* a signal handler's, inside memtop: its record's free accounted
         * after the call, the block untracked (hook_nested.h; it once kept
         * its record and the size it had) */
        MT_REAL_CALL(got = real(p, size, extra, flags));
        mt_nested_resized(p, in);
        return got;
    }
    if (!t)
        return real(p, size, extra, flags);
    HOOK_REAL(got = real(p, size, extra, flags));
    int saved = errno;
    mt_block b;
    if (mt_take(p, &b))
        mt_charge_free(t, p, &b, false);
    mt_on_alloc(t, p, got < size ? got : size, HOOK_FRAME());
    hook_leave(t);
    errno = saved;
    return got;
}

#define JE_ENTRY(name, ...) [JE_##name] = {#name, (void *)h_##name, &orig[JE_##name]},
static const mt_patch_entry entries[JE_COUNT] = {JE_ALLOCS(JE_ENTRY) JE_FREES(JE_ENTRY) JE_ENTRY(
    realloc) JE_ENTRY(rallocx) JE_ENTRY(posix_memalign) JE_ENTRY(xallocx)};

/* Where each entry lies in the module (0: not defined). */
typedef struct je_found {
    const char *prefix;
    size_t plen;
    uint64_t addr[JE_COUNT], size[JE_COUNT];
    uint64_t usable; /* P+malloc_usable_size, 0: not defined */
} je_found;

/* P+name for the C functions; the C++ operators by their own name, which
 * no prefix changes (a prefixed jemalloc built with them defines them
 * unprefixed; in a module without them they may be libstdc++'s, which
 * call malloc and free: redirected too, still counted once). */
static void on_sym(void *arg, const mt_elf_sym *s)
{
    je_found *f = arg;
    const char *name = s->name;
    if (!s->global)
        return;
    if (!(name[0] == '_' && name[1] == 'Z')) {
        if (strncmp(name, f->prefix, f->plen) != 0)
            return;
        name += f->plen;
    }
    int i = mt_patch_entry_index(entries, JE_COUNT, name);
    if (i >= 0) {
        f->addr[i] = s->addr;
        f->size[i] = s->size;
    } else if (strcmp(name, "malloc_usable_size") == 0) {
        f->usable = s->addr;
    }
}

/* The entry whose refusal explains the others' (they say "another entry"). */
static size_t refused(const mt_patch *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!p[k].done && !strstr(p[k].why, "another entry"))
            return k;
    return 0;
}

static je_found g_found; /* the last redirect's, under the scan's lock */

/* This jemalloc's code for entry i if mt_real's function fn is that
 * entry, else NULL. */
static void *direct(int i, void *fn)
{
    if (!g_found.addr[i] || (uintptr_t)fn != (uintptr_t)g_found.addr[i])
        return NULL;
    return atomic_load_explicit(&orig[i], memory_order_acquire);
}

void mt_je_fast_direct(void)
{
    void *m = direct(JE_malloc, (void *)mt_real.malloc);
    void *c = direct(JE_calloc, (void *)mt_real.calloc);
    void *r = direct(JE_realloc, (void *)mt_real.realloc);
    void *f = direct(JE_free, (void *)mt_real.free);
    if (g_used && m && c && r && f)
        mt_real_fast_direct((void *(*)(size_t))m, (void *(*)(size_t, size_t))c,
                            (void *(*)(void *, size_t))r, (void (*)(void *))f);
}

mt_je_redirected mt_je_redirect(const char *file, uint64_t bias, const char *prefix, char *why,
                                size_t cap)
{
    je_found *f = &g_found;
    static mt_patch patch[JE_COUNT]; /* likewise */
    int at[JE_COUNT];
    if (g_used) {
        snprintf(why, cap, "another jemalloc is redirected already");
        return MT_JE_NOT_REDIRECTED;
    }
    memset(f, 0, sizeof *f);
    f->prefix = prefix;
    f->plen = strlen(prefix);
    if (!mt_elf_each_func(file, bias, on_sym, f) || !f->addr[JE_malloc] || !f->addr[JE_free]) {
        snprintf(why, cap, "its malloc and free were not found");
        return MT_JE_NOT_REDIRECTED;
    }
    if (f->usable) /* before a redirected entry can run */
        atomic_store_explicit(&g_usable_size, (void *)(uintptr_t)f->usable, memory_order_release);
    size_t n = mt_patch_entries(entries, JE_COUNT, f->addr, f->size, patch, at);
    bool ok = mt_patch_all(patch, n, true);
    size_t bad = refused(patch, n);
    if (!ok || !patch[bad].done) /* a refusal, or a write refused after others */
        snprintf(why, cap, "%s%.32s: %.80s", f->prefix, entries[at[bad]].name, patch[bad].why);
    for (size_t k = 0; k < n; k++)
        if (patch[k].done) {
            g_used = true; /* its slots hold trampolines for good */
            return patch[bad].done ? MT_JE_REDIRECTED : MT_JE_PARTLY;
        }
    return MT_JE_NOT_REDIRECTED;
}
