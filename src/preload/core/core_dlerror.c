/* core_dlerror.c -- where glibc keeps a thread's pending dl error, for
 * core_dlerror.h's sections that set it aside.
 *
 * glibc 2.34 and later keep it in one initial-exec TLS pointer of libc's,
 * __libc_dlerror_result (NULL: no dl call made or nothing pending), which
 * dlerror.c reads and writes and nothing else.  dlvsym returns the calling
 * thread's copy of a TLS symbol: its distance from the thread pointer is
 * the same in every thread (libc's TLS block is static).  Looked up once,
 * by the initialiser (before any program thread can be inside a section);
 * another C library, or one that does not export it, leaves the offset 0
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

void mt_dl_error_init(void)
{
    if (!glibc_keeps_one_pointer())
        return;
    void *p = dlvsym(RTLD_DEFAULT, "__libc_dlerror_result", "GLIBC_PRIVATE");
    if (!p) {
        mt_dl_forget_error();
        return;
    }
    long off = (long)((char *)p - (char *)__builtin_thread_pointer());
    atomic_store_explicit(&mt_dlerr_offset, off, memory_order_relaxed);
}
