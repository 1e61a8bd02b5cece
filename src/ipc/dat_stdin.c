/* dat_stdin.c -- standard input's recording copied into an unlinked
 * temporary file that the reader can seek in (see dat_stdin.h). */
#include "dat_stdin.h"
#include "dat_format.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COPY_BYTES (256u << 10)
#define DRAIN_MS 500 /* after *stop: the wait for more bytes (the writer finalizing) */

static int spool_fd = -1; /* the file "-" opens, once made */

bool mt_dat_path_is_stdin(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

const char *mt_dat_path_name(const char *path)
{
    return mt_dat_path_is_stdin(path) ? MT_DAT_STDIN_NAME : path;
}

int64_t mt_dat_path_bytes(const char *path)
{
    struct stat st;
    bool in = mt_dat_path_is_stdin(path);
    if (in ? spool_fd < 0 || fstat(spool_fd, &st) != 0 : stat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_size;
}

static const char *tmp_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && d[0] ? d : "/tmp";
}

/* An unlinked 0600 file in the temporary directory. */
static int make_tmp(mt_err *err)
{
    const char *dir = tmp_dir();
    int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[4096]; /* O_TMPFILE not supported there (EOPNOTSUPP, EISDIR): by name */
    if (snprintf(path, sizeof path, "%s/memtop-stdin-XXXXXX", dir) >= (int)sizeof path) {
        mt_err_set(err, MT_E_IO, "TMPDIR is too long");
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        mt_err_set(err, MT_E_IO, "cannot make a temporary file in %s: %s", dir, strerror(errno));
        return -1;
    }
    unlink(path);
    return fd;
}

static mt_errc write_all(int fd, const char *p, size_t n, mt_err *err)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return mt_err_set(err, MT_E_IO, "copying it to %s: %s", tmp_dir(), strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return MT_OK;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether to read on: always until *stop; after it, only while bytes
 * keep arriving within DRAIN_MS, and never once *stop is 2 or more (a
 * second Ctrl-C: a writer that goes on sending). */
static bool more_comes(const volatile sig_atomic_t *stop)
{
    if (!stop || !*stop)
        return true;
    if (*stop > 1)
        return false;
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    return poll(&p, 1, DRAIN_MS) > 0;
}

/* Whether bytes p[0, n), at offset `at` of the stream, agree with the
 * file header's magic: anything else is refused as it arrives, not copied
 * to its end (`yes | memtop -f -` filled TMPDIR, then said "bad magic"). */
static bool magic_so_far(uint64_t at, const char *p, size_t n)
{
    if (at >= MT_DAT_MAGIC_BYTES)
        return true;
    size_t k = MT_DAT_MAGIC_BYTES - (size_t)at;
    return memcmp(p, MT_DAT_MAGIC + at, n < k ? n : k) == 0;
}

static mt_errc copy(int out, const volatile sig_atomic_t *stop, mt_dat_spool_fn fn, void *ctx,
                    mt_err *err)
{
    char *buf = malloc(COPY_BYTES);
    if (!buf)
        return mt_err_set(err, MT_E_NOMEM, "out of memory");
    uint64_t total = 0, told = now_ms();
    mt_errc rc = MT_OK;
    while (rc == MT_OK && more_comes(stop)) {
        ssize_t n = read(STDIN_FILENO, buf, COPY_BYTES);
        if (n < 0 && errno == EINTR)
            continue; /* *stop is looked at again */
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {STDIN_FILENO, POLLIN, 0}; /* a non-blocking pipe: wait */
            poll(&p, 1, -1);
            continue;
        }
        if (n < 0)
            rc = mt_err_set(err, MT_E_IO, "read: %s", strerror(errno));
        if (n <= 0)
            break;
        if (!magic_so_far(total, buf, (size_t)n)) {
            rc = mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop recording (bad magic)");
            break;
        }
        rc = write_all(out, buf, (size_t)n, err);
        total += (uint64_t)n;
        if (fn && now_ms() - told >= 1000) {
            fn(total, ctx);
            told = now_ms();
        }
    }
    free(buf);
    return rc;
}

mt_errc mt_dat_stdin_spool(const volatile sig_atomic_t *stop, mt_dat_spool_fn fn, void *ctx,
                           mt_err *err)
{
    if (spool_fd >= 0)
        return MT_OK;
    struct stat st;
    if (fstat(STDIN_FILENO, &st) != 0)
        return mt_err_set(err, MT_E_IO, "fstat: %s", strerror(errno));
    if (isatty(STDIN_FILENO))
        return mt_err_set(err, MT_E_NOTMEMTOP,
                          "a terminal, not a recording: pipe one in (memtop -p PID --record - | "
                          "memtop -f -)");
    if (S_ISREG(st.st_mode)) { /* `< f.dat`: seekable already */
        spool_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        return spool_fd >= 0 ? MT_OK
                             : mt_err_set(err, MT_E_IO, "standard input: %s", strerror(errno));
    }
    int fd = make_tmp(err);
    if (fd < 0)
        return err ? err->code : MT_E_IO;
    mt_errc rc = copy(fd, stop, fn, ctx, err);
    if (rc != MT_OK) {
        close(fd);
        return rc;
    }
    spool_fd = fd;
    return MT_OK;
}

int mt_dat_stdin_fd(mt_err *err)
{
    if (spool_fd < 0 && mt_dat_stdin_spool(NULL, NULL, NULL, err) != MT_OK)
        return -1;
    struct stat st;
    if (fstat(spool_fd, &st) == 0 && st.st_size == 0) {
        mt_err_set(err, MT_E_NOTMEMTOP,
                   "not a memtop recording: nothing arrived (its writer "
                   "failed, or wrote elsewhere)");
        return -1;
    }
    int fd = fcntl(spool_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        mt_err_set(err, MT_E_IO, "standard input's copy: %s", strerror(errno));
    return fd;
}
