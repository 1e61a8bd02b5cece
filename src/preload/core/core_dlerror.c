/* core_dlerror.c -- where glibc keeps a thread's pending dl error, for
 * core_dlerror.h's sections that set it aside.
 *
 * glibc 2.34 and later keep it in one initial-exec TLS pointer of libc's,
 * __libc_dlerror_result (NULL: no dl call made or nothing pending), which
 * dlerror.c reads and writes and nothing else.  Found once, by the
 * initialiser (before any program thread can be inside a section): the
 * version must be 2.34 or later, and the loaded modules' dynamic symbol
 * tables (core_dynsym.c) must hold the symbol, in version GLIBC_PRIVATE, as
 * a thread-local object of the size of a pointer; its address is then
 * the module's TLS block for this thread (dl_iterate_phdr's dlpi_tls_data)
 * plus the symbol's value, and its distance from the thread pointer is
 * the same in every thread (libc's TLS block is static).  A glibc that
 * changed the symbol's kind, or another C library, leaves the offset 0
 * and the sections only drain memtop's own errors.
 *
 * The check allocates nothing and makes no dl call that could fail: a
 * failing dlsym makes glibc allocate its error message, through the
 * program's own malloc, and a program with a statically linked mimalloc
 * died when that ran before its allocator was set up (alloc_patch,
 * alloc_mi_static).
 */
#define _GNU_SOURCE
#include "core_dlerror.h"

#include "core_dynsym.h"

#include <gnu/libc-version.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

MT_HIDDEN _Atomic long mt_dlerr_offset;

/* glibc >= 2.34: the pointer exists and means what dlerror.c says. */
static bool glibc_keeps_one_pointer(void)
{
    const char *v = gnu_get_libc_version();
    char *end;
    long major = strtol(v, &end, 10), minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return major == 2 && minor >= 34;
}

/* The first loaded module that defines the pointer as expected. */
static int find_slot(struct dl_phdr_info *info, size_t size, void *arg)
{
    mt_dynsym t;
    if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof info->dlpi_tls_data ||
        !mt_dynsym_read(info, &t))
        return 0;
    mt_dynsym_query q = mt_dynsym_name("__libc_dlerror_result", STT_TLS);
    uint32_t i = mt_dynsym_find(&t, &q);
    if (!i)
        return 0;
    const char *version = mt_dynsym_version(&t, i);
    if (t.sym[i].st_size == sizeof(void *) && info->dlpi_tls_data && version &&
        strcmp(version, "GLIBC_PRIVATE") == 0)
        *(void **)arg = (char *)info->dlpi_tls_data + t.sym[i].st_value;
    return 1; /* the definition dlsym would find: the first one */
}

void mt_dl_error_init(void)
{
    if (!glibc_keeps_one_pointer())
        return;
    void *p = NULL;
    dl_iterate_phdr(find_slot, &p);
    if (!p)
        return;
    long off = (long)((char *)p - (char *)__builtin_thread_pointer());
    atomic_store_explicit(&mt_dlerr_offset, off, memory_order_relaxed);
}
