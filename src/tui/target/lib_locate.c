/* lib_locate.c -- where is libmemtop.so (see lib_locate.h)?
 *
 * Build tree: build/bin/memtop and build/lib/libmemtop.so.  Installed:
 * MEMTOP_INSTALL_LIBDIR (absolute, from CMake), or the same place relative
 * to memtop's own directory (MEMTOP_REL_LIBDIR) when the install tree was
 * moved. */
#include "lib_locate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MEMTOP_INSTALL_LIBDIR
#define MEMTOP_INSTALL_LIBDIR "/usr/local/lib/memtop"
#endif
#ifndef MEMTOP_REL_LIBDIR
#define MEMTOP_REL_LIBDIR "../lib/memtop"
#endif

#define LIB_NAME "libmemtop.so"

/* Whether the file at path begins as an ELF shared object of this
 * machine's class: the loader ignores anything else in LD_PRELOAD with a
 * line on PROG's stderr, and PROG runs untracked. */
static bool shared_object(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    bool ok = fd >= 0 && read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh &&
              memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
              eh.e_type == ET_DYN;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Resolve path; 0 if it is a readable shared object LD_PRELOAD can carry. */
static int usable(const char *path, char *out, size_t n, char *err, size_t errn)
{
    char real[PATH_MAX];
    if (!realpath(path, real) || access(real, R_OK) != 0) {
        snprintf(err, errn, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!shared_object(real)) {
        snprintf(err, errn, "%s: not a 64-bit ELF shared library", real);
        return -2;
    }
    if (strpbrk(real, " :\t\n")) {
        snprintf(err, errn, "%s: LD_PRELOAD cannot carry a path with spaces or colons", real);
        return -2;
    }
    if (strlen(real) >= n) {
        snprintf(err, errn, "%s: path too long", real);
        return -2;
    }
    strcpy(out, real);
    return 0;
}

static int exe_dir(char *dir, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", dir, n - 1);
    if (len <= 0)
        return -1;
    dir[len] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

int mt_locate_lib(char *out, size_t n, char *err, size_t errn)
{
    const char *env = getenv("MEMTOP_LIBRARY");
    if (env && *env) {
        char why[PATH_MAX + 64];
        if (usable(env, out, n, why, sizeof why) == 0)
            return 0;
        snprintf(err, errn, "MEMTOP_LIBRARY: %s", why);
        return -1;
    }
    char dir[PATH_MAX], cand[3][PATH_MAX + 64], why[PATH_MAX + 64];
    int have_dir = exe_dir(dir, sizeof dir) == 0;
    snprintf(cand[0], sizeof cand[0], "%s/../lib/%s", have_dir ? dir : ".", LIB_NAME);
    snprintf(cand[1], sizeof cand[1], "%s/%s/%s", have_dir ? dir : ".", MEMTOP_REL_LIBDIR,
             LIB_NAME);
    snprintf(cand[2], sizeof cand[2], "%s/%s", MEMTOP_INSTALL_LIBDIR, LIB_NAME);
    for (int i = have_dir ? 0 : 2; i < 3; i++) {
        int rc = usable(cand[i], out, n, why, sizeof why);
        if (rc == 0)
            return 0;
        if (rc == -2) {
            snprintf(err, errn, "%s", why);
            return -1;
        }
    }
    snprintf(err, errn, "cannot find %s (looked in %s/../lib and %s); set MEMTOP_LIBRARY", LIB_NAME,
             have_dir ? dir : "?", MEMTOP_INSTALL_LIBDIR);
    return -1;
}
