/* shm_open.c -- opening, mapping and closing a segment.
 *
 * The file lives in a directory every user can write to: it is opened
 * without following a link and without blocking (a planted FIFO must not
 * hang the viewer), and fstat must show a regular file before anything
 * else.  A segment in a container's directory, "/proc/PID/root/...", is
 * resolved inside that root (proc_root.h): a directory on the way that the
 * target's user swapped for a symlink cannot lead to the viewer's files.
 * Refuses other users' segments (unless root) before mapping anything,
 * maps exactly the file's size, and leaves the header checks to
 * shm_validate.c and the owner-versus-process check to shm_owner.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_root.h"
#include "shm_guard.h"
#include "shm_owner.h"
#include "shm_path.h"
#include "shm_segment.h"

#define MT_MAX_MAP_BYTES (1ull << 40)

static const char perm_msg[] = "permission denied: run as the user the process started as, or root";

/* MT_E_PERM for a segment of owner uid, who is named by number (no user
 * database look-up for each denied segment of a --list or an exporter's
 * scan): a process that changed its user after it started (setuid) keeps
 * the segment of the user it started as, which the one it is now cannot
 * read.  mt_segment_open_pid calls a file of an owner it does not trust
 * foreign instead. */
static mt_errc perm_of(uid_t uid, mt_err *err)
{
    return mt_err_set(err, MT_E_PERM,
                      "permission denied: the segment belongs to uid %u: run as that user or root",
                      (unsigned)uid);
}

/* MT_E_PERM for the segment at path, which could not be opened: its owner
 * named (and kept in seg->owner) when an O_PATH open, which needs no read
 * permission, shows it.  Not a regular file (a FIFO another user put
 * there): no segment, as when it can be opened (map_checked), and no
 * owner said (seg->owner stays 0: --list read it as root's). */
static mt_errc perm_at(mt_segment *seg, const char *path, mt_err *err)
{
    struct stat st;
    int fd = mt_open_in_root(path, O_PATH | O_NOFOLLOW);
    bool known = fd >= 0 && fstat(fd, &st) == 0;
    if (fd >= 0)
        close(fd);
    if (known && !S_ISREG(st.st_mode))
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (not a regular file)");
    if (!known)
        return mt_err_set(err, MT_E_PERM, "%s", perm_msg);
    seg->owner = st.st_uid;
    return perm_of(st.st_uid, err);
}

static mt_errc map_checked(mt_segment *seg, const struct stat *st, mt_err *err)
{
    seg->owner = st->st_uid;
    if (!S_ISREG(st->st_mode))
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (not a regular file)");
    if (st->st_uid != geteuid() && geteuid() != 0)
        return perm_of(st->st_uid, err);
    if (st->st_size == 0)
        return mt_err_set(err, MT_E_NOTREADY, "segment is empty (being created?)");
    if ((uint64_t)st->st_size > MT_MAX_MAP_BYTES)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: implausible size %lld",
                          (long long)st->st_size);
    int prot = PROT_READ | (seg->writable ? PROT_WRITE : 0);
    void *p = mmap(NULL, (size_t)st->st_size, prot, MAP_SHARED, seg->fd, 0);
    if (p == MAP_FAILED)
        return mt_err_set(err, MT_E_IO, "mmap: %s", strerror(errno));
    seg->base = p;
    seg->map_bytes = (uint64_t)st->st_size;
    seg->dev = st->st_dev;
    seg->ino = st->st_ino;
    return mt_validate_header(seg->base, seg->map_bytes, &seg->lay, &seg->id, err);
}

mt_errc mt_segment_open_fd(mt_segment *seg, int fd, bool writable, const char *label, mt_err *err)
{
    memset(seg, 0, sizeof *seg);
    seg->fd = fd;
    seg->writable = writable;
    snprintf(seg->path, sizeof seg->path, "%s", label);
    struct stat st;
    mt_errc rc = fstat(fd, &st) == 0 ? map_checked(seg, &st, err)
                                     : mt_err_set(err, MT_E_IO, "fstat: %s", strerror(errno));
    if (rc)
        mt_segment_close(seg);
    return rc;
}

mt_errc mt_segment_open_path(mt_segment *seg, const char *path, mt_err *err)
{
    bool writable = true;
    const int flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
    int fd = mt_open_in_root(path, O_RDWR | flags);
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
        writable = false;
        fd = mt_open_in_root(path, O_RDONLY | flags);
    }
    if (fd < 0) {
        memset(seg, 0, sizeof *seg);
        seg->fd = -1;
        if (errno == ENOENT)
            return mt_err_set(err, MT_E_NOENT, "no such segment");
        if (errno == EACCES || errno == EPERM)
            return perm_at(seg, path, err);
        if (errno == ELOOP)
            return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (symbolic link)");
        if (errno == ENXIO || errno == EISDIR)
            return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (not a regular file)");
        return mt_err_set(err, MT_E_IO, "open: %s", strerror(errno));
    }
    return mt_segment_open_fd(seg, fd, writable, path, err);
}

mt_errc mt_segment_open_pid(mt_segment *seg, const char *dir, int pid, mt_err *err)
{
    char path[sizeof seg->path];
    if (mt_shm_locate(dir, pid, path, sizeof path) != 0) {
        memset(seg, 0, sizeof *seg);
        seg->fd = -1;
        return mt_err_set(err, MT_E_IO, "segment path too long");
    }
    return mt_segment_open_for(seg, path, pid, err);
}

mt_errc mt_segment_open_for(mt_segment *seg, const char *path, int pid, mt_err *err)
{
    mt_errc rc = mt_segment_open_path(seg, path, err);
    /* a file we may not read, of an owner who is not pid's user or root:
     * planted, not "run as that user" (its owner check needs no header) */
    if (rc == MT_E_PERM && mt_owner_rank_for(seg->owner, pid) == MT_OWNER_FOREIGN)
        rc = mt_segment_check_owner(seg, pid, err);
    if (rc == MT_OK && (rc = mt_segment_check_owner(seg, pid, err)) != MT_OK)
        mt_segment_close(seg);
    seg->host_pid = rc == MT_OK ? pid : 0;
    return rc;
}

void mt_segment_close(mt_segment *seg)
{
    if (seg->base)
        munmap(seg->base, (size_t)seg->map_bytes);
    if (seg->fd >= 0)
        close(seg->fd);
    seg->base = NULL;
    seg->fd = -1;
}

uint32_t mt_segment_flags(const mt_segment *seg)
{
    uint32_t flags; /* 0 if the file shrank: the next read reports it */
    mt_segment_load32(seg, &mt_segment_header(seg)->flags, &flags, NULL);
    return flags;
}

bool mt_segment_grow_error(const mt_segment *seg, char *why, size_t n)
{
    uint32_t e = 0;
    if (!(mt_segment_flags(seg) & MT_FLAG_SEGMENT_FULL) ||
        mt_segment_load32(seg, &mt_segment_header(seg)->grow_errno, &e, NULL) != MT_OK || !e)
        return false;
    char buf[64];
    int code = e < 4096 ? (int)e : 0; /* any value: only a label */
    snprintf(why, n, "the target cannot grow its segment: %s",
             code ? strerror_r(code, buf, sizeof buf) : "unknown error");
    return true;
}

bool mt_segment_replaced(const mt_segment *seg)
{
    /* O_PATH, resolved as the segment was opened: a link planted in a
     * container's directory is not followed out of it, even to stat */
    struct stat st;
    int fd = mt_open_in_root(seg->path, O_PATH | O_NOFOLLOW);
    if (fd < 0)
        return false;
    int rc = fstat(fd, &st);
    close(fd);
    return rc == 0 && (st.st_dev != seg->dev || st.st_ino != seg->ino);
}

mt_errc mt_segment_check_size(const mt_segment *seg, mt_err *err)
{
    struct stat st;
    if (fstat(seg->fd, &st) != 0)
        return mt_err_set(err, MT_E_IO, "fstat: %s", strerror(errno));
    if ((uint64_t)st.st_size < seg->lay.size)
        return mt_err_set(err, MT_E_TRUNCATED, "truncated segment: shrank to %lld bytes",
                          (long long)st.st_size);
    return MT_OK;
}

uint64_t mt_segment_held_bytes(const mt_segment *seg)
{
    struct stat st;
    if (seg->fd < 0 || fstat(seg->fd, &st) != 0)
        return MT_UNKNOWN;
    return (uint64_t)st.st_blocks * 512u; /* st_blocks counts 512-byte units whatever the fs */
}
