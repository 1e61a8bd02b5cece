/* dat_zframes.c -- measuring zstd frames from their headers (RFC 8878) and
 * (see dat_zframes.h; the streaming decoder is dat_zstream.c). */
#include "dat_zframes.h"

#include "dat_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define FBUF_BYTES (256u << 10)
#define ZSTD_MAGIC 0xFD2FB528u
#define SKIP_MAGIC_MASK 0xFFFFFFF0u
#define SKIP_MAGIC 0x184D2A50u
#define BLOCK_MAX (128u << 10)

mt_errc mt_fbuf_init(mt_fbuf *b, int fd, uint64_t file_bytes, mt_err *err)
{
    memset(b, 0, sizeof *b);
    b->fd = fd;
    b->file_bytes = file_bytes;
    b->buf = malloc(FBUF_BYTES);
    b->cap = FBUF_BYTES;
    if (!b->buf)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the read buffer");
    return MT_OK;
}

void mt_fbuf_free(mt_fbuf *b)
{
    free(b->buf);
    b->buf = NULL;
}

static bool refill(mt_fbuf *b, uint64_t off, bool *io, mt_err *err)
{
    size_t want = b->cap;
    if (b->file_bytes - off < want)
        want = (size_t)(b->file_bytes - off);
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(b->fd, b->buf + got, want - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *io = true;
            mt_err_set(err, MT_E_IO, "read: %s", r < 0 ? strerror(errno) : "file shrank");
            return false;
        }
        got += (size_t)r;
    }
    b->off = off;
    b->len = got;
    return true;
}

bool mt_fbuf_get(mt_fbuf *b, uint64_t off, void *dst, size_t n, bool *io, mt_err *err)
{
    *io = false;
    if (off > b->file_bytes || n > b->file_bytes - off)
        return false;
    if (off < b->off || off + n > b->off + b->len) {
        if (!refill(b, off, io, err))
            return false;
    }
    memcpy(dst, b->buf + (off - b->off), n);
    return true;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes of the frame header after the magic, from its descriptor byte. */
static unsigned header_bytes(unsigned char fhd, bool *checksum)
{
    static const unsigned did_bytes[4] = {0, 1, 2, 4};
    static const unsigned fcs_bytes[4] = {0, 2, 4, 8};
    bool single = fhd & 0x20;
    unsigned fcs = fhd >> 6;
    *checksum = fhd & 0x04;
    return 1 + (single ? 0 : 1) + did_bytes[fhd & 3] + (fcs == 0 && single ? 1 : fcs_bytes[fcs]);
}

#define NEED(off, n, dst)                                                                          \
    do {                                                                                           \
        if (!mt_fbuf_get(b, (off), (dst), (n), &io, err))                                          \
            return io ? MT_ZF_BAD : MT_ZF_PARTIAL;                                                 \
    } while (0)

static mt_zframe_kind measure_blocks(mt_fbuf *b, uint64_t off, uint64_t *end, mt_err *err)
{
    bool io;
    for (;;) {
        unsigned char bh[3];
        NEED(off, 3, bh);
        uint32_t h = (uint32_t)bh[0] | (uint32_t)bh[1] << 8 | (uint32_t)bh[2] << 16;
        unsigned type = (h >> 1) & 3;
        uint32_t size = h >> 3;
        if (type == 3 || size > BLOCK_MAX) {
            mt_err_set(err, MT_E_CORRUPT, "corrupt zstd block at byte %llu",
                       (unsigned long long)off);
            return MT_ZF_BAD;
        }
        off += 3 + (type == 1 ? 1 : size);
        if (off > b->file_bytes)
            return MT_ZF_PARTIAL;
        if (h & 1) {
            *end = off;
            return MT_ZF_COMPLETE;
        }
    }
}

mt_zframe_kind mt_zframe_measure(mt_fbuf *b, uint64_t off, uint64_t *len, mt_err *err)
{
    bool io;
    unsigned char m[8];
    NEED(off, 4, m);
    uint32_t magic = le32(m);
    if ((magic & SKIP_MAGIC_MASK) == SKIP_MAGIC) {
        NEED(off + 4, 4, m + 4);
        uint64_t end = off + 8 + le32(m + 4);
        if (end > b->file_bytes)
            return MT_ZF_PARTIAL;
        *len = end - off;
        return MT_ZF_COMPLETE;
    }
    if (magic != ZSTD_MAGIC) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt recording: no zstd frame at byte %llu",
                   (unsigned long long)off);
        return MT_ZF_BAD;
    }
    unsigned char fhd;
    NEED(off + 4, 1, &fhd);
    if (fhd & 0x08) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt zstd frame header at byte %llu",
                   (unsigned long long)off);
        return MT_ZF_BAD;
    }
    bool checksum;
    uint64_t end;
    mt_zframe_kind k = measure_blocks(b, off + 4 + header_bytes(fhd, &checksum), &end, err);
    if (k != MT_ZF_COMPLETE)
        return k;
    if (checksum)
        end += 4;
    if (end > b->file_bytes)
        return MT_ZF_PARTIAL;
    *len = end - off;
    return MT_ZF_COMPLETE;
}

/* The first offset in (off, file_bytes) where a zstd frame seems to start
 * (its magic, and a frame header descriptor with the reserved bit clear),
 * or 0.  The frame is not walked: walking every candidate could cross the
 * whole tail each time (quadratic on a crafted file), and a candidate that
 * is not really a frame only makes the file count as corrupt instead of
 * cut, the safer answer.  *rc: MT_E_IO on a read error. */
static uint64_t next_frame(mt_fbuf *b, uint64_t off, mt_errc *rc, mt_err *err)
{
    static const unsigned char magic[4] = {0x28, 0xB5, 0x2F, 0xFD}; /* ZSTD_MAGIC, LE */
    unsigned char w[64];
    bool io;
    for (uint64_t at = off + 1; at + 5 <= b->file_bytes; at += sizeof w - 4) {
        size_t n = b->file_bytes - at < sizeof w ? (size_t)(b->file_bytes - at) : sizeof w;
        if (!mt_fbuf_get(b, at, w, n, &io, err)) {
            *rc = io ? MT_E_IO : MT_OK;
            return 0;
        }
        for (size_t i = 0; i + 5 <= n; i++)
            if (memcmp(w + i, magic, 4) == 0 && !(w[i + 4] & 0x08))
                return at + i;
        if (n < sizeof w)
            break;
    }
    return 0;
}

/* Whether the frame [off, off + len) decompresses, checksum included.  -1
 * on a read error or no memory. */
static int frame_decodes(int fd, uint64_t off, uint64_t len)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t in_cap = 64u << 10, out_cap = ZSTD_DStreamOutSize();
    unsigned char *in = malloc(in_cap), *out = malloc(out_cap);
    int ok = ds && in && out ? 1 : -1;
    if (ok == 1)
        ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, MT_DAT_WINDOW_LOG_MAX);
    size_t r = 1;
    for (uint64_t at = off; ok == 1 && at < off + len;) {
        size_t want = off + len - at < in_cap ? (size_t)(off + len - at) : in_cap;
        ssize_t got = pread(fd, in, want, (off_t)at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            ok = -1;
            break;
        }
        at += (uint64_t)got;
        ZSTD_inBuffer ib = {in, (size_t)got, 0};
        for (;;) { /* until it wants more input, or the frame ends */
            ZSTD_outBuffer ob = {out, out_cap, 0};
            r = ZSTD_decompressStream(ds, &ob, &ib);
            if (ZSTD_isError(r) || (r == 0 && (ib.pos < ib.size || at < off + len)))
                ok = 0;
            if (ok != 1 || r == 0 || (ib.pos == ib.size && ob.pos < ob.size))
                break;
        }
    }
    if (ok == 1 && r != 0)
        ok = 0; /* the frame did not end */
    ZSTD_freeDStream(ds);
    free(in);
    free(out);
    return ok;
}

/* Bytes at out->end that are not a frame: a bad tail if no frame follows
 * them, else corruption (err already says what is wrong at out->end).  The
 * frame before a bad tail may hold the tail's first bytes (a power loss
 * zeroes the end of the file): if it does not decompress, it is part of
 * the tail. */
static mt_errc bad_bytes(mt_fbuf *b, mt_zscan *out, uint64_t last, mt_err *err)
{
    mt_errc rc = MT_OK;
    uint64_t next = next_frame(b, out->end, &rc, err);
    if (rc)
        return rc;
    if (next && frame_decodes(b->fd, last, out->end - last) == 0)
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt recording: the frame at byte %llu does not decompress",
                          (unsigned long long)last); /* its header misled the walk */
    if (next)
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt recording: %llu bytes at byte %llu are not a zstd frame, and "
                          "a frame follows at byte %llu",
                          (unsigned long long)(next - out->end), (unsigned long long)out->end,
                          (unsigned long long)next);
    out->truncated = true;
    out->invalid_tail = true;
    int ok = frame_decodes(b->fd, last, out->end - last);
    if (ok < 0)
        return mt_err_set(err, MT_E_IO, "reading the last frame at byte %llu failed",
                          (unsigned long long)last);
    if (!ok) {
        if (out->nframes == 1)
            return mt_err_set(err, MT_E_CORRUPT,
                              "corrupt recording: its only frame does not decompress");
        out->end = last;
        out->nframes--;
    }
    return MT_OK;
}

/* Whether the bytes at off are a zstd frame's magic. */
static bool starts_frame(mt_fbuf *b, uint64_t off)
{
    unsigned char m[4];
    bool io;
    return off + 4 <= b->file_bytes && mt_fbuf_get(b, off, m, 4, &io, NULL) &&
           le32(m) == ZSTD_MAGIC;
}

mt_errc mt_zscan_frames(int fd, uint64_t start, uint64_t file_bytes, mt_zscan *out, mt_err *err)
{
    memset(out, 0, sizeof *out);
    out->end = start;
    mt_fbuf b;
    mt_errc rc = mt_fbuf_init(&b, fd, file_bytes, err);
    uint64_t last = start; /* where the last complete frame begins */
    while (!rc && out->end < file_bytes) {
        uint64_t len = 0;
        mt_err e = {MT_E_CORRUPT, "corrupt recording"};
        mt_zframe_kind k = mt_zframe_measure(&b, out->end, &len, &e);
        if (k == MT_ZF_PARTIAL) {
            out->truncated = true;
            break;
        }
        if (k == MT_ZF_BAD) {
            /* A bad frame that starts with a frame's magic is a damaged
             * frame (a flipped bit, say), not what a cut or a power loss
             * leaves: corrupt, as is a bad first frame. */
            if (e.code != MT_E_CORRUPT || out->nframes == 0 || starts_frame(&b, out->end))
                rc = mt_err_set(err, e.code, "%s", e.msg);
            else
                rc = bad_bytes(&b, out, last, err);
            break;
        }
        last = out->end;
        out->end += len;
        out->nframes++;
    }
    mt_fbuf_free(&b);
    return rc;
}
