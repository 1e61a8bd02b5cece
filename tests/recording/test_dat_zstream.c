/* test_dat_zstream.c -- the recording's zstd stream (src/ipc/dat_zstream.c)
 * gives the reader the same bytes, frame ends, offsets and errors whether
 * it decodes every chunk itself or another thread decoded them ahead
 * (mt_zstream_help, what the first pass's consumer does while it waits).
 *
 * A file of zstd frames (one exactly a chunk long, one spanning chunks,
 * an empty one, a short one) is read in reads of an odd size: alone, with
 * every free chunk decoded ahead before each read, and beside a thread
 * that helps all along.  Each must give the frames' bytes, a frame end
 * exactly at each frame's end with mt_zstream_tell the next frame's
 * offset, then the end.  A copy with a byte of the second frame changed
 * must give the bytes before zstd's error and the same error in all
 * three; a seek back after help decoded ahead must give the frame sought. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "dat_zframes.h"

#define NFRAMES 4
#define READ_CAP 7001u

static const size_t frame_len[NFRAMES] = {MT_ZCHUNK_BYTES, 150000, 0, 1000};

typedef struct file {
    int fd;
    uint64_t end[NFRAMES]; /* compressed offset after each frame */
    unsigned char *data;   /* the frames' bytes, in order */
    size_t len;
} file;

/* Bytes that compress some, different in every frame. */
static void make_file(file *f, bool corrupt)
{
    char path[] = "/tmp/test_dat_zstream.XXXXXX";
    f->fd = mkstemp(path);
    assert_true(f->fd >= 0);
    unlink(path);
    f->len = 0;
    for (unsigned i = 0; i < NFRAMES; i++)
        f->len += frame_len[i];
    f->data = malloc(f->len + 1);
    assert_non_null(f->data);
    uint32_t x = 12345;
    for (size_t i = 0; i < f->len; i++) {
        x = x * 1103515245u + 12345u;
        f->data[i] = (unsigned char)((x >> 16) % 23);
    }
    uint64_t off = 0;
    size_t at = 0;
    for (unsigned i = 0; i < NFRAMES; i++) {
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        size_t cap = ZSTD_compressBound(frame_len[i]);
        unsigned char *z = malloc(cap);
        assert_non_null(z);
        size_t n = ZSTD_compress2(cc, z, cap, f->data + at, frame_len[i]);
        assert_false(ZSTD_isError(n));
        if (corrupt && i == 1)
            z[n / 2] ^= 0x5a;
        assert_int_equal(pwrite(f->fd, z, n, (off_t)off), (ssize_t)n);
        off += n;
        at += frame_len[i];
        f->end[i] = off;
        free(z);
        ZSTD_freeCCtx(cc);
    }
}

enum mode { ALONE, AHEAD, THREAD };

typedef struct helper {
    mt_zstream *z;
    atomic_bool stop;
} helper;

static void *help_all_along(void *arg)
{
    helper *h = arg;
    while (!atomic_load(&h->stop))
        if (!mt_zstream_help(h->z))
            sched_yield();
    return NULL;
}

/* What one pass gave. */
typedef struct pass {
    size_t bytes;  /* given before the end or the error */
    unsigned ends; /* frame ends */
    mt_errc rc;    /* MT_OK: it reached the end */
    char msg[256];
    uint64_t hash; /* of the bytes given (a corrupt frame's may differ from the data) */
} pass;

/* Read z to its end or first error, checking every byte and frame end. */
static void read_pass(mt_zstream *z, const file *f, enum mode m, bool check, pass *out)
{
    helper h = {z, false};
    pthread_t th;
    if (m == THREAD)
        assert_int_equal(pthread_create(&th, NULL, help_all_along, &h), 0);
    unsigned char *buf = malloc(READ_CAP);
    assert_non_null(buf);
    memset(out, 0, sizeof *out);
    out->hash = 0xcbf29ce484222325ull;
    size_t frame_start = 0;
    for (;;) {
        if (m == AHEAD)
            while (mt_zstream_help(z))
                ;
        size_t n;
        bool fe;
        mt_err err;
        mt_errc rc = mt_zstream_read(z, buf, READ_CAP, &n, &fe, &err);
        if (rc != MT_OK) {
            out->rc = rc;
            snprintf(out->msg, sizeof out->msg, "%s", err.msg);
            break;
        }
        assert_true(out->bytes + n <= f->len);
        if (check)
            assert_memory_equal(buf, f->data + out->bytes, n);
        for (size_t i = 0; i < n; i++)
            out->hash = (out->hash ^ buf[i]) * 0x100000001b3ull;
        out->bytes += n;
        if (!n && !fe)
            break;
        if (fe) {
            assert_true(out->ends < NFRAMES);
            frame_start += frame_len[out->ends];
            assert_int_equal(out->bytes, frame_start); /* exactly at the frame's end */
            assert_false(z->mid_frame);
            assert_int_equal(mt_zstream_tell(z), f->end[out->ends]);
            out->ends++;
        }
    }
    if (m == THREAD) {
        atomic_store(&h.stop, true);
        pthread_join(th, NULL);
    }
    free(buf);
}

static void test_whole(void **state)
{
    (void)state;
    file f;
    make_file(&f, false);
    for (enum mode m = ALONE; m <= THREAD; m++) {
        mt_zstream z;
        mt_err err;
        assert_int_equal(mt_zstream_open(&z, f.fd, 0, f.end[NFRAMES - 1], &err), MT_OK);
        pass p;
        read_pass(&z, &f, m, true, &p);
        assert_int_equal(p.rc, MT_OK);
        assert_int_equal(p.ends, NFRAMES);
        assert_int_equal(p.bytes, f.len);
        assert_int_equal(mt_zstream_tell(&z), f.end[NFRAMES - 1]);
        mt_zstream_close(&z);
    }
    close(f.fd);
    free(f.data);
}

static void test_corrupt(void **state)
{
    (void)state;
    file f;
    make_file(&f, true);
    pass first;
    for (enum mode m = ALONE; m <= THREAD; m++) {
        mt_zstream z;
        mt_err err;
        assert_int_equal(mt_zstream_open(&z, f.fd, 0, f.end[NFRAMES - 1], &err), MT_OK);
        pass p;
        read_pass(&z, &f, m, false, &p);
        assert_int_equal(p.rc, MT_E_CORRUPT);
        assert_int_equal(p.ends, 1); /* the first frame whole, then zstd's error */
        if (m == ALONE)
            first = p;
        assert_int_equal(p.bytes, first.bytes);
        assert_int_equal(p.hash, first.hash);
        assert_string_equal(p.msg, first.msg);
        mt_zstream_close(&z);
    }
    close(f.fd);
    free(f.data);
}

/* A seek after chunks of later frames were decoded ahead drops them. */
static void test_seek_back(void **state)
{
    (void)state;
    file f;
    make_file(&f, false);
    mt_zstream z;
    mt_err err;
    assert_int_equal(mt_zstream_open(&z, f.fd, 0, f.end[NFRAMES - 1], &err), MT_OK);
    unsigned char *buf = malloc(MT_ZCHUNK_BYTES);
    assert_non_null(buf);
    size_t n;
    bool fe;
    while (mt_zstream_help(&z))
        ;
    assert_int_equal(mt_zstream_read(&z, buf, MT_ZCHUNK_BYTES, &n, &fe, &err), MT_OK);
    assert_true(fe);
    assert_int_equal(mt_zstream_seek(&z, f.end[1], &err), MT_OK); /* the empty frame */
    while (mt_zstream_help(&z))
        ;
    assert_int_equal(mt_zstream_read(&z, buf, MT_ZCHUNK_BYTES, &n, &fe, &err), MT_OK);
    assert_true(fe);
    assert_int_equal(n, 0);
    assert_int_equal(mt_zstream_tell(&z), f.end[2]);
    assert_int_equal(mt_zstream_read(&z, buf, MT_ZCHUNK_BYTES, &n, &fe, &err), MT_OK);
    assert_true(fe);
    assert_int_equal(n, frame_len[3]);
    assert_memory_equal(buf, f.data + f.len - frame_len[3], n);
    mt_zstream_close(&z);
    free(buf);
    close(f.fd);
    free(f.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_seek_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
