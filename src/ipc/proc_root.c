/* proc_root.c -- opening a path inside another process's root (see
 * proc_root.h). */
#include "proc_root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* Without openat2: rest walked from dir one name at a time, each
 * directory opened O_PATH | O_NOFOLLOW | O_DIRECTORY and the last name
 * with O_NOFOLLOW, so that no link and no ".." is followed at all (ELOOP):
 * stricter than RESOLVE_IN_ROOT, which follows a link inside the root.
 * Enough for the segment and the modules, whose paths are the kernel's
 * own names from the target's maps; a debug file the symbolizer looks
 * for by build-id (.build-id/xx/yyy.debug, a link on Fedora and RHEL) is
 * not found this way.  Takes dir. */
static int walk_in_root(int dir, const char *rest, int flags)
{
    char name[256];
    for (;;) {
        while (*rest == '/')
            rest++;
        size_t len = strcspn(rest, "/");
        if (len >= sizeof name || (len == 2 && rest[0] == '.' && rest[1] == '.')) {
            close(dir);
            errno = len >= sizeof name ? ENAMETOOLONG : ELOOP;
            return -1;
        }
        memcpy(name, len ? rest : ".", len ? len : 1);
        name[len ? len : 1] = '\0';
        rest += len;
        bool last = !rest[strspn(rest, "/")];
        int how = !last ? O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC
                        : flags | O_NOFOLLOW | (*rest ? O_DIRECTORY : 0); /* "name/" */
        int next = openat(dir, name, how);
        struct stat st;
        int err = errno;
        /* ENOTDIR from O_DIRECTORY: a link, or a file, where a directory
         * should be (a directory again by now: a link that was swapped
         * back); O_PATH opens a link itself instead of saying ELOOP */
        if (next < 0 && err == ENOTDIR)
            err = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode) &&
                          !S_ISDIR(st.st_mode)
                      ? ENOTDIR
                      : ELOOP;
        if (next >= 0 && last && (how & O_PATH) && fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
            close(next);
            next = -1;
            err = ELOOP;
        }
        close(dir);
        if (last || next < 0) {
            errno = err;
            return next;
        }
        dir = next;
    }
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
    if (fd < 0 && openat2_refused(dir, errno))
        return walk_in_root(dir, path + at + 1, flags);
    int saved = errno;
    close(dir);
    errno = saved;
    return fd;
}
