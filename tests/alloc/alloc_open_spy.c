/* alloc_open_spy.c -- a preload placed before libmemtop.so that reports
 * every open() (and readlink()) of a file whose name (after the last '/')
 * begins with one of the prefixes in MT_SPY_OPEN (colon-separated; unset:
 * "libc.so.6") on stderr ("spy-open PATH", "spy-readlink PATH").
 *
 * The allocator scan (alloc_scan.c) opens module files with open(); the
 * loader opens libraries with its own internal call, which this does not
 * see.  Tests alloc_scan_skips_libc and alloc_scan_skips_own_deps: the
 * scan must not read glibc's file, the loader's, nor those of memtop's own
 * dependencies (libunwind, liblzma), and still reads the executable's
 * (without naming it: no readlink of /proc/self/exe).
 * The real open is the raw system call: no dlsym, no allocation. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Whether base begins with one of the colon-separated prefixes of list. */
static bool listed(const char *base, const char *list)
{
    while (*list) {
        size_t n = strcspn(list, ":");
        if (n && strncmp(base, list, n) == 0)
            return true;
        list += n + (list[n] == ':');
    }
    return false;
}

static void report(const char *tag, const char *path)
{
    const char *base = strrchr(path, '/');
    const char *list = getenv("MT_SPY_OPEN");
    if (!listed(base ? base + 1 : path, list ? list : "libc.so.6"))
        return;
    (void)!write(2, tag, strlen(tag));
    (void)!write(2, path, strlen(path));
    (void)!write(2, "\n", 1);
}

ssize_t readlink(const char *path, char *buf, size_t cap)
{
    report("spy-readlink ", path);
    return (ssize_t)syscall(SYS_readlinkat, AT_FDCWD, path, buf, cap);
}

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    report("spy-open ", path);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
