/* proc_root.c -- opening a path inside another process's root (see
 * proc_root.h). */
#include "proc_root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Length of the "/proc/PID/root" that starts path and is followed by '/',
 * or 0 if path does not start so. */
static int root_prefix(const char *path)
{
    int at = 0;
    if (sscanf(path, "/proc/%*u/root%n", &at) != 0 || at == 0 || path[at] != '/')
        return 0;
    return at;
}

/* openat2 failed with err (ENOSYS, or EPERM from a seccomp filter that
 * knows it not): whether the call itself is refused, tried on the root
 * itself, where nothing else can say EPERM. */
static bool openat2_refused(int dir, int err)
{
    if (err != ENOSYS && err != EPERM)
        return false;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC};
    int fd = (int)syscall(SYS_openat2, dir, ".", &how, sizeof how);
    if (fd >= 0)
        close(fd);
    return fd < 0 && (errno == ENOSYS || errno == EPERM);
}

int mt_open_in_root(const char *path, int flags)
{
    /* openat2 refuses flags that open ignores with O_PATH (O_NONBLOCK...) */
    if (flags & O_PATH)
        flags &= O_PATH | O_NOFOLLOW | O_DIRECTORY;
    flags |= O_CLOEXEC;
    int at = root_prefix(path);
    if (at == 0)
        return open(path, flags);
    char root[32];
    if (at >= (int)sizeof root) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(root, path, (size_t)at);
    root[at] = '\0';
    int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    struct open_how how = {.flags = (unsigned)flags,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd = -1;
    /* EAGAIN: a rename or mount raced the lookup of a ".."; a few tries,
     * not forever (the target's user can keep renaming). */
    for (int tries = 0; tries < 4; tries++) {
        fd = (int)syscall(SYS_openat2, dir, path + at + 1, &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    int saved = fd < 0 && openat2_refused(dir, errno) ? ENOSYS : errno;
    close(dir);
    errno = saved;
    return fd;
}
