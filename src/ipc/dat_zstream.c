/* dat_zstream.c -- a recording's zstd stream decoded in chunks, by the
 * reader or ahead of it by a helping thread (see dat_zstream.h).
 *
 * The ring: the decoder (under mu) fills chunk filled % MT_ZCHUNKS while
 * filled - taken < MT_ZCHUNKS and publishes it with a release store of
 * filled; the reader copies out of chunk taken % MT_ZCHUNKS after an
 * acquire load of filled and gives it back with a release store of taken,
 * which the decoder loads with acquire before it writes the chunk again.
 * A `last` chunk (the input's end, or an error) is never given back: the
 * reader gets its result at every read after it, as it got the decoder's
 * before chunks. */
#include "dat_zstream.h"

#include "dat_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

mt_errc mt_zstream_open(mt_zstream *z, int fd, uint64_t off, uint64_t limit, mt_err *err)
{
    memset(z, 0, sizeof *z);
    z->fd = fd;
    z->limit = limit;
    z->in_cap = ZSTD_DStreamInSize();
    z->in = malloc(z->in_cap);
    z->ds = ZSTD_createDStream();
    z->bufs = malloc((size_t)MT_ZCHUNKS * MT_ZCHUNK_BYTES);
    z->mu_ok = pthread_mutex_init(&z->mu, NULL) == 0;
    if (!z->in || !z->ds || !z->bufs || !z->mu_ok) {
        mt_zstream_close(z);
        return mt_err_set(err, MT_E_NOMEM, "out of memory for decompression");
    }
    for (unsigned i = 0; i < MT_ZCHUNKS; i++)
        z->chunk[i].buf = z->bufs + (size_t)i * MT_ZCHUNK_BYTES;
    ZSTD_DCtx_setParameter(z->ds, ZSTD_d_windowLogMax, MT_DAT_WINDOW_LOG_MAX);
    return mt_zstream_seek(z, off, err);
}

void mt_zstream_close(mt_zstream *z)
{
    ZSTD_freeDStream(z->ds);
    free(z->in);
    free(z->bufs);
    if (z->mu_ok)
        pthread_mutex_destroy(&z->mu);
    z->ds = NULL;
    z->in = NULL;
    z->bufs = NULL;
    z->mu_ok = false;
}

mt_errc mt_zstream_seek(mt_zstream *z, uint64_t off, mt_err *err)
{
    if (off > z->limit)
        return mt_err_set(err, MT_E_CORRUPT, "seek beyond the recording's end");
    pthread_mutex_lock(&z->mu);
    ZSTD_DCtx_reset(z->ds, ZSTD_reset_session_only);
    z->in_off = off;
    z->in_len = z->in_pos = 0;
    z->dec_mid = false;
    z->stopped = false;
    atomic_store_explicit(&z->filled, 0, memory_order_relaxed);
    atomic_store_explicit(&z->taken, 0, memory_order_relaxed);
    pthread_mutex_unlock(&z->mu);
    z->at = 0;
    z->mid_frame = false;
    z->tell = off;
    return MT_OK;
}

uint64_t mt_zstream_tell(const mt_zstream *z)
{
    return z->tell;
}

/* --- the decoder (under mu) ------------------------------------------- */

static mt_errc fill_input(mt_zstream *z, mt_err *err)
{
    z->in_off += z->in_pos;
    z->in_len = z->in_pos = 0;
    size_t want = z->in_cap;
    if (z->limit - z->in_off < want)
        want = (size_t)(z->limit - z->in_off);
    while (z->in_len < want) {
        ssize_t r =
            pread(z->fd, z->in + z->in_len, want - z->in_len, (off_t)(z->in_off + z->in_len));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return mt_err_set(err, MT_E_IO, "read: %s", r < 0 ? strerror(errno) : "file shrank");
        z->in_len += (size_t)r;
    }
    return MT_OK;
}

/* Up to MT_ZCHUNK_BYTES of the current frame into c; an error in c->rc. */
static void decode(mt_zstream *z, mt_zchunk *c)
{
    ZSTD_outBuffer ob = {c->buf, MT_ZCHUNK_BYTES, 0};
    while (ob.pos < ob.size) {
        if (z->in_pos == z->in_len) {
            if (z->in_off + z->in_pos >= z->limit)
                break;
            if ((c->rc = fill_input(z, &c->err)) != MT_OK)
                return;
        }
        ZSTD_inBuffer ib = {z->in, z->in_len, z->in_pos};
        size_t r = ZSTD_decompressStream(z->ds, &ob, &ib);
        z->dec_mid = z->dec_mid || ib.pos > z->in_pos || ob.pos > 0;
        z->in_pos = ib.pos;
        if (ZSTD_isError(r)) {
            c->rc = mt_err_set(&c->err, MT_E_CORRUPT, "corrupt recording: zstd: %s near byte %llu",
                               ZSTD_getErrorName(r), (unsigned long long)(z->in_off + z->in_pos));
            return;
        }
        if (r == 0) {
            z->dec_mid = false;
            c->frame_end = true;
            break;
        }
    }
    c->n = ob.pos;
    if (!c->frame_end && ob.pos == 0 && z->dec_mid)
        c->rc = mt_err_set(&c->err, MT_E_CORRUPT, "corrupt recording: frame cut short at byte %llu",
                           (unsigned long long)(z->in_off + z->in_pos));
}

/* The next chunk decoded and published, if there is room and the stream
 * goes on; true if so. */
static bool decode_next(mt_zstream *z)
{
    uint64_t filled = atomic_load_explicit(&z->filled, memory_order_relaxed);
    if (z->stopped || filled - atomic_load_explicit(&z->taken, memory_order_acquire) >= MT_ZCHUNKS)
        return false;
    mt_zchunk *c = &z->chunk[filled % MT_ZCHUNKS];
    c->n = 0;
    c->frame_end = false;
    c->rc = MT_OK;
    decode(z, c);
    if (c->rc != MT_OK)
        c->n = 0; /* an error gives no bytes */
    c->last = c->rc != MT_OK || (c->n == 0 && !c->frame_end);
    c->mid_frame = z->dec_mid;
    c->tell = z->in_off + z->in_pos;
    z->stopped = c->last;
    atomic_store_explicit(&z->filled, filled + 1, memory_order_release);
    return true;
}

bool mt_zstream_help(mt_zstream *z)
{
    if (pthread_mutex_trylock(&z->mu) != 0)
        return false;
    bool did = decode_next(z);
    pthread_mutex_unlock(&z->mu);
    return did;
}

/* --- the reader --------------------------------------------------------- */

mt_errc mt_zstream_read(mt_zstream *z, void *out, size_t cap, size_t *n, bool *frame_end,
                        mt_err *err)
{
    *n = 0;
    *frame_end = false;
    while (*n < cap) {
        uint64_t taken = atomic_load_explicit(&z->taken, memory_order_relaxed);
        if (atomic_load_explicit(&z->filled, memory_order_acquire) == taken) {
            if (*n)
                break; /* what is ready; the next read decodes */
            pthread_mutex_lock(&z->mu);
            decode_next(z); /* unless the helper just did */
            pthread_mutex_unlock(&z->mu);
            continue;
        }
        mt_zchunk *c = &z->chunk[taken % MT_ZCHUNKS];
        if (c->last) {
            if (*n)
                break;
            z->tell = c->tell;
            z->mid_frame = c->mid_frame;
            if (c->rc != MT_OK && err)
                *err = c->err;
            return c->rc;
        }
        size_t k = c->n - z->at < cap - *n ? c->n - z->at : cap - *n;
        memcpy((unsigned char *)out + *n, c->buf + z->at, k);
        *n += k;
        z->at += k;
        z->mid_frame = true; /* bytes of a frame given */
        if (z->at < c->n)
            break; /* out is full */
        z->at = 0;
        z->tell = c->tell;
        z->mid_frame = c->mid_frame;
        atomic_store_explicit(&z->taken, taken + 1, memory_order_release);
        if (c->frame_end) {
            *frame_end = true;
            break;
        }
    }
    return MT_OK;
}
