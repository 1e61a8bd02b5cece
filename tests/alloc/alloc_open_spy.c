/* alloc_open_spy.c -- a preload placed before libmemtop.so that reports
 * every open() of a file named libc.so.6 on stderr ("spy-open PATH").
 *
 * The allocator scan (alloc_scan.c) opens module files with open(); the
 * loader opens libc.so.6 with its own internal call, which this does not
 * see.  Test alloc_scan_skips_libc: the scan must not read glibc's file.
 * The real open is the raw system call: no dlsym, no allocation. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    const char *base = strrchr(path, '/');
    if (strcmp(base ? base + 1 : path, "libc.so.6") == 0) {
        static const char tag[] = "spy-open ";
        (void)!write(2, tag, sizeof tag - 1);
        (void)!write(2, path, strlen(path));
        (void)!write(2, "\n", 1);
    }
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
