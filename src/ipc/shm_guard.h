/* shm_guard.h -- touching a mapped segment that another process may shrink.
 *
 * A segment is a file its owner can ftruncate at any moment; a load from a
 * page of the mapping that now lies beyond the end of the file raises
 * SIGBUS.  Checking the size first does not help (the file can shrink right
 * after the check), so every access to the mapping goes through here: it
 * runs under a SIGBUS handler that, for a fault inside the guarded range on
 * the faulting thread, jumps back (siglongjmp) and turns the fault into
 * MT_E_TRUNCATED "truncated segment: the file shrank while being read".
 *
 * Why a handler and not pread or a private copy: the control channel needs
 * the shared mapping itself (a CAS on the lock, release/acquire on the
 * sequence words), and so do the seqlock's sequence loads; pread gives no
 * atomicity or order for them, and copying the ~1 GiB sparse file at each
 * refresh is out of the question.  A guarded access costs a sigsetjmp that
 * saves no signal mask and a thread-local store: nothing on the fast path
 * makes a system call.
 *
 * The handler is process-wide, the armed state is per thread (the viewer
 * reads from more than one thread).  Faults that are not ours (another
 * address, another thread, a SIGBUS sent with kill) go to the action that
 * was installed before, or get the default action (core dump) as if memtop
 * had no handler.  Code under a guard may be abandoned between any two
 * instructions: it only copies between the mapping and memory its caller
 * owns (no malloc, no locks, no I/O). */
#ifndef MEMTOP_SHM_GUARD_H
#define MEMTOP_SHM_GUARD_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include "shm_error.h"
#include "shm_segment.h"

typedef void mt_guard_fn(void *ctx);

/* Makes the guard's handler the SIGBUS action if it is not (thread-safe,
 * idempotent); the action it replaces gets every fault that is not ours.
 * The guards call it themselves; call it again after installing another
 * SIGBUS handler (the viewer's terminal restorer does). */
void mt_guard_install(void);

/* The signal mask for a helper thread that must not take the viewer's
 * asynchronous signals: every signal but the synchronous faults (SIGBUS,
 * SIGSEGV, SIGFPE, SIGILL).  A fault whose signal is blocked kills the
 * process whatever its handler, so a guard would never run there. */
void mt_guard_thread_mask(sigset_t *set);

/* Runs fn(ctx).  A fault on [base, base + bytes) while it runs abandons fn
 * and returns MT_E_TRUNCATED (message in err, which may be NULL). */
mt_errc mt_guard_run(const void *base, uint64_t bytes, mt_guard_fn *fn, void *ctx, mt_err *err);

/* memcpy(dst, src, n), src inside [base, base + bytes). */
mt_errc mt_guard_copy(const void *base, uint64_t bytes, void *dst, const void *src, size_t n,
                      mt_err *err);

/* Acquire loads of an aligned word inside [base, base + bytes). */
mt_errc mt_guard_load64(const void *base, uint64_t bytes, const uint64_t *p, uint64_t *out,
                        mt_err *err);
mt_errc mt_guard_load32(const void *base, uint64_t bytes, const uint32_t *p, uint32_t *out,
                        mt_err *err);

/* The same on a segment's whole mapping. */
static inline mt_errc mt_segment_guard(const mt_segment *seg, mt_guard_fn *fn, void *ctx,
                                       mt_err *err)
{
    return mt_guard_run(seg->base, seg->map_bytes, fn, ctx, err);
}

static inline mt_errc mt_segment_copy(const mt_segment *seg, void *dst, const void *src, size_t n,
                                      mt_err *err)
{
    return mt_guard_copy(seg->base, seg->map_bytes, dst, src, n, err);
}

static inline mt_errc mt_segment_load64(const mt_segment *seg, const uint64_t *p, uint64_t *out,
                                        mt_err *err)
{
    return mt_guard_load64(seg->base, seg->map_bytes, p, out, err);
}

static inline mt_errc mt_segment_load32(const mt_segment *seg, const uint32_t *p, uint32_t *out,
                                        mt_err *err)
{
    return mt_guard_load32(seg->base, seg->map_bytes, p, out, err);
}

#endif
