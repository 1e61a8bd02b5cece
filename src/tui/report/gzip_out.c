/* gzip_out.c -- see gzip_out.h. */
#include "gzip_out.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

#define GZIP_WINDOW (15 + 16) /* 32 KiB window, gzip header and trailer */
#define CHUNK 65536

/* Deflate until zlib has consumed its input (and with Z_FINISH, ended the
 * stream), writing each chunk.  0, or -1. */
static int pump(z_stream *z, FILE *f, int flush)
{
    unsigned char out[CHUNK];
    int rc;
    do {
        z->next_out = out;
        z->avail_out = sizeof out;
        rc = deflate(z, flush);
        if (rc == Z_STREAM_ERROR)
            return -1;
        size_t got = sizeof out - z->avail_out;
        if (got && fwrite(out, 1, got, f) != got)
            return -1;
    } while (z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

int mt_gzip_write(FILE *f, const void *buf, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    const unsigned char *p = buf;
    int rc = 0;
    /* avail_in is a uInt: feed a larger buffer in pieces */
    while (rc == 0 && len > 0) {
        size_t piece = len < (1u << 30) ? len : (1u << 30);
        z.next_in = (unsigned char *)p;
        z.avail_in = (uInt)piece;
        rc = pump(&z, f, Z_NO_FLUSH);
        p += piece;
        len -= piece;
    }
    if (rc == 0)
        rc = pump(&z, f, Z_FINISH);
    deflateEnd(&z);
    return rc;
}
