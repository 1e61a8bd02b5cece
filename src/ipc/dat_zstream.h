/* dat_zstream.h -- streaming decompression of a recording's zstd frames,
 * in chunks that a second thread may decode ahead of the reader.
 *
 * Why: in the first pass on two threads (dat_pipe.h) the thread that
 * decodes the records is the slower one, and zstd is about an eighth of
 * its time, while the thread that applies the events waits for it
 * (docs/performance.md, "Reading on an Intel Xeon").  So the stream is
 * decoded into a ring of MT_ZCHUNKS chunks of MT_ZCHUNK_BYTES: the reader
 * (mt_zstream_read) copies out of the chunks already decoded, and decodes
 * the next one itself only when none is ready; another thread, while it
 * has nothing else to do, decodes chunks ahead (mt_zstream_help).  One
 * decoder, under a mutex, whichever thread runs it: the chunks come in
 * the stream's order, and what the reader is given (bytes, frame ends,
 * errors, mt_zstream_tell) is what decoding on its own thread gives.
 *
 * Threads: everything but mt_zstream_help is the reader's thread's; help
 * may run on one other thread at a time, never during open, seek or
 * close.  Memory: the chunks (MT_ZCHUNKS * MT_ZCHUNK_BYTES), zstd's input
 * buffer and window, whatever the file's size. */
#ifndef MEMTOP_DAT_ZSTREAM_H
#define MEMTOP_DAT_ZSTREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm_error.h"

#define MT_ZCHUNKS 16u
#define MT_ZCHUNK_BYTES (64u << 10)

/* Decoded bytes of one frame, and where the decoder stood after them. */
typedef struct mt_zchunk {
    unsigned char *buf;
    size_t n;
    bool frame_end; /* a frame ends with them */
    bool last;      /* the input's end (n == 0) or an error: nothing follows */
    bool mid_frame; /* the decoder is inside a frame after them */
    uint64_t tell;  /* compressed offset after them */
    mt_errc rc;     /* last: MT_OK at the end, else the error */
    mt_err err;
} mt_zchunk;

typedef struct mt_zstream {
    int fd;
    uint64_t limit; /* never read at or beyond this offset */
    /* what the reader was given */
    bool mid_frame; /* inside a frame (bytes of it given, or its input consumed) */
    uint64_t tell;  /* compressed offset after the bytes given at a chunk's end */
    size_t at;      /* bytes of chunk `taken` given */
    /* the ring: chunks [taken, filled) decoded and not used up */
    _Atomic uint64_t filled, taken;
    mt_zchunk chunk[MT_ZCHUNKS];
    unsigned char *bufs;
    /* the decoder, under mu */
    pthread_mutex_t mu;
    bool mu_ok;
    void *ds; /* ZSTD_DStream */
    unsigned char *in;
    size_t in_cap, in_len, in_pos;
    uint64_t in_off; /* file offset of in[0] */
    bool dec_mid;    /* inside a frame */
    bool stopped;    /* a `last` chunk was decoded */
} mt_zstream;

mt_errc mt_zstream_open(mt_zstream *z, int fd, uint64_t off, uint64_t limit, mt_err *err);
void mt_zstream_close(mt_zstream *z);

/* Restart decompression at off, which must be the start of a frame. */
mt_errc mt_zstream_seek(mt_zstream *z, uint64_t off, mt_err *err);

/* Compressed offset of the next frame's start after the bytes given, when
 * !z->mid_frame. */
uint64_t mt_zstream_tell(const mt_zstream *z);

/* Decompress up to cap bytes into out.  *n bytes were produced; *frame_end
 * is set when a frame ended with them (output never crosses a frame
 * boundary).  *n == 0 and !*frame_end: the input is exhausted (at limit).
 * MT_E_CORRUPT on a zstd error, MT_E_IO on a read error. */
mt_errc mt_zstream_read(mt_zstream *z, void *out, size_t cap, size_t *n, bool *frame_end,
                        mt_err *err);

/* From another thread: decode one chunk ahead if the decoder is free and
 * a chunk is; true if it did. */
bool mt_zstream_help(mt_zstream *z);

#endif
