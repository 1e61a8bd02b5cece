/* core_dlerror.c -- where glibc keeps a thread's pending dl error, for
 * core_dlerror.h's sections that set it aside.
 *
 * glibc 2.34 and later keep it in one initial-exec TLS pointer of libc's,
 * __libc_dlerror_result (NULL: no dl call made or nothing pending), which
 * dlerror.c reads and writes and nothing else.  dlvsym returns the calling
 * thread's copy of a TLS symbol: its distance from the thread pointer is
 * the same in every thread (libc's TLS block is static).  Looked up once,
 * by the initialiser (before any program thread can be inside a section);
 * another C library, one that does not export it, or one whose pointer
 * does not behave as that (checked once: slot_behaves) leaves the offset 0
 * and the sections only drain memtop's own errors.
 */
#define _GNU_SOURCE
#include "core_dlerror.h"

#include <gnu/libc-version.h>
#include <stdlib.h>

MT_HIDDEN _Atomic long mt_dlerr_offset;

/* glibc >= 2.34: the pointer exists and means what dlerror.c says. */
static bool glibc_keeps_one_pointer(void)
{
    const char *v = gnu_get_libc_version();
    char *end;
    long major = strtol(v, &end, 10), minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return major == 2 && minor >= 34;
}

/* The slot is glibc's pointer as dlerror.c uses it: a failed dlsym fills
 * it, and mt_dl_forget_error's two dlerror calls empty it again.  A later
 * glibc that kept the error elsewhere fails this, instead of memtop
 * writing into what it no longer knows. */
static bool slot_behaves(void **slot)
{
    void *saved = *slot;
    *slot = NULL;
    (void)dlsym(RTLD_DEFAULT, "memtop_dlerror_probe_no_such_symbol");
    bool filled = *slot != NULL;
    mt_dl_forget_error();
    bool emptied = *slot == NULL;
    *slot = saved;
    return filled && emptied;
}

void mt_dl_error_init(void)
{
    if (!glibc_keeps_one_pointer())
        return;
    void *p = dlvsym(RTLD_DEFAULT, "__libc_dlerror_result", "GLIBC_PRIVATE");
    if (!p) {
        mt_dl_forget_error();
        return;
    }
    if (!slot_behaves(p))
        return;
    long off = (long)((char *)p - (char *)__builtin_thread_pointer());
    atomic_store_explicit(&mt_dlerr_offset, off, memory_order_relaxed);
}
