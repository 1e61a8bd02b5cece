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

#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MT_EXPORT __attribute__((visibility("default")))
#define MT_HIDDEN __attribute__((visibility("hidden")))
/* Thread-locals of a preloaded library must use the initial-exec model: the
 * general-dynamic model may call __tls_get_addr, which can call malloc and
 * re-enter the hooks (PITFALLS: "TLS can call malloc"). */
#define MT_TLS __thread __attribute__((tls_model("initial-exec")))
#define MT_CACHELINE 64

#define MT_DEFAULT_DEPTH 32u
#define MT_DEFAULT_TEMP_MS 100u
#define MT_DEFAULT_INTERVAL_MS 1000u

#endif
