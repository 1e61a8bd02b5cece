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

/* Streaming decompression of [off, limit) of a file. */
typedef struct mt_zstream {
    int fd;
    void *ds; /* ZSTD_DStream */
    unsigned char *in;
    size_t in_cap, in_len, in_pos;
    uint64_t in_off; /* file offset of in[0] */
    uint64_t limit;  /* never read at or beyond this offset */
    bool mid_frame;  /* inside a frame (input consumed since its start) */
    uint64_t frames; /* frames completed since the last seek */
} mt_zstream;

mt_errc mt_zstream_open(mt_zstream *z, int fd, uint64_t off, uint64_t limit, mt_err *err);
void mt_zstream_close(mt_zstream *z);

/* Restart decompression at off, which must be the start of a frame. */
mt_errc mt_zstream_seek(mt_zstream *z, uint64_t off, mt_err *err);

/* Compressed offset of the next unread input byte: the start of the next
 * frame when !z->mid_frame. */
uint64_t mt_zstream_tell(const mt_zstream *z);

/* Decompress up to cap bytes into out.  *n bytes were produced; *frame_end
 * is set when a frame ended with them (output never crosses a frame
 * boundary).  *n == 0 and !*frame_end: the input is exhausted (at limit).
 * MT_E_CORRUPT on a zstd error. */
mt_errc mt_zstream_read(mt_zstream *z, void *out, size_t cap, size_t *n, bool *frame_end,
                        mt_err *err);

#endif
