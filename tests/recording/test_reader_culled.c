/* test_reader_culled.c -- the reader on culled recordings (format version
 * 3, dat_format.h MT_DAT_REC_CULLED): the PROCESS record's mode fields and
 * CULLED records read back exactly, and are validated as strictly as the
 * other records: the entries' limit (at it: reads, one past: corrupt),
 * undefined or unordered traces, impossible counts, a record cut short or
 * inside a state set, CULLED in a recording that is not culled, a
 * threshold out of range, and a version-2 file's mode fields ignored. */
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
#include "test_reader_builder.h"

/* Reads f to its end; the CULLED items into got[] (at most cap), their
 * number in *n; the PROCESS record in *proc.  MT_E_EMPTY when it all read. */
static mt_errc read_culled(const db_file *f, mt_dat_culled *got, size_t cap, size_t *n,
                           mt_dat_process *proc, mt_err *err)
{
    int fd = db_memfd(f);
    assert_true(fd >= 0);
    mt_dat_reader *r = mt_dat_open_fd(fd, "mem", err);
    if (!r)
        return err->code;
    static mt_dat_event ev;
    mt_errc rc;
    *n = 0;
    while ((rc = mt_dat_next(r, &ev, err)) == MT_OK) {
        if (ev.kind == MT_DAT_PROCESS && proc)
            *proc = ev.u.proc;
        if (ev.kind == MT_DAT_CULLED && *n < cap)
            got[(*n)++] = ev.u.culled;
    }
    mt_dat_close(r);
    return rc;
}

static void expect(const db_file *f, const char *want)
{
    static mt_dat_culled got[4];
    size_t n;
    mt_err err = {MT_OK, ""};
    mt_errc rc = read_culled(f, got, 4, &n, NULL, &err);
    if (!*want) {
        if (rc != MT_E_EMPTY)
            fail_msg("want a clean read, got: %s", err.msg);
        return;
    }
    assert_int_equal(rc, MT_E_CORRUPT);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void reads_back(void **state)
{
    (void)state;
    db_file f;
    db_culled(&f, 2, 1);
    static mt_dat_culled got[8];
    static mt_dat_process proc;
    size_t n;
    mt_err err;
    assert_int_equal(read_culled(&f, got, 8, &n, &proc, &err), MT_E_EMPTY);
    assert_int_equal(proc.record_mode, MT_DAT_MODE_CULLED);
    assert_int_equal(proc.cull_ms, 1000);
    assert_int_equal(proc.young_max, 16);
    assert_int_equal(n, 4);
    assert_int_equal(got[0].id, 1);
    assert_int_equal(got[0].count, 3);
    assert_int_equal(got[0].bytes, 30);
    assert_int_equal(got[0].temporary_count, 1);
    assert_int_equal(got[0].temporary_bytes, 10);
    assert_int_equal(got[1].id, 2);
    assert_int_equal(got[1].count, 1);
    assert_int_equal(got[3].written_early, 7);
    assert_int_equal(got[3].young, 3);
    db_file_free(&f);
}

/* A culled recording with ntraces traces, then one CULLED record of n
 * entries (each a trace of its own: id_delta 1 after the first). */
static void entries(uint64_t ntraces, uint64_t n, const char *want)
{
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_CULLED, 1000);
    db_buf b = {0};
    for (uint64_t id = 3; id < ntraces; id++) {
        b.n = 0;
        db_v(&b, id), db_v(&b, 0), db_v(&b, 0), db_v(&b, id), db_v(&b, 0);
        db_rec(&f, MT_DAT_REC_TRACE, &b, 1);
    }
    db_flush(&f);
    uint64_t(*e)[5] = calloc(n, sizeof *e);
    for (uint64_t i = 0; i < n; i++)
        e[i][0] = 1, e[i][1] = 1, e[i][2] = 16;
    db_culled_rec(&f, 1000, e, n);
    db_flush(&f);
    free(e);
    expect(&f, want);
    db_buf_free(&b);
    db_file_free(&f);
}

static void entries_limit(void **state)
{
    (void)state;
    entries(MT_DAT_ENTRIES_MAX + 2, MT_DAT_ENTRIES_MAX, "");
    entries(MT_DAT_ENTRIES_MAX + 2, MT_DAT_ENTRIES_MAX + 1, "too many");
}

/* One CULLED record of the given entries after db_culled_head(mode, ms). */
static void one(uint64_t mode, uint64_t ms, const uint64_t (*e)[5], size_t n, const char *want)
{
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_PREV, mode, ms);
    db_culled_rec(&f, 1000, e, n);
    db_flush(&f);
    expect(&f, want);
    db_file_free(&f);
}

static void bad_entries(void **state)
{
    (void)state;
    static const uint64_t ok[2][5] = {{1, 2, 20, 2, 20}, {1, 1, 1, 0, 0}};
    one(MT_DAT_MODE_CULLED, 1000, ok, 2, "");
    static const uint64_t undefined[1][5] = {{3, 1, 1, 0, 0}};
    one(MT_DAT_MODE_CULLED, 1000, undefined, 1, "undefined trace");
    static const uint64_t unordered[2][5] = {{1, 1, 1, 0, 0}, {0, 1, 1, 0, 0}};
    one(MT_DAT_MODE_CULLED, 1000, unordered, 2, "out of order");
    static const uint64_t zero[1][5] = {{1, 0, 0, 0, 0}};
    one(MT_DAT_MODE_CULLED, 1000, zero, 1, "bad counts");
    static const uint64_t temps[1][5] = {{1, 1, 8, 2, 8}};
    one(MT_DAT_MODE_CULLED, 1000, temps, 1, "bad counts");
    static const uint64_t tbytes[1][5] = {{1, 1, 8, 1, 9}};
    one(MT_DAT_MODE_CULLED, 1000, tbytes, 1, "bad counts");
    one(MT_DAT_MODE_FULL, 1000, ok, 2, "not culled");
}

static void bad_mode(void **state)
{
    (void)state;
    static const uint64_t ok[1][5] = {{1, 1, 1, 0, 0}};
    one(MT_DAT_MODE_CULLED, MT_DAT_CULL_MS_MAX, ok, 1, "");
    one(MT_DAT_MODE_CULLED, MT_DAT_CULL_MS_MAX + 1, ok, 1, "mode out of range");
    one(MT_DAT_MODE_CULLED, 0, ok, 1, "mode out of range");
    one(MT_DAT_MODE_CULLED + 1, 1000, ok, 1, "mode out of range");
    /* A version-2 file: fields after the PROCESS record's are ignored, so
     * it is not culled and may hold no CULLED record. */
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_FULL, MT_DAT_MODE_CULLED, 1000);
    expect(&f, "");
    db_culled_rec(&f, 1000, ok, 1);
    db_flush(&f);
    expect(&f, "not culled");
    db_file_free(&f);
}

static void cut_and_nested(void **state)
{
    (void)state;
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_CULLED, 1000);
    db_buf b = {0};
    db_v(&b, 1000), db_v(&b, 0), db_v(&b, 0), db_v(&b, 1), db_v(&b, 1), db_v(&b, 1);
    db_rec(&f, MT_DAT_REC_CULLED, &b, 1); /* bytes and temporaries missing */
    db_flush(&f);
    expect(&f, "cut short");
    db_file_free(&f);
    db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_CULLED, 1000);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, 1000), db_v(&b, 1);
    db_rec(&f, MT_DAT_REC_STATE_BEGIN, &b, 1);
    static const uint64_t ok[1][5] = {{1, 1, 1, 0, 0}};
    db_culled_rec(&f, 1000, ok, 1);
    db_flush(&f);
    expect(&f, "inside a state set");
    db_file_free(&f);
    db_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_back),     cmocka_unit_test(entries_limit),
        cmocka_unit_test(bad_entries),    cmocka_unit_test(bad_mode),
        cmocka_unit_test(cut_and_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
