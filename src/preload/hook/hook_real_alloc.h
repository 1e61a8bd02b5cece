/* hook_real_alloc.h -- the allocator memtop interposes on (the "real" one). */
#ifndef MT_REAL_ALLOC_H
#define MT_REAL_ALLOC_H

#include "core_common.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mt_real_fns {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    void (*exit_)(int);
    /* What the sampled fast paths (hook_libc.c) call: glibc's functions
     * themselves; another allocator's wrapped to run inside memtop
     * (mt_tls_in_hook set: mt_real_fast_inside, and at resolution for
     * malloc, calloc and realloc); a redirected jemalloc's trampolines
     * (mt_real_fast_direct).  free's is a tail call. */
    void *(*malloc_fast)(size_t);
    void *(*calloc_fast)(size_t, size_t);
    void *(*realloc_fast)(void *, size_t);
    void (*free_fast)(void *);
    bool is_glibc; /* the next malloc is glibc's own, so mallinfo2 describes it */
} mt_real_fns;

/* Hidden (declared so, not only defined so under -fvisibility=hidden):
 * the fast paths then call through it with one rip-relative instruction
 * rather than a GOT load and an indirect call. */
extern MT_HIDDEN mt_real_fns mt_real;

/* Whether path names glibc's libc (libc.so.6).  glibc is told by its
 * module, not by __libc_malloc: an allocator that exports __libc_malloc as
 * its malloc (Debian's libtcmalloc and libmimalloc do) is not glibc, and
 * its realloc may call malloc by name, so memtop must call it inside
 * memtop (mt_real_fast_inside). */
bool mt_path_is_libc(const char *path);

/* Resolves mt_real with dlsym(RTLD_NEXT).  Returns true when resolved.
 * Calls made while resolution runs (dlsym's own calloc) must be served by
 * the bootstrap arena: callers check the return value.  Every hook asks,
 * so the answer once resolved is inline: one load. */
enum { MT_RESOLVE_NONE, MT_RESOLVE_BUSY, MT_RESOLVE_DONE };
extern MT_HIDDEN _Atomic int mt_resolve_state;
bool mt_real_resolve(void);

/* The real free belongs to an allocator memtop hooks (a shared jemalloc,
 * tcmalloc or mimalloc whose entry points are redirected, or jemalloc's hook
 * API): the fast paths, which count the call themselves, must call the real
 * functions inside memtop so that the allocator's hook passes them through
 * (a real allocator that is glibc's or memtop does not hook is called
 * directly: no flag to set and clear).  Called by the allocator scan before
 * tracking is ready (the real free is resolved and scanned at start), so
 * before any thread takes a fast path. */
void mt_real_fast_inside(void);

/* The fast paths call these instead: the real allocator's own code behind
 * its redirected entry points (a redirected jemalloc's trampolines,
 * alloc_je_redirect.c), which a hook of memtop's no longer sits in front
 * of, so that a fast call skips the redirected entry's pass-through.  Same
 * timing as mt_real_fast_inside, after it. */
void mt_real_fast_direct(void *(*malloc_)(size_t), void *(*calloc_)(size_t, size_t),
                         void *(*realloc_)(void *, size_t), void (*free_)(void *));
static inline bool mt_real_ready(void)
{
    if (__builtin_expect(
            atomic_load_explicit(&mt_resolve_state, memory_order_acquire) == MT_RESOLVE_DONE, 1))
        return true;
    return mt_real_resolve();
}

/* Bootstrap arena: a small static bump allocator for the calls made before
 * the real allocator is known.  Its blocks are never freed. */
#define MT_BOOT_ARENA_BYTES (256u * 1024u)
extern MT_HIDDEN unsigned char mt_boot_arena[MT_BOOT_ARENA_BYTES];
void *mt_boot_alloc(size_t size, size_t align);
size_t mt_boot_size(const void *p);
/* Sampled mode: pins (core_sample.h mt_sfilter_pin) the filter slots of
 * every boot block handed out so far; mt_boot_alloc pins those made after
 * the filter exists.  So free's fast path never sees a boot block.  Called
 * once the filter is set up, before tracking is ready. */
void mt_boot_pin_all(void);
static inline bool mt_is_boot_ptr(const void *p)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)mt_boot_arena;
    return a - lo < MT_BOOT_ARENA_BYTES;
}

#endif
