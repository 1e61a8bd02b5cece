/* out_file.c -- opening the files memtop writes its output to (see
 * out_file.h).
 *
 * memtop often runs as root, in a directory other users can write to (the
 * export's default directory is the working directory, else $TMPDIR or
 * /tmp).  A name memtop makes up is predictable (pid and time), so another
 * user can plant a symlink or a file under it first, and swap it between a
 * check and an open.  So nothing is checked beforehand: a made-up name is
 * taken only where nothing is (O_CREAT|O_EXCL|O_NOFOLLOW, or a rename
 * that replaces nothing: both fail on anything there, a dangling symlink
 * included) and a taken name makes us try the next one.
 * A name the user gave may exist and is then overwritten, but only if the
 * descriptor opened without following a symlink shows (fstat) a regular
 * file with one link owned by our effective user: never another user's
 * file, nor a root file hard-linked into a shared directory.  A character
 * device (/dev/null, a terminal) is written as it is: no other user can
 * make one in a shared directory.
 *
 * An export is written whole or not at all: into a temporary file beside
 * its name (.memtop-XXXXXX.tmp, random, O_CREAT|O_EXCL|O_NOFOLLOW, 0600),
 * renamed into place once written, removed if the writing fails, so a
 * full disk leaves neither a cut file nor an empty one, and an older file
 * under that name as it was.  A made-up name is taken by a rename that
 * replaces nothing (RENAME_NOREPLACE, else link()) once the export is
 * whole; a name the user gave is checked by the rules above, on a descriptor opened without
 * following a symlink, before the temporary file is made and again just before the rename (which
 * replaces the name, never writes through it).
 * One exception to whole-or-nothing: where the directory refuses us the
 * temporary file (EACCES, EPERM: a user's own file in a directory only
 * root may write) but the name the user gave is a file that passed the
 * checks above, that file is emptied and written in place, on the checked
 * descriptor, as a shell's `>` would: not atomically, so a full disk can
 * leave it cut.  A name that does not exist gets the refusal.
 */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MT_OUT_TRIES 1000

/* dir/stem<ext> for k == 1, else dir/stem-k<ext>; -ENAMETOOLONG if buf is
 * too small. */
static int fresh_name(const char *dir, const char *stem, int k, const char *ext, char *buf,
                      size_t n)
{
    int len = k == 1 ? snprintf(buf, n, "%s/%s%s", dir, stem, ext)
                     : snprintf(buf, n, "%s/%s-%d%s", dir, stem, k, ext);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int mt_out_temp(const char *dir, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s/.memtop-XXXXXX.tmp", dir);
    if (len < 0 || (size_t)len >= n)
        return -ENAMETOOLONG;
    /* O_CREAT|O_EXCL (mkostemps): nothing there is followed or reused */
    int fd = mkostemps(buf, 4, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        buf[0] = '\0';
        return -e;
    }
    fchmod(fd, 0600); /* whatever the umask */
    return fd;
}

/* Gives tmp the name dst unless dst exists (anything, a dangling symlink
 * included); 0 or -errno. */
static int place_new(const char *tmp, const char *dst)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS) /* a file system without it: link */
        return -errno;
    if (link(tmp, dst) != 0)
        return -errno;
    unlink(tmp);
    return 0;
}

int mt_out_commit_fresh(const char *tmp, const char *dir, const char *stem, const char *ext,
                        char *buf, size_t n)
{
    int rc = -EEXIST;
    for (int k = 1; k < MT_OUT_TRIES && rc == -EEXIST; k++) {
        rc = fresh_name(dir, stem, k, ext, buf, n);
        if (rc == 0)
            rc = place_new(tmp, buf);
    }
    if (rc != 0)
        unlink(tmp);
    return rc;
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

/* path opened for writing with extra flags (O_CREAT or 0), never through a
 * symlink, and checked (check_named); the descriptor, O_NONBLOCK still
 * set, or -errno.  O_NONBLOCK: a FIFO without a reader fails (ENXIO)
 * instead of blocking. */
static int open_checked(const char *path, int extra, bool *dev)
{
    int fd = open(path, O_WRONLY | extra | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 && (errno == ELOOP || errno == EACCES) && lstat(path, &st) == 0 &&
        S_ISLNK(st.st_mode))
        return -ELOOP; /* O_NOFOLLOW's ELOOP; some kernels say EACCES */
    if (fd < 0)
        return -errno;
    int rc = check_named(fd, dev);
    if (rc != 0) {
        close(fd);
        return rc;
    }
    return fd;
}

/* fd with O_NONBLOCK cleared (and emptied unless a device), or -errno. */
static int ready_named(int fd, bool dev, bool empty)
{
    if ((empty && !dev && ftruncate(fd, 0) != 0) || fcntl(fd, F_SETFL, 0) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int mt_out_open_named(const char *path)
{
    /* no O_TRUNC before the checks */
    bool dev = false;
    int fd = open_checked(path, O_CREAT, &dev);
    return fd < 0 ? fd : ready_named(fd, dev, true);
}

/* The directory of path: "." for a bare name. */
static int dir_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    int len = !slash          ? snprintf(buf, n, ".")
              : slash == path ? snprintf(buf, n, "/")
                              : snprintf(buf, n, "%.*s", (int)(slash - path), path);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* Whether mt_out_temp's -errno says the directory refuses us a new file
 * (not writable by us, or immutable) rather than that the disk is full:
 * then an existing file of ours in it may still be written in place.
 * EROFS is not one: the file itself could not have been opened to write. */
static bool dir_refuses(int err)
{
    return err == -EACCES || err == -EPERM;
}

int mt_out_open_whole(const char *path, char *tmp, size_t n)
{
    bool dev = false;
    tmp[0] = '\0';
    int fd = open_checked(path, 0, &dev);
    if (fd >= 0 && dev)
        return ready_named(fd, dev, false); /* written as it is */
    if (fd < 0 && fd != -ENOENT)
        return fd;
    char dir[4096];
    int t = dir_of(path, dir, sizeof dir);
    if (t == 0)
        t = mt_out_temp(dir, tmp, n);
    /* No temporary file allowed beside an existing file of ours (a file
     * the user may write in a directory they may not, as `>` would): it is
     * written in place on the descriptor checked above, never reopened by
     * name, so not atomically (a full disk leaves it cut).  A name that
     * does not exist yet (fd -ENOENT) gets the directory's refusal. */
    if (fd >= 0 && t < 0 && dir_refuses(t))
        return ready_named(fd, false, true);
    if (fd >= 0)
        close(fd);
    return t;
}

int mt_out_commit_whole(const char *tmp, const char *path)
{
    bool dev = false;
    int fd = open_checked(path, 0, &dev); /* what is there now, by the same rules */
    int rc = fd == -ENOENT ? 0 : fd;
    if (fd >= 0) {
        close(fd);
        rc = dev ? -EINVAL : 0; /* a device put there since: not replaced */
    }
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
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
