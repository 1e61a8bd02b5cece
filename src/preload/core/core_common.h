/* core_common.h -- small shared definitions for libmemtop.so.
 *
 * Branch hints, the export/visibility attributes the hooks need, and the
 * fixed limits of the preload library.  Every file of src/preload includes
 * this first.
 */
#ifndef MT_COMMON_H
#define MT_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MT_EXPORT __attribute__((visibility("default")))
#define MT_HIDDEN __attribute__((visibility("hidden")))
/* Thread-locals of a preloaded library must use the initial-exec model: the
 * general-dynamic model may call __tls_get_addr, which can call malloc and
 * re-enter the hooks (docs/pitfalls.md, "Thread-local storage can allocate"). */
#define MT_TLS __thread __attribute__((tls_model("initial-exec")))
#define MT_CACHELINE 64
/* A hint field (CONCURRENCY.md, "Atomics style"): plain, written under its
 * lock, read without it with __atomic_load_n(..., __ATOMIC_RELAXED).  Its
 * writes are relaxed atomic stores, so that read is no data race; a
 * relaxed store of an aligned word is a plain store on x86-64 and arm64. */
#define MT_HINT_SET(field, value) __atomic_store_n(&(field), (value), __ATOMIC_RELAXED)
/* A fork child's reset of its parent's state: stores value only if the
 * field differs (plain fields; MT_RESET_ATOMIC for atomics, relaxed).  A
 * page the child does not write is not copied: a shell's fork children
 * that exec at once paid a copy-on-write fault for each page of state a
 * reset rewrote with the value it had (docs/performance.md, "Sixth round"). */
#define MT_RESET(field, value)                                                                     \
    do {                                                                                           \
        if ((field) != (value))                                                                    \
            (field) = (value);                                                                     \
    } while (0)
/* The same for a whole struct: zeroed only if some byte of it is set. */
static inline void mt_reset_zero(void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) {
            memset(p, 0, n);
            return;
        }
}
#define MT_RESET_ATOMIC(field, value)                                                              \
    do {                                                                                           \
        if (atomic_load_explicit(&(field), memory_order_relaxed) != (value))                       \
            atomic_store_explicit(&(field), (value), memory_order_relaxed);                        \
    } while (0)

#define MT_DEFAULT_DEPTH 32u
#define MT_DEFAULT_TEMP_MS 100u
#define MT_DEFAULT_INTERVAL_MS 1000u
#define MT_DEFAULT_START_MS 100u

#endif
