/* safe_file.c -- see safe_file.h. */
#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "proc_root.h"

#define FUSE_MAGIC 0x65735546

bool mt_stat_trusted(const struct stat *st, uid_t euid, gid_t egid)
{
    if (st->st_uid != 0 && st->st_uid != euid)
        return false;
    if (st->st_mode & S_IWOTH)
        return false;
    return !(st->st_mode & S_IWGRP) || st->st_gid == 0 || st->st_gid == egid;
}

bool mt_path_trusted(const char *canon)
{
    char dir[PATH_MAX];
    size_t n = strlen(canon);
    if (canon[0] != '/' || n >= sizeof dir)
        return false;
    memcpy(dir, canon, n + 1);
    uid_t euid = geteuid();
    gid_t egid = getegid();
    struct stat st;
    /* every directory from the file's own up to "/" */
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        slash[slash == dir] = '\0'; /* keep "/" itself */
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !mt_stat_trusted(&st, euid, egid))
            return false;
        if (slash == dir)
            break;
    }
    return true;
}

int mt_open_regular(const char *path, struct stat *st, const char **why)
{
    *why = "file deleted";
    int where = mt_open_in_root(path, O_PATH); /* a container's link stays inside */
    if (where < 0)
        return -1;
    int fd = -1;
    if (fstat(where, st) != 0)
        ; /* gone meanwhile: "file deleted" */
    else if (!S_ISREG(st->st_mode))
        *why = "no file (JIT/vdso)";
    else {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", where);
        fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    }
    close(where);
    struct stat again;
    if (fd >= 0 && (fstat(fd, &again) != 0 || again.st_ino != st->st_ino ||
                    again.st_dev != st->st_dev || !S_ISREG(again.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static bool on_fuse(int fd)
{
    struct statfs fs;
    return fstatfs(fd, &fs) != 0 || fs.f_type == FUSE_MAGIC;
}

/* Copies size bytes of src into dst; false if src did not hold exactly that. */
static bool copy_all(int dst, int src, uint64_t size)
{
    off_t off = 0;
    errno = 0; /* stays 0 when src ends early */
    while ((uint64_t)off < size) {
        ssize_t n = sendfile(dst, src, &off, size - (uint64_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
    }
    char extra;
    struct stat st;
    return pread(src, &extra, 1, off) == 0 && fstat(src, &st) == 0 && (uint64_t)st.st_size == size;
}

static int sealed_copy(int src, uint64_t size, const char **why)
{
    int fd = memfd_create("memtop-module", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        *why = "out of memory";
        return -1;
    }
    const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
    if (!copy_all(fd, src, size)) {
        *why = errno == ENOMEM || errno == ENOSPC ? "out of memory" : "file changed";
    } else if (fcntl(fd, F_ADD_SEALS, seals) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
        *why = "out of memory";
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

int mt_stable_fd(int fd, const struct stat *st, uint64_t limit, const char **why)
{
    if (mt_stat_trusted(st, geteuid(), getegid()) && !on_fuse(fd))
        return fd;
    return mt_copy_fd(fd, st, limit, why);
}

int mt_copy_fd(int fd, const struct stat *st, uint64_t limit, const char **why)
{
    int copy = -1;
    if ((uint64_t)st->st_size > limit)
        *why = "file too large to copy safely";
    else
        copy = sealed_copy(fd, (uint64_t)st->st_size, why);
    close(fd);
    return copy;
}
