/* record_stream.c -- relaying a recording to standard output as it grows
 * (record_stream.h).
 *
 * Why a file and not a pipe or FIFO to the target: the target's writer
 * must never block, and must never grow without bound, whatever the
 * reader of memtop's output does.  Writing a regular file it created
 * itself (O_EXCL|O_NOFOLLOW, in a directory only we and it can write)
 * keeps the target's recording exactly as it is; memtop sends the bytes
 * on, whole zstd frames only (a frame the target cuts back, after a write
 * error, was never sent), and gives the disk back what it sent (punched
 * holes).  When the output stalls, the unsent bytes wait on disk, and past
 * backlog_max memtop stops the recording: the target finalizes its file
 * as for any stop, memtop sends the rest when it can.
 */
#include "record_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "dat_format.h"
#include "shm_recording.h"

#define CHUNK 4096u /* a write that a pipe reported writable takes without blocking */

int mt_stream_prepare(mt_stream *s, uid_t target_uid, char *msg, size_t n)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->out = STDOUT_FILENO;
    s->backlog_max = MT_STREAM_BACKLOG_DEFAULT;
    const char *env = getenv("MEMTOP_STREAM_BACKLOG");
    char *end;
    if (env && *env) {
        unsigned long long v = strtoull(env, &end, 10);
        if (*end || v < 4096) {
            snprintf(msg, n, "MEMTOP_STREAM_BACKLOG=%s: not a number of bytes >= 4096", env);
            return -1;
        }
        s->backlog_max = v;
    }
    const char *tmp = getenv("TMPDIR");
    int k = snprintf(s->dir, sizeof s->dir, "%s/" MT_STREAM_DIR_PREFIX "XXXXXX",
                     tmp && *tmp ? tmp : "/tmp");
    if (k < 0 || (size_t)k >= sizeof s->dir) {
        snprintf(msg, n, "TMPDIR is too long for the stream's directory");
        s->dir[0] = '\0';
        return -1;
    }
    if (!mkdtemp(s->dir)) {
        snprintf(msg, n, "cannot make a directory for the stream in %s: %s",
                 tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    /* root recording another user's process: the target creates the file */
    if (geteuid() == 0 && target_uid != 0 && chown(s->dir, target_uid, (gid_t)-1) != 0) {
        snprintf(msg, n, "cannot give %s to uid %u: %s", s->dir, (unsigned)target_uid,
                 strerror(errno));
        rmdir(s->dir);
        return -1;
    }
    snprintf(s->path, sizeof s->path, "%s/%s", s->dir, MT_STREAM_FILE);
    return 0;
}

int mt_stream_open(mt_stream *s, uid_t target_uid, char *msg, size_t n)
{
    /* read-write only to punch holes: memtop never writes the file */
    s->fd = open(s->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_uid != target_uid && st.st_uid != geteuid())) {
        snprintf(msg, n, "%s: not the target's recording: %s", s->path,
                 s->fd < 0 ? strerror(errno) : "wrong type or owner");
        mt_stream_close(s);
        return -1;
    }
    unlink(s->path);
    rmdir(s->dir);
    s->dir[0] = '\0';
    return 0;
}

static uint64_t file_size(const mt_stream *s)
{
    struct stat st;
    return fstat(s->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The file bytes after `sent` up to size, into buf (kept from last time). */
static int fill(mt_stream *s, uint64_t size, char *msg, size_t n)
{
    uint64_t want = size - s->sent;
    if (want > s->cap) {
        unsigned char *b = realloc(s->buf, (size_t)want);
        if (!b) {
            snprintf(msg, n, "out of memory relaying the recording");
            return -1;
        }
        s->buf = b;
        s->cap = (size_t)want;
    }
    while (s->len < want) {
        ssize_t r =
            pread(s->fd, s->buf + s->len, (size_t)(want - s->len), (off_t)(s->sent + s->len));
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            break; /* a concurrent cut: the next pump sees the size */
        }
        s->len += (size_t)r;
    }
    return 0;
}

/* Extends ready over the header and the whole frames after it. */
static void find_whole(mt_stream *s, bool final)
{
    if (final) {
        s->ready = s->len;
        return;
    }
    if (!s->header_seen) {
        if (s->len < MT_DAT_HEADER_BYTES)
            return;
        s->ready = MT_DAT_HEADER_BYTES;
        s->header_seen = true;
    }
    for (;;) {
        size_t f = ZSTD_findFrameCompressedSize(s->buf + s->ready, s->len - s->ready);
        if (ZSTD_isError(f) || f == 0)
            return;
        s->ready += f;
    }
}

/* Writes what stdout takes without blocking (or blocks, when wait). */
static size_t send_some(mt_stream *s, size_t ready, bool wait)
{
    size_t done = 0;
    while (done < ready && !s->out_closed) {
        struct pollfd p = {s->out, POLLOUT, 0};
        if (poll(&p, 1, wait ? 1000 : 0) <= 0 || !(p.revents & POLLOUT)) {
            if (p.revents & (POLLERR | POLLHUP))
                s->out_closed = true;
            break;
        }
        size_t k = ready - done < CHUNK ? ready - done : CHUNK;
        ssize_t w = write(s->out, s->buf + done, k);
        if (w < 0) {
            if (errno == EPIPE)
                s->out_closed = true;
            if (errno == EINTR || errno == EAGAIN)
                continue;
            break;
        }
        done += (size_t)w;
    }
    return done;
}

/* Gives the disk back what was sent (whole pages). */
static void punch(mt_stream *s)
{
    uint64_t to = s->sent & ~4095ull;
    if (to > s->punched && fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                     (off_t)s->punched, (off_t)(to - s->punched)) == 0)
        s->punched = to;
}

int mt_stream_pump(mt_stream *s, bool final, char *msg, size_t n)
{
    uint64_t size = file_size(s);
    if (size < s->sent + s->len) { /* the target cut its file back (exec failed, write error) */
        if (size < s->sent)
            s->cut_back += s->sent - size, s->sent = size;
        s->len = (size_t)(size - s->sent);
        if (s->ready > s->len)
            s->ready = s->len;
    }
    if (fill(s, size, msg, n) != 0)
        return -1;
    find_whole(s, final);
    size_t done = send_some(s, s->ready, final);
    memmove(s->buf, s->buf + done, s->len - done);
    s->len -= done;
    s->ready -= done;
    s->sent += done;
    punch(s);
    if (s->out_closed) {
        snprintf(msg, n, "standard output was closed");
        return -1;
    }
    return mt_stream_backlog(s) > s->backlog_max ? 1 : 0;
}

uint64_t mt_stream_backlog(const mt_stream *s)
{
    uint64_t size = file_size(s);
    return size > s->sent ? size - s->sent : 0;
}

void mt_stream_close(mt_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->dir[0]) {
        unlink(s->path);
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}
