/* real_alloc.h -- the allocator memtop interposes on (the "real" one). */
#ifndef MT_REAL_ALLOC_H
#define MT_REAL_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

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
    bool is_glibc; /* the next malloc is glibc's own, so mallinfo2 describes it */
} mt_real_fns;

extern mt_real_fns mt_real;

/* Resolves mt_real with dlsym(RTLD_NEXT).  Returns true when resolved.
 * Calls made while resolution runs (dlsym's own calloc) must be served by
 * the bootstrap arena: callers check the return value. */
bool mt_real_ready(void);

/* Bootstrap arena: a small static bump allocator for the calls made before
 * the real allocator is known.  Its blocks are never freed. */
void *mt_boot_alloc(size_t size, size_t align);
bool mt_is_boot_ptr(const void *p);
size_t mt_boot_size(const void *p);

#endif
