/* shm_lock.h -- is a segment file a running target's, or a leftover?
 *
 * A target holds a shared flock on its segment for as long as it maps it
 * (docs/shm-protocol.md, "Held while live"), so an exclusive try tells the
 * live segment of a process that this caller may not see (another PID
 * namespace sharing the directory, as the containers of one pod share
 * /dev/shm) from the leftover of a dead one.  Whoever replaces or removes
 * a leftover does so holding that exclusive lock, so that two of them never
 * both act on one file.  Header-only, system calls only: libmemtop.so (in
 * the target: nothing here blocks or allocates) and the viewer (--clean)
 * share it. */
#ifndef MEMTOP_SHM_LOCK_H
#define MEMTOP_SHM_LOCK_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens name (relative to dfd) and takes an exclusive flock on it without
 * waiting.  Returns the descriptor that holds the lock (close it to let
 * go): the file is a regular file no running process holds.  Else -1, with
 * *busy true when a running process holds it, false when it is gone, not
 * a regular file, or cannot be opened.  Never blocks: O_NONBLOCK opens a
 * planted FIFO at once, O_NOFOLLOW refuses a link, LOCK_NB. */
static inline int mt_shm_lock_leftover(int dfd, const char *name, bool *busy)
{
    *busy = false;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        *busy = errno == EWOULDBLOCK;
    }
    close(fd);
    return -1;
}

/* Whether a and b are one file. */
static inline bool mt_same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

#endif
