/* record_zstd_lib.c -- libzstd, loaded when the first recording begins.
 *
 * Only recordings compress, and most processes never record: libmemtop.so
 * does not depend on libzstd (loading it cost every preloaded process,
 * short ones included, about 50 us: docs/performance.md "Process start
 * and exit").  mt_recw_begin loads it with dlopen before it takes the
 * session's lock, so the loader's lock is never taken under a memtop
 * lock: a thread inside dlopen may allocate and reach our hooks.  The
 * callers of mt_recw_begin run with the thread marked inside memtop, so
 * the loader's own allocations pass through untracked.  The functions are
 * looked up in libzstd's own handle (dlsym(handle)), so a program that
 * defines the same names does not interpose on them.  A process without
 * libzstd gets one warning and no recording (the status says why).
 */
#define _GNU_SOURCE
#include "record_zstd_lib.h"
#include "core_dlerror.h"

#include "core_clock.h"
#include "core_log.h"
#include "core_spinlock.h"

#include <dlfcn.h>
#include <stdatomic.h>

#define CLAIM_WAIT_NS 1000000000ull

mt_zstd_api mt_zstd;
/* Set (release) once every pointer of mt_zstd is; a failed load sets
 * g_failed so that the warning is given once. */
static _Atomic bool g_loaded, g_claimed, g_failed;

static bool lookup(void *h, mt_zstd_api *z)
{
    *(void **)&z->create_cctx = dlsym(h, "ZSTD_createCCtx_advanced");
    *(void **)&z->free_cctx = dlsym(h, "ZSTD_freeCCtx");
    *(void **)&z->cctx_reset = dlsym(h, "ZSTD_CCtx_reset");
    *(void **)&z->set_parameter = dlsym(h, "ZSTD_CCtx_setParameter");
    *(void **)&z->compress_stream2 = dlsym(h, "ZSTD_compressStream2");
    *(void **)&z->out_size = dlsym(h, "ZSTD_CStreamOutSize");
    *(void **)&z->is_error = dlsym(h, "ZSTD_isError");
    *(void **)&z->error_name = dlsym(h, "ZSTD_getErrorName");
    return z->create_cctx && z->free_cctx && z->cctx_reset && z->set_parameter &&
           z->compress_stream2 && z->out_size && z->is_error && z->error_name;
}

bool mt_zstd_load(void)
{
    if (atomic_load_explicit(&g_loaded, memory_order_acquire))
        return true;
    if (atomic_load_explicit(&g_failed, memory_order_relaxed))
        return false;
    /* Two first recordings at once (the constructor's and a viewer's)
     * both load (dlopen counts references); the first to claim mt_zstd
     * fills it, the other waits the few stores that takes -- bounded: in a
     * fork child the claimer may have been another thread of the parent,
     * caught between its two stores (then this start fails). */
    mt_zstd_api z;
    void *h = dlopen(MT_ZSTD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        mt_dl_forget_error();
    if (h && lookup(h, &z)) { /* h stays open */
        if (!atomic_exchange_explicit(&g_claimed, true, memory_order_relaxed)) {
            mt_zstd = z;
            atomic_store_explicit(&g_loaded, true, memory_order_release); /* mt_zstd */
        }
        uint64_t until = mt_mono_raw_ns(CLOCK_MONOTONIC) + CLAIM_WAIT_NS;
        for (unsigned spins = 0; !atomic_load_explicit(&g_loaded, memory_order_acquire);) {
            if (mt_mono_raw_ns(CLOCK_MONOTONIC) > until)
                return false;
            mt_spin_wait(spins++); /* naps: the claimer may be of lower priority */
        }
        return true;
    }
    if (!atomic_exchange_explicit(&g_failed, true, memory_order_relaxed))
        mt_log(MT_LOG_WARN, "recording: cannot load %s (%s): recordings are not available",
               MT_ZSTD_SONAME, h ? "a function is missing" : "not installed");
    if (h)
        dlclose(h);
    return false;
}
