/* hook_real_alloc.h -- the allocator memtop interposes on (the "real" one). */
#ifndef MT_REAL_ALLOC_H
#define MT_REAL_ALLOC_H

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
    /* What free's sampled fast path (hook_libc.c) tail-calls: free, or,
     * once mt_real_free_inside ran, a wrapper that runs it inside memtop. */
    void (*free_fast)(void *);
    bool is_glibc; /* the next malloc is glibc's own, so mallinfo2 describes it */
} mt_real_fns;

extern mt_real_fns mt_real;

/* Resolves mt_real with dlsym(RTLD_NEXT).  Returns true when resolved.
 * Calls made while resolution runs (dlsym's own calloc) must be served by
 * the bootstrap arena: callers check the return value.  Every hook asks,
 * so the answer once resolved is inline: one load. */
enum { MT_RESOLVE_NONE, MT_RESOLVE_BUSY, MT_RESOLVE_DONE };
extern _Atomic int mt_resolve_state;
bool mt_real_resolve(void);

/* The real free belongs to an allocator memtop hooks (a shared jemalloc,
 * tcmalloc or mimalloc whose entry points are redirected, or jemalloc's hook
 * API): free's fast path, which counted the free already, must call it inside
 * memtop so that the allocator's hook passes it through.  Called by the
 * allocator scan before tracking is ready (the real free is resolved and
 * scanned at start), so before any thread takes the fast path. */
void mt_real_free_inside(void);
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
extern unsigned char mt_boot_arena[MT_BOOT_ARENA_BYTES];
void *mt_boot_alloc(size_t size, size_t align);
size_t mt_boot_size(const void *p);
static inline bool mt_is_boot_ptr(const void *p)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)mt_boot_arena;
    return a - lo < MT_BOOT_ARENA_BYTES;
}

#endif
