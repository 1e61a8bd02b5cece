/* dat_reader.c -- opening a recording, checking its header, and cutting
 * the decompressed stream into records (see dat_reader.h).  The records'
 * contents are decoded in dat_reader_records.c. */
#include "dat_reader_events2.h"
#include "dat_reader_impl.h"
#include "dat_stdin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (128u << 10)
#define HEADER_MAX 20u /* two varints */
#define BUF_MAX (MT_DAT_RECORD_MAX + HEADER_MAX)

/* Whether a whole header's bytes are zeros: what a recording truncated
 * while being written (`: > f.dat`) holds at its head, since the writer
 * goes on writing at its old offset and the file becomes sparse. */
static bool zero_head(const mt_dat_file_header *h, uint64_t bytes)
{
    const unsigned char *p = (const unsigned char *)h;
    if (bytes < sizeof *h)
        return false;
    for (size_t i = 0; i < sizeof *h; i++)
        if (p[i])
            return false;
    return true;
}

static mt_errc check_header(const mt_dat_file_header *h, uint64_t file_bytes, mt_err *err)
{
    if (zero_head(h, file_bytes))
        return mt_err_set(err, MT_E_NOTMEMTOP,
                          "not a memtop recording any more: its head is zeros (the file was "
                          "truncated while being written)");
    if (file_bytes == 0)
        return mt_err_set(err, MT_E_NOTMEMTOP,
                          "not a memtop recording: the file is empty (nothing was written to it)");
    size_t have = file_bytes < MT_DAT_MAGIC_BYTES ? (size_t)file_bytes : MT_DAT_MAGIC_BYTES;
    if (memcmp(h->magic, MT_DAT_MAGIC, have))
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop recording (bad magic)");
    if (file_bytes < sizeof *h)
        return mt_err_set(err, MT_E_TRUNCATED, "truncated recording: %llu bytes, header needs %zu",
                          (unsigned long long)file_bytes, sizeof *h);
    if (h->endian_mark == __builtin_bswap32(MT_DAT_ENDIAN_MARK))
        return mt_err_set(err, MT_E_FOREIGN, "foreign byte order (recording of a big-endian host)");
    if (h->version < MT_DAT_VERSION_MIN || h->version > MT_DAT_VERSION)
        return mt_err_set(err, MT_E_FOREIGN,
                          "foreign version %u (this memtop reads recording versions %u to %u)",
                          h->version, MT_DAT_VERSION_MIN, MT_DAT_VERSION);
    if (h->endian_mark != MT_DAT_ENDIAN_MARK)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: byte order mark 0x%08x",
                          h->endian_mark);
    if (h->header_bytes < sizeof *h || h->header_bytes > file_bytes)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: header_bytes %u", h->header_bytes);
    if (!(h->flags & MT_DAT_FILE_ZSTD))
        return mt_err_set(err, MT_E_FOREIGN, "foreign recording: not zstd-compressed");
    return MT_OK;
}

static mt_errc read_header(mt_dat_reader *r, uint64_t *frames_at, mt_err *err)
{
    mt_dat_file_header h;
    memset(&h, 0, sizeof h);
    ssize_t n = pread(r->fd, &h, sizeof h, 0);
    if (n < 0)
        return mt_err_set(err, MT_E_IO, "read: %s", strerror(errno));
    mt_errc rc =
        check_header(&h, (uint64_t)n < r->info.file_bytes ? (uint64_t)n : r->info.file_bytes, err);
    if (rc == MT_E_TRUNCATED && (uint64_t)n < r->info.file_bytes)
        rc = mt_err_set(err, MT_E_IO, "short read of the header");
    if (rc)
        return rc;
    if (h.header_bytes > r->info.file_bytes)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: header_bytes %u", h.header_bytes);
    r->info.created_unix_ns = h.created_unix_ns;
    r->info.version = h.version;
    *frames_at = h.header_bytes;
    return MT_OK;
}

static mt_errc scan(mt_dat_reader *r, uint64_t frames_at, mt_err *err)
{
    mt_zscan zs;
    mt_errc rc = mt_zscan_frames(r->fd, frames_at, r->info.file_bytes, &zs, err);
    if (rc)
        return rc;
    r->info.data_end = zs.end;
    r->info.frames = zs.nframes;
    r->info.truncated = zs.truncated;
    r->info.invalid_tail = zs.invalid_tail;
    r->info.dropped_bytes = r->info.file_bytes - zs.end;
    r->cap = CHUNK;
    r->buf = malloc(r->cap);
    if (!r->buf)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the recording buffer");
    r->frame_start = MT_DAT_NO_FRAME;
    r->next_start = frames_at;
    r->at_boundary = true;
    return mt_zstream_open(&r->z, r->fd, frames_at, zs.end, err);
}

static mt_errc open_checked(mt_dat_reader *r, mt_err *err)
{
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        return mt_err_set(err, MT_E_IO, "fstat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop recording (not a regular file)");
    r->info.file_bytes = (uint64_t)st.st_size;
    uint64_t frames_at = 0;
    mt_errc rc = read_header(r, &frames_at, err);
    return rc ? rc : scan(r, frames_at, err);
}

mt_dat_reader *mt_dat_open_fd(int fd, const char *label, mt_err *err)
{
    mt_dat_reader *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        mt_err_set(err, MT_E_NOMEM, "out of memory");
        return NULL;
    }
    r->fd = fd;
    mt_dctx_init(&r->ctx);
    snprintf(r->label, sizeof r->label, "%s", label ? label : "");
    if (open_checked(r, err) != MT_OK) {
        mt_dat_close(r);
        return NULL;
    }
    return r;
}

mt_dat_reader *mt_dat_open(const char *path, mt_err *err)
{
    if (mt_dat_path_is_stdin(path)) {
        int in = mt_dat_stdin_fd(err);
        return in < 0 ? NULL : mt_dat_open_fd(in, MT_DAT_STDIN_NAME, err);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
    if (fd < 0) {
        int e = errno;
        mt_errc c = e == ENOENT ? MT_E_NOENT : e == EACCES || e == EPERM ? MT_E_PERM : MT_E_IO;
        mt_err_set(err, c, "cannot open: %s", strerror(e));
        return NULL;
    }
    return mt_dat_open_fd(fd, path, err);
}

void mt_dat_close(mt_dat_reader *r)
{
    if (!r)
        return;
    if (r->z.ds)
        mt_zstream_close(&r->z);
    free(r->buf);
    mt_dctx_free(&r->ctx);
    free(r->tp.t);
    free(r->alloc_lists);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

const mt_dat_info *mt_dat_get_info(const mt_dat_reader *r)
{
    return &r->info;
}

const mt_shm_allocators *mt_dat_allocators(const mt_dat_reader *r)
{
    return r->have_allocs ? &r->allocs : NULL;
}

const mt_shm_allocators *mt_dat_allocators_at(const mt_dat_reader *r, uint64_t t_ns)
{
    const mt_shm_allocators *a = NULL;
    for (size_t i = 0; i < r->nalloc_lists && r->alloc_lists[i].t <= t_ns; i++)
        a = &r->alloc_lists[i].a; /* kept in time order (dec_allocators) */
    return a;
}

uint64_t mt_dat_records_skipped(const mt_dat_reader *r)
{
    return r->skipped;
}

/* Make room for more bytes: drop consumed ones, grow up to BUF_MAX. */
static mt_errc make_room(mt_dat_reader *r, mt_err *err)
{
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len < r->cap)
        return MT_OK;
    if (r->cap >= BUF_MAX)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: record longer than %u bytes",
                          MT_DAT_RECORD_MAX);
    size_t cap = r->cap * 2 < BUF_MAX ? r->cap * 2 : BUF_MAX;
    unsigned char *b = realloc(r->buf, cap);
    if (!b)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for a record");
    r->buf = b;
    r->cap = cap;
    return MT_OK;
}

/* More decompressed bytes of the current frame; MT_E_EMPTY at the end of
 * the data.  A record may not continue into the next frame. */
static mt_errc fill(mt_dat_reader *r, mt_err *err)
{
    if (r->pos == r->len) {
        if (r->frame_done) { /* the next bytes start a frame */
            mt_errc rc = mt_dat_flush_blocks(r, err);
            if (rc)
                return rc;
            mt_dctx_new_frame(&r->ctx);
            mt_dtp_reset(&r->tp);
            r->defer_on = r->defer_fn != NULL;
            r->given_allocs = 0;
        }
        r->pos = r->len = 0;
        r->frame_done = false;
    }
    if (r->frame_done)
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt recording: a record runs past the end of its frame");
    mt_errc rc = make_room(r, err);
    if (rc)
        return rc;
    size_t n;
    bool fe;
    rc = mt_zstream_read(&r->z, r->buf + r->len, r->cap - r->len, &n, &fe, err);
    if (rc)
        return rc;
    if (r->at_boundary && (n || fe)) { /* the first bytes of a frame */
        r->frame_start = r->next_start;
        r->at_boundary = false;
    }
    if (fe) {
        r->next_start = mt_zstream_tell(&r->z);
        r->at_boundary = true;
    }
    r->len += n;
    r->frame_done = fe;
    if (n == 0 && !fe)
        return r->len == 0 ? MT_E_EMPTY
                           : mt_err_set(err, MT_E_CORRUPT,
                                        "corrupt recording: data ends inside "
                                        "a record");
    return MT_OK;
}

/* Parse the record header at pos; 1 when complete, 0 when more bytes are
 * needed, -1 when corrupt. */
static int parse_header(mt_dat_reader *r, uint64_t *type, mt_dcur *payload)
{
    mt_dcur c = {r->buf + r->pos, r->buf + r->len};
    uint64_t len;
    if (!mt_dcur_v(&c, type) || !mt_dcur_v(&c, &len))
        return r->len - r->pos >= HEADER_MAX ? -1 : 0;
    if (len > MT_DAT_RECORD_MAX)
        return -1;
    if ((uint64_t)(c.end - c.p) < len)
        return 0;
    payload->p = c.p;
    payload->end = c.p + len;
    return 1;
}

/* The next whole record of the current frame: its type and payload
 * (inside r->buf); MT_E_EMPTY with r->frame_done when the frame is read
 * whole, or without it at the end of the data. */
static mt_errc record_in_frame(mt_dat_reader *r, uint64_t *type, mt_dcur *payload, mt_err *err)
{
    for (;;) {
        int h = r->pos < r->len ? parse_header(r, type, payload) : 0;
        if (h < 0)
            return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: bad header of record %llu",
                              (unsigned long long)r->records + 1);
        if (h > 0) {
            r->pos = (size_t)(payload->end - r->buf);
            r->records++;
            return MT_OK;
        }
        if (r->frame_done && r->pos == r->len)
            return MT_E_EMPTY; /* fill would start the next frame */
        mt_errc rc = fill(r, err);
        if (rc)
            return rc;
    }
}

/* The next whole record, in this frame or the ones after. */
static mt_errc next_record(mt_dat_reader *r, uint64_t *type, mt_dcur *payload, mt_err *err)
{
    for (;;) {
        mt_errc rc = record_in_frame(r, type, payload, err);
        if (rc != MT_E_EMPTY || !r->frame_done)
            return rc;
        if ((rc = fill(r, err)) != MT_OK) /* the next frame begins */
            return rc;
    }
}

mt_errc mt_dat_next(mt_dat_reader *r, mt_dat_event *ev, mt_err *err)
{
    for (;;) {
        mt_errc rc;
        if (r->in_rec) {
            rc = mt_dat_decode_item(r, ev, err);
        } else {
            uint64_t type = 0;
            mt_dcur payload = {NULL, NULL};
            rc = next_record(r, &type, &payload, err);
            if (rc)
                return rc; /* MT_E_EMPTY: the end (a state set cut short is ignored) */
            rc = mt_dat_decode(r, type, payload, ev, err);
        }
        if (rc != MT_E_EMPTY)
            return rc;
    }
}

void mt_dat_defer_blocks(mt_dat_reader *r, mt_dat_block_fn fn, void *ctx)
{
    r->defer_fn = fn;
    r->defer_ctx = ctx;
    /* the frame in progress has given its blocks undeferred: its next ones
     * too (mt_dctx_give would give them again) */
    r->defer_on = fn && r->ctx.frame_allocs == 0;
    r->given_allocs = 0;
}

mt_errc mt_dat_flush_blocks(mt_dat_reader *r, mt_err *err)
{
    if (!r->defer_on || r->ctx.frame_allocs == r->given_allocs)
        return MT_OK;
    r->given_allocs = r->ctx.frame_allocs;
    if (mt_dctx_give(&r->ctx, r->defer_fn, r->defer_ctx) != 0)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
    return MT_OK;
}

bool mt_dat_tell(const mt_dat_reader *r, mt_dat_pos *pos)
{
    if (r->in_rec || r->pos != r->len || r->z.mid_frame || r->in_set)
        return false;
    pos->offset = mt_zstream_tell(&r->z);
    pos->prev_frame = r->frame_start;
    pos->ndefs = r->ndefs;
    pos->nmodules = r->nmodules;
    pos->t_ns = r->t_last;
    pos->lost_events = r->lost_events;
    pos->started = r->have_process;
    pos->culled = r->culled;
    pos->tick_order = r->tick_order;
    return true;
}

/* The EVENTS2 records of the frame at the reader's position, into the
 * frame context only (nothing given, no other record read but version
 * 8's TAG_PAIRS, which its EVENTS2 records need): the frame
 * before a seek's target, whose blocks its FREE_PREVs name.  Stops at the
 * frame's end, where a frame of the file ends, with the reader as if it
 * had read the frame in order.  Its events are checked against the
 * definitions at the target (the first reading checked them against
 * those before each event), and its records count in r->records. */
static mt_errc rebuild_frame(mt_dat_reader *r, mt_err *err)
{
    mt_dat_hev b[64];
    mt_dat_event ev;
    size_t n;
    uint64_t type = 0;
    mt_dcur payload = {NULL, NULL};
    mt_errc rc;
    while ((rc = record_in_frame(r, &type, &payload, err)) == MT_OK) {
        if (type != MT_DAT_REC_EVENTS2 && (type != MT_DAT_REC_TAG_PAIRS || !mt_dat_v8(r)))
            continue; /* TAG_PAIRS before version 8: an unknown record, not counted again */
        rc = mt_dat_decode(r, type, payload, &ev, err);
        while (rc == MT_OK && r->in_rec)
            if ((rc = mt_dat_next_batch(r, b, sizeof b / sizeof *b, &n, err)) == MT_OK && !n)
                rc = mt_dat_decode_item(r, &ev, err);
        if (rc != MT_OK && rc != MT_E_EMPTY)
            return rc;
    }
    if (rc == MT_E_EMPTY && !r->frame_done)
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt recording: the frame before a position ends early");
    return rc == MT_E_EMPTY ? MT_OK : rc;
}

bool mt_dat_decode_ahead(mt_dat_reader *r)
{
    return mt_zstream_help(&r->z);
}

mt_errc mt_dat_seek(mt_dat_reader *r, const mt_dat_pos *pos, mt_err *err)
{
    /* a FREE_PREV of the frame at pos names a block of the frame before:
     * that one is decoded first (version 6) */
    bool before = pos->prev_frame != MT_DAT_NO_FRAME && r->info.version >= MT_DAT_VERSION_PREV;
    mt_errc rc = mt_dat_flush_blocks(r, err);
    if (!rc)
        rc = mt_zstream_seek(&r->z, before ? pos->prev_frame : pos->offset, err);
    if (rc)
        return rc;
    r->pos = r->len = 0;
    r->frame_done = false;
    r->frame_start = MT_DAT_NO_FRAME;
    r->next_start = before ? pos->prev_frame : pos->offset;
    r->at_boundary = true;
    r->in_rec = false;
    r->in_set = false;
    mt_dctx_forget(&r->ctx);
    mt_dtp_reset(&r->tp);
    r->ndefs = pos->ndefs;
    r->nmodules = pos->nmodules;
    r->have_process = pos->started;
    r->culled = pos->culled;
    r->tick_order = pos->tick_order;
    r->defer_on = false;
    r->t_last = pos->t_ns; /* before the frame before, so that a failure leaves them too */
    r->lost_events = pos->lost_events;
    if (before) {
        r->rebuilding = true;
        rc = rebuild_frame(r, err);
        r->rebuilding = false;
        if (!rc && (mt_zstream_tell(&r->z) != pos->offset || r->in_rec))
            rc = mt_err_set(err, MT_E_CORRUPT,
                            "corrupt recording: the frame before a position does not end there");
        if (rc)
            return rc;
    }
    /* the frame before's blocks were given when it was read first */
    r->defer_on = r->defer_fn != NULL;
    r->given_allocs = r->ctx.frame_allocs;
    r->t_last = pos->t_ns; /* the frame before's events moved it */
    return MT_OK;
}
