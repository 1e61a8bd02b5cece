/* dat_zframes.h -- the zstd layer of the recording reader: finding where
 * the complete zstd frames of a file end (without decompressing), and
 * decompressing them as a stream that reports frame boundaries.
 *
 * Why: a recording cut off by SIGKILL or a full disk ends in a partial
 * frame.  The reader keeps everything up to the last complete frame and
 * says how many bytes it dropped; walking the frame and block headers
 * first tells it where that is before any record is applied.  Memory is a
 * few buffers and zstd's window, whatever the file's size. */
#ifndef MEMTOP_DAT_ZFRAMES_H
#define MEMTOP_DAT_ZFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm_error.h"

/* A small read-ahead buffer over a file descriptor (pread, no seeking). */
typedef struct mt_fbuf {
    int fd;
    uint64_t file_bytes;
    unsigned char *buf;
    size_t cap, len;
    uint64_t off; /* file offset of buf[0] */
} mt_fbuf;

mt_errc mt_fbuf_init(mt_fbuf *b, int fd, uint64_t file_bytes, mt_err *err);
void mt_fbuf_free(mt_fbuf *b);

/* Copy n (<= 64) bytes at file offset off into dst; false if they are not
 * all in the file (or a read failed: then err says so and *io is set). */
bool mt_fbuf_get(mt_fbuf *b, uint64_t off, void *dst, size_t n, bool *io, mt_err *err);

/* Outcome of measuring one frame. */
typedef enum mt_zframe_kind {
    MT_ZF_COMPLETE, /* a whole zstd or skippable frame: *len bytes */
    MT_ZF_PARTIAL,  /* the file ends inside the frame */
    MT_ZF_BAD,      /* not a frame here (err says why) */
} mt_zframe_kind;

/* Size of the zstd frame at off by walking its header and block headers. */
mt_zframe_kind mt_zframe_measure(mt_fbuf *b, uint64_t off, uint64_t *len, mt_err *err);

/* Where the file's complete frames end. */
typedef struct mt_zscan {
    uint64_t end;      /* end of the last complete frame (>= start) */
    uint64_t nframes;  /* complete frames */
    bool truncated;    /* bytes after `end` are ignored: a cut frame, or a bad tail */
    bool invalid_tail; /* they are not a frame (e.g. the zeros a power loss leaves) */
} mt_zscan;

/* Walk the frames from start to the end of the file.  Bytes after at least
 * one complete frame that are not a frame, with no frame after them, are a
 * bad tail: truncated and invalid_tail (what a power loss or a disk full
 * mid-write leaves).  MT_E_CORRUPT when the first frame is bad, or when a
 * frame follows bytes that are not one (a corrupt middle is never taken
 * for a tail); MT_E_IO on read errors. */
mt_errc mt_zscan_frames(int fd, uint64_t start, uint64_t file_bytes, mt_zscan *out, mt_err *err);

#include "dat_zstream.h"

#endif
