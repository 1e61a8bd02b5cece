/* proc_root.h -- opening a path inside another process's root.
 *
 * A target in a container is reached through /proc/PID/root: its segment
 * as "/proc/PID/root/dev/shm/memtop-1", its executable and libraries the
 * same way.  Every name after ".../root" belongs to the target's user, who
 * can make any directory on the way a symlink ("/dev/shm" -> "/etc").  The
 * kernel resolves an absolute link or ".." met there against the *viewer's*
 * root, so a plain open() would leave the container for the viewer's own
 * files (often root's).  O_NOFOLLOW guards only the last name. */
#ifndef MEMTOP_PROC_ROOT_H
#define MEMTOP_PROC_ROOT_H

/* open(path, flags | O_CLOEXEC).  A path "/proc/PID/root/REST" is resolved
 * inside that root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): a
 * link or ".." planted in REST stays inside the target's root.  Without
 * openat2 (Linux before 5.6, or a seccomp filter that refuses it with
 * ENOSYS or EPERM) REST is walked one name at a time and no link or ".."
 * in it is followed at all: -1, errno ELOOP where one is met.  With
 * O_PATH only O_NOFOLLOW and O_DIRECTORY are kept (openat2 rejects the
 * flags open ignores then).  flags must not hold O_CREAT (no mode is
 * passed).  -1 with errno on error. */
int mt_open_in_root(const char *path, int flags);

#endif
