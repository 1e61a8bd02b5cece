/* test_reader_unit.c -- unit tests of the recording reader (src/ipc
 * dat_reader*) on hand-built files: a valid file event by event, header
 * errors, a cut at every byte, skipped unknown records, corrupt records,
 * LOST's causes (read, absent in older files, corrupt),
 * and restarting at a frame boundary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "dat_reader.h"
#include "dat_reader_tables.h"
#include "test_reader_builder.h"

static mt_dat_reader *open_mem(const void *p, size_t n, mt_err *err)
{
    int fd = memfd_create("dat", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    return mt_dat_open_fd(fd, "mem", err);
}

/* Events until the end; the code that ended it in *end. */
static size_t count_events(mt_dat_reader *r, mt_errc *end, mt_err *err)
{
    mt_dat_event ev;
    size_t n = 0;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, err)) == MT_OK)
        n++;
    *end = rc;
    return n;
}

static void valid_file(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 3, 1);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    const mt_dat_info *in = mt_dat_get_info(r);
    assert_false(in->truncated);
    assert_int_equal(in->dropped_bytes, 0);
    assert_int_equal(in->frames, f.nframes);
    mt_dat_event ev;
    assert_int_equal(mt_dat_next(r, &ev, &err), MT_OK);
    assert_int_equal(ev.kind, MT_DAT_PROCESS);
    assert_int_equal(ev.u.proc.pid, 4242);
    assert_string_equal(ev.u.proc.exe, "/usr/bin/prog");
    assert_string_equal(ev.u.proc.cmdline, "prog --flag");
    assert_int_equal(mt_dat_next(r, &ev, &err), MT_OK);
    assert_int_equal(ev.kind, MT_DAT_MODULE);
    assert_int_equal(ev.u.mod.build_id_len, 4);
    assert_int_equal(ev.u.mod.start, 0x400000);
    assert_int_equal(mt_dat_next(r, &ev, &err), MT_OK);
    assert_int_equal(mt_dat_next(r, &ev, &err), MT_OK);
    assert_int_equal(ev.kind, MT_DAT_DEF);
    assert_int_equal(ev.u.def.nframes, 0);
    assert_int_equal(mt_dat_next(r, &ev, &err), MT_OK);
    assert_int_equal(ev.u.def.id, 1);
    assert_int_equal(ev.u.def.nframes, 3);
    assert_int_equal(ev.u.def.frames[0], 0x401010);
    assert_int_equal(ev.u.def.frames[1], 0x401210);
    assert_int_equal(ev.u.def.frames[2], 0x401110);
    mt_errc end;
    size_t rest = count_events(r, &end, &err);
    assert_int_equal(end, MT_E_EMPTY);
    assert_int_equal(rest + 5, f.items);
    mt_dat_close(r);
    db_file_free(&f);
}

static void events_decoded(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 2, 1);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    mt_dat_event ev;
    unsigned allocs = 0, frees = 0, temps = 0;
    uint64_t bytes = 0, freed = 0;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        if (ev.kind == MT_DAT_ALLOC) {
            allocs++;
            bytes += ev.u.ev.size;
            assert_int_equal(ev.u.ev.birth_ms, ev.t_ns / 1000000u);
        } else if (ev.kind == MT_DAT_FREE) {
            frees++;
            freed += ev.u.ev.size;
            temps += (ev.u.ev.flags & MT_DAT_EVF_TEMPORARY) != 0;
            assert_true(ev.u.ev.birth_ms <= ev.t_ns / 1000000u);
            assert_true(ev.u.ev.tid == 1 || ev.u.ev.tid == 2);
        }
    }
    assert_int_equal(allocs, 8);
    assert_int_equal(frees, 4);
    assert_int_equal(temps, 2);
    assert_int_equal(bytes, 2 * 167);
    assert_int_equal(freed, 2 * 57);
    mt_dat_close(r);
    db_file_free(&f);
}

static void expect_open_error(const void *p, size_t n, mt_errc code, const char *needle)
{
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = open_mem(p, n, &err);
    assert_null(r);
    assert_int_equal(err.code, code);
    if (needle && !strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
}

static void header_errors(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 1, 1);
    unsigned char *p = f.out.p;
    expect_open_error(p, 0, MT_E_NOTMEMTOP, "the file is empty");
    /* cut inside the magic: a recording's start, truncated (not "bad magic") */
    expect_open_error(p, 3, MT_E_TRUNCATED, "truncated recording: 3 bytes");
    expect_open_error("MEMX", 4, MT_E_NOTMEMTOP, "magic");
    expect_open_error("hello world, not a recording at all", 35, MT_E_NOTMEMTOP, "magic");
    expect_open_error(p, 20, MT_E_TRUNCATED, "truncated");
    /* truncated while being written: the writer went on at its old
     * offset, the head is a hole of zeros (not just "bad magic") */
    unsigned char *sparse = calloc(1, f.out.n + 4096);
    assert_non_null(sparse);
    memcpy(sparse + 4096, p + MT_DAT_HEADER_BYTES, f.out.n - MT_DAT_HEADER_BYTES);
    expect_open_error(sparse, f.out.n + 4096, MT_E_NOTMEMTOP, "truncated while being written");
    free(sparse);
    db_file g;
    db_file_init(&g, MT_DAT_VERSION + 1, MT_DAT_ENDIAN_MARK);
    char foreign[32];
    snprintf(foreign, sizeof foreign, "foreign version %u", MT_DAT_VERSION + 1);
    expect_open_error(g.out.p, g.out.n, MT_E_FOREIGN, foreign);
    db_file_free(&g);
    db_file_init(&g, MT_DAT_VERSION_MIN - 1, MT_DAT_ENDIAN_MARK);
    expect_open_error(g.out.p, g.out.n, MT_E_FOREIGN, "foreign version 0");
    db_file_free(&g);
    db_file_init(&g, MT_DAT_VERSION_FULL, __builtin_bswap32(MT_DAT_ENDIAN_MARK));
    expect_open_error(g.out.p, g.out.n, MT_E_FOREIGN, "byte order");
    db_file_free(&g);
    unsigned char copy[64];
    memcpy(copy, p, sizeof copy);
    copy[12] = 200; /* header_bytes beyond the file */
    expect_open_error(copy, sizeof copy, MT_E_CORRUPT, "header_bytes");
    db_file_free(&f);
}

/* A cut at every byte: nothing before the header opens; after it, the
 * reader keeps exactly the complete frames and says how much it dropped. */
static void cut_everywhere(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 3, 1);
    for (size_t len = 0; len < f.out.n; len++) {
        mt_err err = {MT_OK, ""};
        mt_dat_reader *r = open_mem(f.out.p, len, &err);
        if (len < MT_DAT_HEADER_BYTES) {
            assert_null(r);
            assert_true(err.code == MT_E_NOTMEMTOP || err.code == MT_E_TRUNCATED);
            continue;
        }
        assert_non_null(r);
        size_t frames = 0;
        while (frames < f.nframes && f.frame_end[frames] <= len)
            frames++;
        size_t end = frames ? f.frame_end[frames - 1] : MT_DAT_HEADER_BYTES;
        const mt_dat_info *in = mt_dat_get_info(r);
        assert_int_equal(in->frames, frames);
        assert_int_equal(in->truncated, len != end);
        assert_int_equal(in->dropped_bytes, len - end);
        mt_errc code;
        size_t n = count_events(r, &code, &err);
        assert_int_equal(code, MT_E_EMPTY);
        assert_int_equal(n, frames ? f.frame_items[frames - 1] : 0);
        mt_dat_close(r);
    }
    db_file_free(&f);
}

/* A file of PROCESS plus one extra record in its own frame. */
static void with_record(db_file *f, uint64_t type, const db_buf *payload)
{
    db_standard(f, 1, 0);
    db_rec(f, type, payload, 0);
    db_flush(f);
}

/* Opens f and reads it to the end: events in *n, the reader's info in
 * *info unless NULL. */
static mt_errc read_all_info(const db_file *f, mt_err *err, size_t *n, mt_dat_info *info)
{
    mt_dat_reader *r = open_mem(f->out.p, f->out.n, err);
    if (!r)
        return err->code;
    if (info)
        *info = *mt_dat_get_info(r);
    mt_errc code;
    *n = count_events(r, &code, err);
    mt_dat_close(r);
    return code;
}

static mt_errc read_all(const db_file *f, mt_err *err, size_t *n)
{
    return read_all_info(f, err, n, NULL);
}

static void unknown_records_skipped(void **state)
{
    (void)state;
    db_buf b = {0};
    db_s(&b, "a record from the future");
    db_file f;
    with_record(&f, 99, &b);
    mt_err err;
    size_t n;
    assert_int_equal(read_all(&f, &err, &n), MT_E_EMPTY);
    assert_int_equal(n, f.items);
    db_file_free(&f);
    /* a known record with fields appended by a newer writer */
    b.n = 0;
    db_v(&b, 1), db_v(&b, 5), db_v(&b, 1234), db_v(&b, 99), db_v(&b, 98);
    with_record(&f, MT_DAT_REC_MODULE_UNLOAD, &b);
    assert_int_equal(read_all(&f, &err, &n), MT_E_EMPTY);
    assert_int_equal(n, f.items + 1);
    db_file_free(&f);
    db_buf_free(&b);
}

static void expect_corrupt(uint64_t type, const db_buf *payload, const char *needle)
{
    db_file f;
    with_record(&f, type, payload);
    mt_err err = {MT_OK, ""};
    size_t n;
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    db_file_free(&f);
}

/* An ALLOCATORS payload: n entries of kind `kind`, `more` beyond them;
 * `extra`: a field appended (a newer writer's). */
static void allocators_payload(db_buf *b, uint64_t n, uint64_t kind, uint64_t more, bool extra)
{
    b->n = 0;
    db_v(b, 5), db_v(b, n), db_v(b, n + more), db_v(b, more);
    for (uint64_t i = 0; i < n; i++) {
        db_v(b, kind), db_v(b, MT_ALLOC_STATIC | MT_ALLOC_INEXACT | (1u << 30));
        db_s(b, "je_"), db_s(b, "5.3.0"), db_s(b, "/usr/bin/prog"), db_s(b, "not hooked");
    }
    if (extra)
        db_v(b, 12345);
}

/* ALLOCATORS (type 15): no event, kept in the reader; the last one wins. */
static void allocators_record(void **state)
{
    (void)state;
    db_buf b = {0};
    db_file f;
    db_standard(&f, 1, 0);
    allocators_payload(&b, 1, MT_ALLOC_KIND_GLIBC, 0, false);
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    allocators_payload(&b, 2, MT_ALLOC_KIND_JEMALLOC, 3, true);
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    db_flush(&f);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    assert_null(mt_dat_allocators(r));
    mt_errc end;
    assert_int_equal(count_events(r, &end, &err), f.items);
    assert_int_equal(end, MT_E_EMPTY);
    const mt_shm_allocators *a = mt_dat_allocators(r);
    assert_non_null(a);
    assert_int_equal(a->count, 2);
    assert_int_equal(a->more, 3);
    assert_int_equal(a->inexact, 5);
    assert_int_equal(a->a[1].kind, MT_ALLOC_KIND_JEMALLOC);
    assert_int_equal(a->a[1].flags, MT_ALLOC_STATIC | MT_ALLOC_INEXACT); /* unknown bit cleared */
    assert_string_equal(a->a[1].prefix, "je_");
    assert_string_equal(a->a[1].version, "5.3.0");
    assert_string_equal(a->a[1].module, "/usr/bin/prog");
    assert_string_equal(a->a[1].note, "not hooked");
    assert_true(a->a[1].allocated == MT_UNKNOWN && a->a[1].before_hooks == MT_UNKNOWN);
    mt_dat_close(r);
    db_file_free(&f);
    /* corrupt: too many entries, a kind out of range, a string too long
     * for its field, inexact beyond the entries, cut short */
    allocators_payload(&b, MT_ALLOC_MAX + 1, MT_ALLOC_KIND_GLIBC, 0, false);
    expect_corrupt(MT_DAT_REC_ALLOCATORS, &b, "ALLOCATORS counts");
    allocators_payload(&b, 1, MT_ALLOC_KIND_MAX + 1, 0, false);
    expect_corrupt(MT_DAT_REC_ALLOCATORS, &b, "ALLOCATORS entry out of range");
    b.n = 0;
    db_v(&b, 5), db_v(&b, 1), db_v(&b, 0), db_v(&b, 0), db_v(&b, MT_ALLOC_KIND_GLIBC), db_v(&b, 0);
    db_s(&b, "a prefix of sixteen bytes"), db_s(&b, ""), db_s(&b, ""), db_s(&b, "");
    expect_corrupt(MT_DAT_REC_ALLOCATORS, &b, "too long");
    b.n = 0;
    db_v(&b, 5), db_v(&b, 1), db_v(&b, 2), db_v(&b, 0);
    expect_corrupt(MT_DAT_REC_ALLOCATORS, &b, "ALLOCATORS counts");
    allocators_payload(&b, 1, MT_ALLOC_KIND_GLIBC, 0, false);
    b.n -= 3;
    expect_corrupt(MT_DAT_REC_ALLOCATORS, &b, "cut short");
    db_buf_free(&b);
}

/* mt_dat_allocators_at: each list from its time on (t is the payload's
 * first byte, a one-byte varint), one older than the newest kept not kept
 * by time; a corrupt record leaves the last good list as it was. */
static void allocators_by_time(void **state)
{
    (void)state;
    db_buf b = {0};
    db_file f;
    db_standard(&f, 1, 0);
    allocators_payload(&b, 1, MT_ALLOC_KIND_GLIBC, 0, false);
    b.p[0] = 20;
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    allocators_payload(&b, 2, MT_ALLOC_KIND_JEMALLOC, 0, false);
    b.p[0] = 40;
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    allocators_payload(&b, 3, MT_ALLOC_KIND_MIMALLOC, 0, false);
    b.p[0] = 30;
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    allocators_payload(&b, 1, MT_ALLOC_KIND_MAX + 1, 0, false); /* corrupt: its kind */
    b.p[0] = 50;
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    db_flush(&f);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    mt_errc end;
    assert_int_equal(count_events(r, &end, &err), f.items);
    assert_int_equal(end, MT_E_CORRUPT);
    assert_null(mt_dat_allocators_at(r, 19));
    static const uint64_t at[] = {20, 39, 40, UINT64_MAX};
    static const uint32_t count[] = {1, 1, 2, 2}, kind[] = {1, 1, 2, 2};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        const mt_shm_allocators *a = mt_dat_allocators_at(r, at[i]);
        assert_non_null(a);
        assert_int_equal(a->count, count[i]);
        assert_int_equal(a->a[0].kind, kind[i]);
    }
    const mt_shm_allocators *last = mt_dat_allocators(r); /* the 30's, read last */
    assert_int_equal(last->count, 3);
    assert_int_equal(last->a[2].kind, MT_ALLOC_KIND_MIMALLOC);
    mt_dat_close(r);
    db_file_free(&f);
    db_buf_free(&b);
}

/* Strings of an ALLOCATORS record reach a terminal as they are (--batch's
 * heap and health lines, the viewer's header): a control character, an
 * escape sequence's start, becomes '?'. */
static void allocators_printable(void **state)
{
    (void)state;
    db_buf b = {0};
    db_file f;
    db_standard(&f, 1, 0);
    db_v(&b, 5), db_v(&b, 1), db_v(&b, 1), db_v(&b, 0);
    db_v(&b, MT_ALLOC_KIND_JEMALLOC), db_v(&b, MT_ALLOC_INEXACT);
    db_s(&b, "je\x1b_"), db_s(&b, "5.3\x1b]0;owned\x07"), db_s(&b, "/lib/\x7fx.so");
    db_s(&b, "not hooked\x1b[2J\r\n");
    db_rec(&f, MT_DAT_REC_ALLOCATORS, &b, 0);
    db_flush(&f);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    mt_errc end;
    assert_int_equal(count_events(r, &end, &err), f.items);
    const mt_shm_allocators *a = mt_dat_allocators(r);
    assert_non_null(a);
    assert_string_equal(a->a[0].prefix, "je?_");
    assert_string_equal(a->a[0].version, "5.3?]0;owned?");
    assert_string_equal(a->a[0].module, "/lib/?x.so");
    assert_string_equal(a->a[0].note, "not hooked?[2J??");
    mt_dat_close(r);
    db_file_free(&f);
    db_buf_free(&b);
}

static void corrupt_records(void **state)
{
    (void)state;
    db_buf b = {0};
    db_v(&b, 1), db_v(&b, 0), db_v(&b, 1), db_bytes(&b, (unsigned char[]){0}, 1), db_v(&b, 0);
    db_v(&b, 77), db_v(&b, 8); /* trace 77 is not defined */
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "undefined trace");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 0), db_v(&b, 1);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, 0), db_v(&b, 8);
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "SAME_TRACE");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 0), db_v(&b, 1), db_bytes(&b, (unsigned char[]){0x80}, 1);
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "tag");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 0), db_v(&b, MT_DAT_EVENTS_MAX + 1);
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "too many");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 0), db_v(&b, 2), db_bytes(&b, (unsigned char[]){0}, 1), db_v(&b, 0);
    db_v(&b, 1), db_v(&b, 8); /* one event of two */
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "cut short");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 2000000), db_v(&b, 1), db_bytes(&b, (unsigned char[]){1}, 1);
    db_v(&b, 0), db_v(&b, 1), db_v(&b, 8), db_v(&b, 3); /* born before time 0 */
    expect_corrupt(MT_DAT_REC_EVENTS, &b, "born before");
    b.n = 0;
    db_bytes(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    expect_corrupt(MT_DAT_REC_MODULE_UNLOAD, &b, "cut short");
    b.n = 0;
    db_v(&b, 7), db_v(&b, 0);
    expect_corrupt(MT_DAT_REC_MODULE_UNLOAD, &b, "unknown module");
    b.n = 0;
    db_v(&b, 9), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0);
    expect_corrupt(MT_DAT_REC_TRACE, &b, "out of order");
    b.n = 0;
    db_v(&b, 3), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0), db_v(&b, MT_MAX_DEPTH + 1);
    expect_corrupt(MT_DAT_REC_TRACE, &b, "too many frames");
    b.n = 0;
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, 1), db_v(&b, 0);
    expect_corrupt(MT_DAT_REC_STATE_END, &b, "without its STATE_BEGIN");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1);
    expect_corrupt(MT_DAT_REC_TRACE_STATES, &b, "outside a state set");
    b.n = 0;
    db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1);
    db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1), db_s(&b, "x");
    expect_corrupt(MT_DAT_REC_PROCESS, &b, "second PROCESS");
    db_buf_free(&b);
}

/* A LOST payload: t 5, tid 7, alloc_count ac, alloc_bytes 100, free_count
 * fc, free_bytes 50, then the `extra` varints (the causes) as given. */
static void lost_payload(db_buf *b, uint64_t ac, uint64_t fc, const uint64_t *extra, size_t n)
{
    b->n = 0;
    db_v(b, 5), db_v(b, 7), db_v(b, ac), db_v(b, 100), db_v(b, fc), db_v(b, 50);
    for (size_t i = 0; i < n; i++)
        db_v(b, extra[i]);
}

/* Reads f to the end; its (one) LOST record into *l. */
static void read_lost(const db_file *f, mt_dat_lost *l)
{
    mt_err err;
    mt_dat_reader *r = open_mem(f->out.p, f->out.n, &err);
    assert_non_null(r);
    mt_dat_event ev;
    mt_errc rc;
    int seen = 0;
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK)
        if (ev.kind == MT_DAT_LOST)
            *l = ev.u.lost, seen++;
    assert_int_equal(rc, MT_E_EMPTY);
    assert_int_equal(seen, 1);
    mt_dat_close(r);
}

/* LOST's causes (dat_format.h): read by cause; absent (an older writer):
 * "not said"; a cause this reader does not know: "other"; fields after
 * them ignored. */
static void lost_causes(void **state)
{
    (void)state;
    db_buf b = {0};
    db_file f;
    mt_dat_lost l;
    /* 3 + 2 events: disk behind 4, writer stalled 1 */
    lost_payload(&b, 3, 2, (uint64_t[]){2, MT_DAT_LOST_DISK, 4, MT_DAT_LOST_WAIT_CAP, 1}, 5);
    with_record(&f, MT_DAT_REC_LOST, &b);
    read_lost(&f, &l);
    assert_int_equal(l.tid, 7);
    assert_int_equal(l.alloc_count, 3);
    assert_int_equal(l.free_bytes, 50);
    assert_int_equal(l.why[MT_DAT_LOST_DISK], 4);
    assert_int_equal(l.why[MT_DAT_LOST_WAIT_CAP], 1);
    assert_int_equal(l.why[MT_DAT_LOST_NOT_SAID], 0);
    char line[MT_DAT_LOST_LINE_MAX];
    assert_string_equal(mt_dat_lost_line(5, l.why, line, sizeof line),
                        "5 events dropped: disk behind 4, writer stalled (wait cap) 1");
    /* more dropped than the LOST records say (TOTALS ahead of them) */
    assert_string_equal(mt_dat_lost_line(7, l.why, line, sizeof line),
                        "7 events dropped: disk behind 4, writer stalled (wait cap) 1, cause not "
                        "recorded 2");
    db_file_free(&f);
    /* an older writer: no causes */
    lost_payload(&b, 3, 2, NULL, 0);
    with_record(&f, MT_DAT_REC_LOST, &b);
    read_lost(&f, &l);
    assert_int_equal(l.why[MT_DAT_LOST_NOT_SAID], 5);
    assert_int_equal(l.why[MT_DAT_LOST_DISK], 0);
    db_file_free(&f);
    /* a cause from the future (the largest valid one), and a field after the causes */
    lost_payload(&b, 1, 1, (uint64_t[]){2, MT_DAT_LOST_UNSEEN, 1, MT_DAT_LOST_CAUSE_MAX, 1, 12345},
                 6);
    with_record(&f, MT_DAT_REC_LOST, &b);
    read_lost(&f, &l);
    assert_int_equal(l.why[MT_DAT_LOST_UNSEEN], 1);
    assert_int_equal(l.why[MT_DAT_LOST_OTHER], 1);
    db_file_free(&f);
    /* the longest line (every cause with 20 digits) fits the documented buffer whole */
    uint64_t every[MT_DAT_LOST_WHY_N];
    for (unsigned i = 0; i < MT_DAT_LOST_WHY_N; i++)
        every[i] = 10000000000000000000ull + i;
    char longest[MT_DAT_LOST_LINE_MAX];
    mt_dat_lost_line(UINT64_MAX, every, longest, sizeof longest);
    assert_true(strlen(longest) + 1 < sizeof longest);
    assert_non_null(strstr(longest, "cause not recorded 10000000000000000007"));
    /* no causes named (0 pairs) for no event */
    lost_payload(&b, 0, 0, (uint64_t[]){0}, 1);
    with_record(&f, MT_DAT_REC_LOST, &b);
    read_lost(&f, &l);
    assert_int_equal(l.why[MT_DAT_LOST_NOT_SAID], 0);
    db_file_free(&f);
    db_buf_free(&b);
}

/* Every way LOST's causes can be wrong is corrupt, one past each limit. */
static void lost_causes_corrupt(void **state)
{
    (void)state;
    db_buf b = {0};
    lost_payload(&b, 1, 1, (uint64_t[]){1}, 1); /* one pair announced, none there */
    expect_corrupt(MT_DAT_REC_LOST, &b, "LOST causes cut short");
    lost_payload(&b, 1, 1, (uint64_t[]){1, MT_DAT_LOST_DISK}, 2); /* a cause without its count */
    expect_corrupt(MT_DAT_REC_LOST, &b, "LOST causes cut short");
    lost_payload(&b, 1, 1, (uint64_t[]){MT_DAT_LOST_CAUSE_MAX + 2}, 1);
    expect_corrupt(MT_DAT_REC_LOST, &b, "too many causes");
    lost_payload(&b, 1, 1, (uint64_t[]){1, MT_DAT_LOST_CAUSE_MAX + 1, 2}, 3);
    expect_corrupt(MT_DAT_REC_LOST, &b, "out of order, unknown or empty");
    lost_payload(&b, 1, 1, (uint64_t[]){2, 1, 1, 1, 1}, 5); /* the same cause twice */
    expect_corrupt(MT_DAT_REC_LOST, &b, "out of order, unknown or empty");
    lost_payload(&b, 1, 1, (uint64_t[]){2, 2, 1, 1, 1}, 5); /* descending */
    expect_corrupt(MT_DAT_REC_LOST, &b, "out of order, unknown or empty");
    lost_payload(&b, 1, 1, (uint64_t[]){2, 0, 2, 1, 0}, 5); /* a count of 0 */
    expect_corrupt(MT_DAT_REC_LOST, &b, "out of order, unknown or empty");
    lost_payload(&b, 1, 1, (uint64_t[]){1, 0, 1}, 3); /* one event short */
    expect_corrupt(MT_DAT_REC_LOST, &b, "other events than it dropped");
    lost_payload(&b, 1, 1, (uint64_t[]){1, 0, 3}, 3); /* one event more */
    expect_corrupt(MT_DAT_REC_LOST, &b, "other events than it dropped");
    lost_payload(&b, 1, 1, (uint64_t[]){2, 0, UINT64_MAX, 1, 3}, 5); /* the sum wraps */
    expect_corrupt(MT_DAT_REC_LOST, &b, "more events than it dropped");
    lost_payload(&b, UINT64_MAX, 2, (uint64_t[]){1, 0, 1}, 3); /* the events wrap */
    expect_corrupt(MT_DAT_REC_LOST, &b, "more events than a recording can hold");
    lost_payload(&b, UINT64_MAX, 2, NULL, 0); /* the same from an older writer (no causes) */
    expect_corrupt(MT_DAT_REC_LOST, &b, "more events than a recording can hold");
    /* Two records sound on their own whose events add up past 2^64: the
     * replay's and the exports' sums would wrap (to 0: no "inexact"). */
    uint64_t half = 1ull << 63;
    lost_payload(&b, half, 0, (uint64_t[]){1, MT_DAT_LOST_DISK, half}, 3);
    db_file f;
    db_standard(&f, 1, 0);
    db_rec(&f, MT_DAT_REC_LOST, &b, 0);
    db_rec(&f, MT_DAT_REC_LOST, &b, 0);
    db_flush(&f);
    mt_err err = {MT_OK, ""};
    size_t n;
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    if (!strstr(err.msg, "LOST records count more events than a recording can hold"))
        fail_msg("message '%s'", err.msg);
    db_file_free(&f);
    /* ... and one event less than that fits */
    lost_payload(&b, half - 1, 0, (uint64_t[]){1, MT_DAT_LOST_DISK, half - 1}, 3);
    db_standard(&f, 1, 0);
    db_rec(&f, MT_DAT_REC_LOST, &b, 0);
    lost_payload(&b, half, 0, (uint64_t[]){1, MT_DAT_LOST_DISK, half}, 3);
    db_rec(&f, MT_DAT_REC_LOST, &b, 0);
    db_flush(&f);
    assert_int_equal(read_all(&f, &err, &n), MT_E_EMPTY);
    db_file_free(&f);
    db_buf_free(&b);
}

static void corrupt_framing(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 2, 1);
    mt_err err = {MT_OK, ""};
    size_t n;
    /* a byte flipped inside the second frame: zstd or its checksum says so */
    f.out.p[f.frame_end[0] + 20] ^= 0x55;
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "corrupt"));
    db_file_free(&f);
    /* garbage with a frame after it: a corrupt middle, never a tail */
    db_standard(&f, 3, 1);
    memcpy(f.out.p + f.frame_end[1], "GARBAGE!", 8);
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "a frame follows at byte"));
    db_file_free(&f);
    /* the first frame bad: rejected whatever follows */
    db_standard(&f, 1, 1);
    memset(f.out.p + MT_DAT_HEADER_BYTES, 0, f.out.n - MT_DAT_HEADER_BYTES);
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "no zstd frame"));
    db_file_free(&f);
    /* a record that does not end with its frame */
    db_standard(&f, 1, 0);
    db_v(&f.frame, MT_DAT_REC_TOTALS), db_v(&f.frame, 100), db_v(&f.frame, 1);
    db_flush(&f);
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "past the end of its frame"));
    db_file_free(&f);
    /* a record longer than the limit */
    db_standard(&f, 1, 0);
    db_v(&f.frame, 99), db_v(&f.frame, MT_DAT_RECORD_MAX + 1);
    db_flush(&f);
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    db_file_free(&f);
    /* no PROCESS first */
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    db_buf b = {0};
    db_v(&b, 0), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_MODULE_UNLOAD, &b, 0);
    db_flush(&f);
    assert_int_equal(read_all(&f, &err, &n), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "PROCESS"));
    db_buf_free(&b);
    db_file_free(&f);
}

/* The file's frames, then `tail` bytes of `fill`; opened and read to the
 * end: events read in *n, the reader's info in *info. */
static mt_errc read_with_tail(db_file *f, size_t keep, int fill, size_t tail, size_t *n,
                              mt_dat_info *info, mt_err *err)
{
    f->out.n = keep;
    for (size_t i = 0; i < tail; i++) {
        unsigned char c = (unsigned char)(fill >= 0 ? fill : (int)(i * 131u + 7u));
        db_bytes(&f->out, &c, 1);
    }
    return read_all_info(f, err, n, info);
}

/* Bytes after the last complete frame that are not a frame (a power loss
 * leaves zeros, a bad copy leaves anything) are ignored like a cut tail:
 * everything before them reads, and the reader says so. */
/* A damaged frame is not a bad tail: one flipped bit in the last frame's
 * header (it still starts with a frame's magic) makes the file corrupt,
 * not "truncated" (which would hide the loss of that frame). */
static void damaged_last_frame(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 3, 1);
    size_t n;
    mt_dat_info info = {0};
    mt_err err = {MT_OK, ""};
    f.out.p[f.frame_end[f.nframes - 2] + 4] |= 0x08; /* the reserved bit of its descriptor */
    assert_int_equal(read_all_info(&f, &err, &n, &info), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "corrupt"));
    db_file_free(&f);
}

/* A zstd frame header's size (RFC 8878 3.1.1.1: magic, descriptor, window,
 * dictionary id, content size). */
static size_t frame_header_size(const unsigned char *p)
{
    static const size_t dict[4] = {0, 1, 2, 4}, fcs[4] = {0, 2, 4, 8};
    unsigned fhd = p[4], single = (fhd >> 5) & 1, fcs_flag = fhd >> 6;
    return 5 + !single + dict[fhd & 3] + (fcs_flag || !single ? fcs[fcs_flag] : 1);
}

/* A frame whose first block's size was damaged: the walk by block sizes
 * lands inside the frame's data.  The message names that frame, not the
 * place the misled walk reached (bytes "not a zstd frame" further on), nor,
 * for a first frame the walk takes past the end, a cut file. */
static void damaged_block_size(void **state)
{
    (void)state;
    for (unsigned which = 0; which < 2; which++) {
        db_file f;
        db_standard(&f, 3, 1);
        size_t start = f.frame_end[0]; /* frame 1; frame 0 starts after the file header */
        if (!which)
            for (start = 0; memcmp(f.out.p + start, "\x28\xb5\x2f\xfd", 4) != 0;)
                start++;
        size_t fhs = frame_header_size(f.out.p + start);
        unsigned char *bh = f.out.p + start + fhs; /* block header: 3 bytes, size from bit 3 */
        uint32_t h = bh[0] | (uint32_t)bh[1] << 8 | (uint32_t)bh[2] << 16;
        uint32_t size = h >> 3;
        assert_true(size > 16);
        h = (h & 7u) | (size - 9) << 3;
        bh[0] = (unsigned char)h, bh[1] = (unsigned char)(h >> 8), bh[2] = (unsigned char)(h >> 16);
        size_t n;
        mt_dat_info info = {0};
        mt_err err = {MT_OK, ""};
        assert_int_equal(read_all_info(&f, &err, &n, &info), MT_E_CORRUPT);
        char at[64];
        snprintf(at, sizeof at, "at byte %zu", start);
        if (!strstr(err.msg, at))
            fail_msg("frame %u at byte %zu: %s", which, start, err.msg);
        db_file_free(&f);
    }
}

static void bad_tail(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 3, 1);
    size_t whole = f.out.n, n;
    mt_dat_info info = {0};
    mt_err err = {MT_OK, ""};
    /* a complete file plus 4 KiB of zeros, or of other bytes */
    for (int fill = 0; fill >= -1; fill--) {
        assert_int_equal(read_with_tail(&f, whole, fill, 4096, &n, &info, &err), MT_E_EMPTY);
        assert_int_equal(n, f.items);
        assert_true(info.truncated && info.invalid_tail);
        assert_int_equal(info.dropped_bytes, 4096);
        assert_int_equal(info.frames, f.nframes);
    }
    /* cut at a frame boundary, then zeros */
    assert_int_equal(read_with_tail(&f, f.frame_end[2], 0, 4096, &n, &info, &err), MT_E_EMPTY);
    assert_int_equal(n, f.frame_items[2]);
    assert_true(info.invalid_tail);
    /* cut inside frame 3 (its block size still points into the zeros that
     * follow: a frame that measures complete but does not decompress) */
    size_t cut = f.frame_end[2] + (f.frame_end[3] - f.frame_end[2]) / 2;
    assert_int_equal(read_with_tail(&f, cut, 0, 4096, &n, &info, &err), MT_E_EMPTY);
    assert_int_equal(n, f.frame_items[2]);
    assert_true(info.truncated);
    assert_int_equal(info.data_end, f.frame_end[2]);
    db_file_free(&f);
    /* a frame of more than a zstd output buffer (128 KiB) decompressed (12000
     * records of 17 bytes), before a bad tail */
    db_standard(&f, 1, 0);
    db_buf b = {0};
    for (unsigned i = 0; i < 12000; i++) {
        b.n = 0;
        db_v(&b, 1), db_v(&b, 2000000000ull + i * 1000u), db_v(&b, 2);
        db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC}, 1), db_v(&b, 0), db_v(&b, 1);
        db_v(&b, 100 + i % 7);
        db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, 1);
        db_v(&b, i * 3);
        db_rec(&f, MT_DAT_REC_EVENTS, &b, 2);
    }
    db_flush(&f);
    db_buf_free(&b);
    assert_int_equal(read_with_tail(&f, f.out.n, 0, 100, &n, &info, &err), MT_E_EMPTY);
    assert_int_equal(n, f.items);
    assert_int_equal(info.frames, f.nframes);
    db_file_free(&f);
}

/* tell at frame boundaries, seek back: the same events again. */
static void seek_back(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 4, 1);
    mt_err err;
    mt_dat_reader *r = open_mem(f.out.p, f.out.n, &err);
    assert_non_null(r);
    mt_dat_pos pos[16];
    size_t at[16], npos = 0, k = 0;
    mt_dat_event ev;
    uint64_t sums[DB_MAX_FRAMES] = {0};
    if (mt_dat_tell(r, &pos[npos]))
        at[npos++] = 0;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        k++;
        if (ev.kind == MT_DAT_ALLOC)
            sums[npos] += ev.u.ev.size;
        if (npos < 16 && mt_dat_tell(r, &pos[npos]))
            at[npos++] = k;
    }
    assert_true(npos >= 5);
    for (size_t i = npos; i-- > 0;) {
        assert_int_equal(mt_dat_seek(r, &pos[i], &err), MT_OK);
        size_t n = 0;
        uint64_t sum = 0;
        while (mt_dat_next(r, &ev, &err) == MT_OK) {
            n++;
            if (ev.kind == MT_DAT_ALLOC)
                sum += ev.u.ev.size;
        }
        assert_int_equal(at[i] + n, k);
        uint64_t want = 0;
        for (size_t j = i + 1; j <= npos; j++)
            want += sums[j];
        assert_int_equal(sum, want);
    }
    mt_dat_close(r);
    db_file_free(&f);
}

/* A recording's modules indexed one at a time (mt_modules_index_last, as
 * a replay appends them) give the same index as a full sort: random
 * ranges, a quarter of them at one start (a plugin loaded again where it
 * was). */
static void modules_index_last(void **state)
{
    (void)state;
    mt_modules m, ref;
    mt_modules_init(&m);
    mt_modules_init(&ref);
    uint64_t seed = 88172645463325252ull;
    mt_err err;
    for (unsigned i = 0; i < 600; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        mt_dat_module mod;
        memset(&mod, 0, sizeof mod);
        mod.start = (seed & 3) ? 0x7f0000000000ull + (seed >> 40) * 0x1000 : 0x7f0000100000ull;
        mod.end = mod.start + 0x1000 + ((seed >> 20) & 0xffff) * 16;
        snprintf(mod.path, sizeof mod.path, "/lib/m%u.so", i);
        assert_int_equal(mt_dat_modules_add(&m, &mod, i, &err), MT_OK);
        assert_int_equal(mt_dat_modules_add(&ref, &mod, i, &err), MT_OK);
        assert_int_equal(mt_modules_reindex(&ref, &err), MT_OK);
        assert_memory_equal(m.order, ref.order, m.count * sizeof *m.order);
        assert_memory_equal(m.max_end, ref.max_end, m.count * sizeof *m.max_end);
        uint64_t probe = mod.start + ((seed >> 8) & 0xfff);
        assert_ptr_equal(mt_modules_find(&m, probe) - m.items,
                         mt_modules_find(&ref, probe) - ref.items);
    }
    mt_modules_free(&m);
    mt_modules_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_file),
        cmocka_unit_test(events_decoded),
        cmocka_unit_test(header_errors),
        cmocka_unit_test(cut_everywhere),
        cmocka_unit_test(unknown_records_skipped),
        cmocka_unit_test(corrupt_records),
        cmocka_unit_test(allocators_record),
        cmocka_unit_test(allocators_by_time),
        cmocka_unit_test(allocators_printable),
        cmocka_unit_test(lost_causes),
        cmocka_unit_test(lost_causes_corrupt),
        cmocka_unit_test(corrupt_framing),
        cmocka_unit_test(seek_back),
        cmocka_unit_test(bad_tail),
        cmocka_unit_test(damaged_last_frame),
        cmocka_unit_test(damaged_block_size),
        cmocka_unit_test(modules_index_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
