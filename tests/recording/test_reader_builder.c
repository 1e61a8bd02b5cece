/* test_reader_builder.c -- hand-built recordings (see
 * test_reader_builder.h). */
#include "test_reader_builder.h"
#include "shm_layout.h"

#include <stdbool.h>

#include <sys/mman.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

void db_bytes(db_buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

void db_v(db_buf *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    db_bytes(b, tmp, n);
}

void db_z(db_buf *b, int64_t v)
{
    db_v(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void db_s(db_buf *b, const char *s)
{
    db_v(b, strlen(s));
    db_bytes(b, s, strlen(s));
}

void db_buf_free(db_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void db_file_init(db_file *f, uint32_t version, uint32_t endian_mark)
{
    memset(f, 0, sizeof *f);
    mt_dat_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MT_DAT_MAGIC, MT_DAT_MAGIC_BYTES);
    h.version = version;
    h.header_bytes = MT_DAT_HEADER_BYTES;
    h.endian_mark = endian_mark;
    h.flags = MT_DAT_FILE_ZSTD;
    h.created_unix_ns = 1700000000000000000ull;
    db_bytes(&f->out, &h, sizeof h);
}

void db_file_free(db_file *f)
{
    db_buf_free(&f->out);
    db_buf_free(&f->frame);
}

void db_rec(db_file *f, uint64_t type, const db_buf *payload, size_t items)
{
    db_v(&f->frame, type);
    db_v(&f->frame, payload->n);
    db_bytes(&f->frame, payload->p, payload->n);
    f->items += items;
}

void db_flush(db_file *f)
{
    if (!f->frame.n || f->nframes == DB_MAX_FRAMES)
        return;
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t cap = ZSTD_compressBound(f->frame.n);
    unsigned char *tmp = malloc(cap);
    size_t n = ZSTD_compress2(c, tmp, cap, f->frame.p, f->frame.n);
    if (!tmp || ZSTD_isError(n))
        abort();
    db_bytes(&f->out, tmp, n);
    free(tmp);
    ZSTD_freeCCtx(c);
    f->frame.n = 0;
    f->frame_end[f->nframes] = f->out.n;
    f->frame_items[f->nframes] = f->items;
    f->nframes++;
}

int db_write(const void *p, size_t n, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = n ? write(fd, p, n) : 0;
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

int db_memfd(const db_file *f)
{
    int fd = memfd_create("dat", MFD_CLOEXEC);
    if (fd >= 0 && write(fd, f->out.p, f->out.n) != (ssize_t)f->out.n) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* mode: NULL, or the version-3 fields appended to PROCESS (3 values). */
/* mode: version 3's four fields (NULL: none); order: version 5's (-1: none). */
static void std_head_mode(db_file *f, const uint64_t *mode, int order, uint64_t record_start)
{
    db_buf b = {0};
    db_v(&b, 4242), db_v(&b, 1), db_v(&b, 1000), db_v(&b, 12345), db_v(&b, 1700000000000000000ull);
    db_v(&b, record_start), db_v(&b, 1700000000000000000ull), db_v(&b, 32), db_v(&b, 100000000);
    db_v(&b, 1000), db_v(&b, 0), db_s(&b, "/usr/bin/prog"), db_s(&b, "prog --flag");
    for (unsigned i = 0; mode && i < 4; i++) /* version 3: mode, cull_ms, young_max, rate */
        db_v(&b, mode[i]);
    if (order >= 0)
        db_v(&b, (uint64_t)order);
    db_rec(f, MT_DAT_REC_PROCESS, &b, 1);
    for (unsigned i = 0; i < 2; i++) {
        b.n = 0;
        db_v(&b, i), db_v(&b, 0), db_v(&b, 0x400000u + i * 0x100000u);
        db_v(&b, 0x400000u + i * 0x100000u), db_v(&b, 0x480000u + i * 0x100000u);
        db_s(&b, i ? "" : "\x01\x02\x03\x04"), db_s(&b, i ? "/lib/libc.so.6" : "/usr/bin/prog");
        db_rec(f, MT_DAT_REC_MODULE, &b, 1);
    }
    for (unsigned id = 0; id < 3; id++) {
        b.n = 0;
        db_v(&b, id), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0xabcdefu + id), db_v(&b, id ? 3 : 0);
        if (id) {
            db_v(&b, 0x401000u + id * 16), db_z(&b, 0x200), db_z(&b, -0x100);
        }
        db_rec(f, MT_DAT_REC_TRACE, &b, 1);
    }
    db_buf_free(&b);
}

static void std_totals(db_file *f, uint64_t t, uint64_t live, uint64_t peak)
{
    db_buf b = {0};
    db_v(&b, t), db_v(&b, 1700000000000000000ull + t), db_v(&b, MT_DAT_TOTALS_FIELDS);
    for (unsigned i = 0; i < MT_DAT_TOTALS_FIELDS; i++)
        db_v(&b, i == 0 ? live : i == 8 ? peak : i == 15 ? 1u << 20 : i == 13 ? UINT64_MAX : i);
    db_v(&b, 0), db_v(&b, 0);
    db_rec(f, MT_DAT_REC_TOTALS, &b, 1);
    db_buf_free(&b);
}

void db_totals(db_file *f, uint64_t t, uint64_t live, uint64_t peak)
{
    std_totals(f, t, live, peak);
}

void db_ev2_tag(db_ev2 *e, unsigned tag)
{
    unsigned char t = (unsigned char)tag;
    db_bytes(&e->col[0][0], &t, 1);
    e->n++;
}

void db_ev2_put(db_ev2 *e, unsigned col, uint64_t v)
{
    unsigned char lead = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    db_bytes(&e->col[col][0], &lead, 1);
    if (v >= 0x80)
        db_v(&e->col[col][1], v >> 7);
}

/* v8: version 8's head (tags_len) and the tags column `tags` (len
 * bytes) instead of e's tags. */
static void ev2_record(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base, bool v8,
                       const unsigned char *tags, size_t len)
{
    db_buf b = {0};
    db_v(&b, tid), db_v(&b, base), db_v(&b, e->n);
    if (v8)
        db_v(&b, len);
    for (unsigned c = DB_TIMES; c < DB_COLS; c++)
        db_v(&b, e->col[c][0].n), db_v(&b, e->col[c][1].n);
    if (v8)
        db_bytes(&b, tags, len);
    for (unsigned c = v8 ? DB_TIMES : 0; c < DB_COLS; c++)
        for (unsigned k = 0; k < 2; k++)
            db_bytes(&b, e->col[c][k].p, e->col[c][k].n);
    db_rec(f, MT_DAT_REC_EVENTS2, &b, e->n);
    db_buf_free(&b);
    db_ev2_free(e);
}

void db_ev2_record(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base)
{
    ev2_record(f, e, tid, base, false, NULL, 0);
}

void db_ev2_record8(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base, const unsigned char *tags,
                    size_t len)
{
    if (!tags)
        tags = e->col[0][0].p, len = e->col[0][0].n;
    ev2_record(f, e, tid, base, true, tags, len);
}

void db_tag_pairs(db_file *f, const db_pairs *t)
{
    db_buf b = {0};
    unsigned n = 0;
    for (unsigned c = 0; c < 256; c++)
        n += t->n[c] > 0;
    db_v(&b, n);
    for (unsigned c = 0; c < 256; c++) {
        if (!t->n[c])
            continue;
        db_v(&b, c), db_v(&b, t->n[c]);
        for (unsigned x = 0; x < t->n[c]; x++)
            db_v(&b, t->p[c][x]);
    }
    db_rec(f, MT_DAT_REC_TAG_PAIRS, &b, 0);
    db_buf_free(&b);
}

/* The code of pair in context c of t, or -1. */
static int pair_code(const db_pairs *t, unsigned c, unsigned pair)
{
    for (unsigned x = 0; x < t->n[c]; x++)
        if (t->p[c][x] == pair)
            return (int)x;
    return -1;
}

void db_ev2_code(const db_pairs *t, const db_ev2 *e, db_buf *out, uint64_t *rng)
{
    const unsigned char *g = e->col[0][0].p;
    unsigned c = 0;
    out->n = 0;
    for (size_t i = 0; i + 1 < e->n; i += 2) {
        int x = pair_code(t, c, g[i] | (unsigned)g[i + 1] << 8);
        if (x >= 0 && !(rng && test_xorshift(rng) % 8 == 0)) {
            unsigned char b = (unsigned char)x;
            db_bytes(out, &b, 1);
        } else {
            unsigned char esc[3] = {MT_DAT_TAG_ESCAPE, g[i], g[i + 1]};
            db_bytes(out, esc, 3);
        }
        c = g[i + 1];
    }
    if (e->n & 1)
        db_bytes(out, &g[e->n - 1], 1);
}

void db_ev2_free(db_ev2 *e)
{
    for (unsigned c = 0; c < DB_COLS; c++)
        for (unsigned k = 0; k < 2; k++)
            db_buf_free(&e->col[c][k]);
    e->n = 0;
}

/* Thread 1 (EVENTS2): alloc 7 (trace 1, block (1, 0)), alloc 100 (block
 * (1, 1)), a temporary free naming block (1, 0): ref 1. */
static void std_thread1(db_file *f, uint64_t base)
{
    db_ev2 e = {0};
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_SIZES, 7);
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TRACE);
    db_ev2_put(&e, DB_TIMES, 1000), db_ev2_put(&e, DB_SIZES, 100);
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TRACE | (MT_DAT_EVF_TEMPORARY << 4));
    db_ev2_put(&e, DB_TIMES, 1000), db_ev2_put(&e, DB_REFS, 1);
    db_ev2_record(f, &e, 1, base);
}

/* Thread 2: alloc 10 (trace 2), alloc 50, a free of the 50 born this
 * round (1 ms before), not temporary.  kind 0: EVENTS2, the free in full
 * with SAME_SIZE; 1: EVENTS2, the free names block (2, 1); 2: EVENTS. */
static void std_thread2(db_file *f, uint64_t base, unsigned kind)
{
    if (kind < 2) {
        db_ev2 e = {0};
        db_ev2_tag(&e, MT_DAT_EV_ALLOC);
        db_ev2_put(&e, DB_TIMES, 0), db_ev2_put(&e, DB_TRACES, 2), db_ev2_put(&e, DB_SIZES, 10);
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TRACE);
        db_ev2_put(&e, DB_TIMES, 1000), db_ev2_put(&e, DB_SIZES, 50);
        db_ev2_tag(&e, (kind ? MT_DAT_EV_FREE_REF : MT_DAT_EV_FREE | MT_DAT_EV_SAME_SIZE) |
                           MT_DAT_EV_SAME_TRACE);
        db_ev2_put(&e, DB_TIMES, 1000000), db_ev2_put(&e, kind ? DB_REFS : DB_AGES, kind ? 0 : 1);
        db_ev2_record(f, &e, 2, base + 500);
        return;
    }
    db_buf b = {0};
    db_v(&b, 2), db_v(&b, base + 500), db_v(&b, 3);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC}, 1), db_v(&b, 0), db_v(&b, 2), db_v(&b, 10);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, 1000),
        db_v(&b, 50);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_FREE | MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, 1000000),
        db_v(&b, 50), db_v(&b, 1);
    db_rec(f, MT_DAT_REC_EVENTS, &b, 3);
    db_buf_free(&b);
}

static void std_round(db_file *f, unsigned i)
{
    uint64_t base = (uint64_t)i * 1000000000ull;
    std_thread1(f, base);
    std_thread2(f, base, i % 3);
    std_totals(f, base + 900000000ull, 110ull * (i + 1), 110ull * (i + 1) + 57);
}

static void std_final(db_file *f, unsigned rounds, unsigned reason)
{
    db_buf b = {0};
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, (uint64_t)rounds * 1000000000ull), db_v(&b, 1);
    db_rec(f, MT_DAT_REC_STATE_BEGIN, &b, 1);
    b.n = 0;
    db_v(&b, 2);
    db_v(&b, 1), db_v(&b, 2 * rounds), db_v(&b, 107 * rounds), db_v(&b, rounds),
        db_v(&b, 7 * rounds);
    db_v(&b, rounds), db_v(&b, 7 * rounds), db_v(&b, 100 * rounds + 7);
    db_v(&b, 1), db_v(&b, 2 * rounds), db_v(&b, 60 * rounds), db_v(&b, rounds),
        db_v(&b, 50 * rounds);
    db_v(&b, 0), db_v(&b, 0), db_v(&b, 10 * rounds + 50);
    db_rec(f, MT_DAT_REC_TRACE_STATES, &b, 2);
    std_totals(f, (uint64_t)rounds * 1000000000ull, 110ull * rounds, 110ull * rounds + 57);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, 2), db_v(&b, 0);
    db_rec(f, MT_DAT_REC_STATE_END, &b, 1);
    b.n = 0;
    db_v(&b, (uint64_t)rounds * 1000000000ull), db_v(&b, 1), db_v(&b, reason), db_v(&b, 0);
    db_v(&b, 6 * rounds), db_v(&b, 0);
    db_rec(f, MT_DAT_REC_END, &b, 1);
    db_buf_free(&b);
}

static void std_head(db_file *f, uint64_t record_start)
{
    std_head_mode(f, NULL, -1, record_start);
}

void db_culled_head(db_file *f, uint32_t version, uint64_t mode, uint64_t cull_ms)
{
    db_order_head(f, version, mode, cull_ms, version >= 5 ? MT_DAT_ORDER_THREAD : -1);
}

void db_order_head(db_file *f, uint32_t version, uint64_t mode, uint64_t cull_ms, int order)
{
    uint64_t m[4] = {mode, cull_ms, 16, 0};
    db_file_init(f, version, MT_DAT_ENDIAN_MARK);
    std_head_mode(f, m, order, 0);
    std_totals(f, 0, 0, 0);
    db_flush(f);
}

void db_culled_rec(db_file *f, uint64_t t, const uint64_t (*e)[5], size_t n)
{
    db_buf b = {0};
    db_v(&b, t), db_v(&b, 7), db_v(&b, 3), db_v(&b, n);
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < 5; k++)
            db_v(&b, e[i][k]);
    db_rec(f, MT_DAT_REC_CULLED, &b, n);
    db_buf_free(&b);
}

void db_culled(db_file *f, unsigned seconds, int finalize)
{
    static const uint64_t e[2][5] = {{1, 3, 30, 1, 10}, {1, 1, 8, 0, 0}};
    db_culled_head(f, MT_DAT_VERSION_PREV, MT_DAT_MODE_CULLED, 1000);
    for (unsigned i = 0; i < seconds; i++) {
        std_round(f, i);
        db_culled_rec(f, (uint64_t)i * 1000000000ull + 500000000u, e, 2);
        db_flush(f);
    }
    if (finalize) {
        std_final(f, seconds, MT_DAT_END_EXIT);
        db_flush(f);
    }
}

void db_sampled(db_file *f, unsigned seconds, uint64_t rate)
{
    uint64_t m[4] = {MT_DAT_MODE_FULL, 0, 16, rate};
    db_file_init(f, MT_DAT_VERSION_PREV, MT_DAT_ENDIAN_MARK);
    std_head_mode(f, m, MT_DAT_ORDER_THREAD, 0);
    std_totals(f, 0, 0, 0);
    db_flush(f);
    for (unsigned i = 0; i < seconds; i++) {
        std_round(f, i);
        db_flush(f);
    }
    std_final(f, seconds, MT_DAT_END_EXIT);
    db_flush(f);
}

void db_standard(db_file *f, unsigned seconds, int finalize)
{
    db_standard_end(f, seconds, finalize ? MT_DAT_END_EXIT : 0);
}

void db_standard_end(db_file *f, unsigned seconds, unsigned reason)
{
    db_standard_from(f, seconds, reason, 0);
}

void db_standard_from(db_file *f, unsigned seconds, unsigned reason, uint64_t record_start)
{
    db_file_init(f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    std_head(f, record_start);
    std_totals(f, 0, 0, 0);
    db_flush(f);
    for (unsigned i = 0; i < seconds; i++) {
        std_round(f, i);
        db_flush(f);
    }
    if (reason) {
        std_final(f, seconds, reason);
        db_flush(f);
    }
}

void db_allocators(db_file *f, unsigned seconds)
{
    db_file_init(f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    std_head(f, 0);
    std_totals(f, 0, 0, 0);
    db_flush(f);
    db_buf b = {0};
    for (unsigned i = 0; i < seconds; i++) {
        std_round(f, i);
        db_flush(f);
        uint64_t n = i % MT_ALLOC_MAX + 1, more = i >= 3, inexact = n / 2 + more;
        b.n = 0;
        db_v(&b, (uint64_t)i * 1000000000u + 500000000u), db_v(&b, n), db_v(&b, inexact);
        db_v(&b, more);
        for (uint64_t k = 0; k < n; k++) {
            bool unseen = k % 2 == 1;
            db_v(&b, 1 + k % MT_ALLOC_KIND_MAX);
            db_v(&b, MT_ALLOC_STATIC | (unseen ? MT_ALLOC_INEXACT : MT_ALLOC_HOOKED));
            db_s(&b, "je_"), db_s(&b, "5.3.0"), db_s(&b, "/usr/lib/libplugin.so");
            db_s(&b, unseen ? "statically linked jemalloc in libplugin.so not hooked" : "");
        }
        db_rec(f, MT_DAT_REC_ALLOCATORS, &b, 0);
        db_flush(f);
    }
    db_buf_free(&b);
}
