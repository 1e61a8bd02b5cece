/* out_file.c -- opening the files memtop writes its output to (see
 * out_file.h).
 *
 * memtop often runs as root, in a directory other users can write to (the
 * export's default directory is the working directory, else $TMPDIR or
 * /tmp).  A name memtop makes up is predictable (pid and time), so another
 * user can plant a symlink or a file under it first, and swap it between a
 * check and an open.  So nothing is checked beforehand: a made-up name is
 * created with O_CREAT|O_EXCL|O_NOFOLLOW (it fails on anything there, a
 * dangling symlink included) and a taken name makes us try the next one.
 * A name the user gave may exist and is then overwritten, but only if the
 * descriptor opened without following a symlink shows (fstat) a regular
 * file with one link owned by our effective user: never another user's
 * file, nor a root file hard-linked into a shared directory.  A character
 * device (/dev/null, a terminal) is written as it is: no other user can
 * make one in a shared directory.
 */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MT_OUT_TRIES 1000

int mt_out_create_fresh(const char *dir, const char *stem, const char *ext, char *buf, size_t n)
{
    for (int k = 1; k < MT_OUT_TRIES; k++) {
        int len = k == 1 ? snprintf(buf, n, "%s/%s%s", dir, stem, ext)
                         : snprintf(buf, n, "%s/%s-%d%s", dir, stem, k, ext);
        if (len < 0 || (size_t)len >= n)
            return -ENAMETOOLONG;
        int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            fchmod(fd, 0600); /* whatever the umask */
            return fd;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* 0, or the -errno that refuses to overwrite what fd shows; *dev: a
 * character device (/dev/null, a terminal), written as it is. */
static int check_named(int fd, bool *dev)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    *dev = S_ISCHR(st.st_mode);
    if (*dev)
        return 0;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    if (st.st_uid != geteuid())
        return -EPERM;
    if (st.st_nlink > 1)
        return -EMLINK;
    return 0;
}

int mt_out_open_named(const char *path)
{
    /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
     * blocking; no O_TRUNC before the checks. */
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 && (errno == ELOOP || errno == EACCES) && lstat(path, &st) == 0 &&
        S_ISLNK(st.st_mode))
        return -ELOOP; /* O_NOFOLLOW's ELOOP; some kernels say EACCES */
    if (fd < 0)
        return -errno;
    bool dev = false;
    int rc = check_named(fd, &dev);
    if (rc == 0 && ((!dev && ftruncate(fd, 0) != 0) || fcntl(fd, F_SETFL, 0) != 0))
        rc = -errno;
    if (rc != 0) {
        close(fd);
        return rc;
    }
    return fd;
}

const char *mt_out_strerror(int err)
{
    switch (err) {
    case ELOOP:
        return "it is a symbolic link (memtop does not follow one)";
    case EINVAL:
    case ENXIO:
        return "not a regular file";
    case EMLINK:
        return "it has other hard links (memtop does not overwrite it)";
    case EPERM:
        return "it belongs to another user (memtop does not overwrite it)";
    default:
        return strerror(err);
    }
}
