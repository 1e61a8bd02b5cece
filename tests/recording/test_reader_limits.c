/* test_reader_limits.c -- every limit of the recording format
 * (dat_format.h), on the reader's side: a file exactly at the limit reads,
 * one past it is corrupt.  The writer's side of the same limits is checked
 * at compile time (_Static_assert next to each writer bound) and, for the
 * allocations of a frame, by test_writer_frames.c; the frame limit's
 * reader side is in test_reader_events2.c (frame_allocs_limit). */
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

/* Reads f to its end: MT_E_EMPTY when it all read, else the error (err). */
static mt_errc read_all(const db_file *f, mt_err *err)
{
    int fd = db_memfd(f);
    assert_true(fd >= 0);
    mt_dat_reader *r = mt_dat_open_fd(fd, "mem", err);
    if (!r)
        return err->code;
    mt_dat_event ev;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, err)) == MT_OK)
        ;
    mt_dat_close(r);
    return rc;
}

/* db_standard's recording of one round, then one more frame holding the
 * record (type, payload), read to the end; expect "" for a clean read,
 * else a part of the corrupt message. */
static void one_record(uint64_t type, const db_buf *payload, size_t items, const char *expect)
{
    db_file f;
    db_standard(&f, 1, 0);
    db_rec(&f, type, payload, items);
    db_flush(&f);
    mt_err err = {MT_OK, ""};
    mt_errc rc = read_all(&f, &err);
    if (!*expect) {
        if (rc != MT_E_EMPTY)
            fail_msg("want a clean read, got: %s", err.msg);
    } else {
        assert_int_equal(rc, MT_E_CORRUPT);
        if (!strstr(err.msg, expect))
            fail_msg("message '%s' lacks '%s'", err.msg, expect);
    }
    db_file_free(&f);
}

static void record_bytes(void **state)
{
    (void)state;
    for (uint64_t n = MT_DAT_RECORD_MAX; n <= MT_DAT_RECORD_MAX + 1; n++) {
        db_buf b = {0};
        b.p = calloc(n, 1); /* a record of a type readers skip, n bytes */
        b.n = b.cap = n;
        one_record(99, &b, 0, n == MT_DAT_RECORD_MAX ? "" : "record");
        db_buf_free(&b);
    }
}

static void string_bytes(void **state)
{
    (void)state;
    char *path = malloc(MT_DAT_STRING_MAX + 2);
    for (size_t n = MT_DAT_STRING_MAX; n <= MT_DAT_STRING_MAX + 1; n++) {
        memset(path, 'p', n);
        path[0] = '/';
        path[n] = '\0';
        db_buf b = {0};
        db_v(&b, 2), db_v(&b, 0), db_v(&b, 0x900000), db_v(&b, 0x900000), db_v(&b, 0x980000);
        db_s(&b, ""), db_s(&b, path); /* the third module */
        one_record(MT_DAT_REC_MODULE, &b, 1, n == MT_DAT_STRING_MAX ? "" : "MODULE");
        db_buf_free(&b);
    }
    free(path);
}

/* n allocations of trace 1 in one EVENTS2 record. */
static void events_in_record(uint64_t n, const char *expect)
{
    db_file f;
    db_standard(&f, 1, 0);
    db_ev2 e = {0};
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_SIZES, 8);
    for (uint64_t i = 1; i < n; i++)
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE |
                           MT_DAT_EV_SAME_SIZE);
    db_ev2_record(&f, &e, 1, 5000000000ull);
    db_flush(&f);
    mt_err err = {MT_OK, ""};
    mt_errc rc = read_all(&f, &err);
    if (!*expect)
        assert_int_equal(rc, MT_E_EMPTY);
    else if (rc != MT_E_CORRUPT || !strstr(err.msg, expect))
        fail_msg("want corrupt '%s', got %d: %s", expect, rc, err.msg);
    db_ev2_free(&e);
    db_file_free(&f);
}

static void events_per_record(void **state)
{
    (void)state;
    events_in_record(MT_DAT_EVENTS_MAX, "");
    events_in_record(MT_DAT_EVENTS_MAX + 1, "too many");
}

/* A FINAL state set of n TRACE_STATES entries (all of trace 1). */
static void entries_in_record(uint64_t n, const char *expect)
{
    db_file f;
    db_standard(&f, 1, 0);
    db_buf b = {0};
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, 2000000000ull), db_v(&b, 1);
    db_rec(&f, MT_DAT_REC_STATE_BEGIN, &b, 1);
    b.n = 0;
    db_v(&b, n);
    for (uint64_t i = 0; i < n; i++) {
        db_v(&b, i == 0); /* id delta: trace 1, then the same */
        for (unsigned k = 0; k < 7; k++)
            db_v(&b, 0);
    }
    db_rec(&f, MT_DAT_REC_TRACE_STATES, &b, n);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_FINAL), db_v(&b, n), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_STATE_END, &b, 1);
    db_flush(&f);
    mt_err err = {MT_OK, ""};
    mt_errc rc = read_all(&f, &err);
    if (!*expect) {
        if (rc != MT_E_EMPTY)
            fail_msg("want a clean read, got: %s", err.msg);
    } else if (rc != MT_E_CORRUPT || !strstr(err.msg, expect)) {
        fail_msg("want corrupt '%s', got %d: %s", expect, rc, err.msg);
    }
    db_buf_free(&b);
    db_file_free(&f);
}

static void entries_per_record(void **state)
{
    (void)state;
    entries_in_record(MT_DAT_ENTRIES_MAX, "");
    entries_in_record(MT_DAT_ENTRIES_MAX + 1, "too many");
}

static void totals_fields(void **state)
{
    (void)state;
    for (uint64_t n = MT_DAT_TOTALS_FIELDS_MAX; n <= MT_DAT_TOTALS_FIELDS_MAX + 1; n++) {
        db_buf b = {0};
        db_v(&b, 1500000000ull), db_v(&b, 1), db_v(&b, n);
        for (uint64_t i = 0; i < n; i++)
            db_v(&b, i);
        db_v(&b, 0), db_v(&b, 0);
        one_record(MT_DAT_REC_TOTALS, &b, 1, n == MT_DAT_TOTALS_FIELDS_MAX ? "" : "too many");
        db_buf_free(&b);
    }
}

static void trace_frames(void **state)
{
    (void)state;
    for (uint64_t n = MT_MAX_DEPTH; n <= MT_MAX_DEPTH + 1; n++) {
        db_buf b = {0};
        db_v(&b, 3), db_v(&b, 0), db_v(&b, 0), db_v(&b, 77), db_v(&b, n); /* the fourth trace */
        db_v(&b, 0x400100);
        for (uint64_t i = 1; i < n; i++)
            db_z(&b, 4);
        one_record(MT_DAT_REC_TRACE, &b, 1, n == MT_MAX_DEPTH ? "" : "too many frames");
        db_buf_free(&b);
    }
}

static void build_id_bytes(void **state)
{
    (void)state;
    for (uint64_t n = MT_BUILD_ID_MAX; n <= MT_BUILD_ID_MAX + 1; n++) {
        char id[MT_BUILD_ID_MAX + 2];
        memset(id, 0x5a, n);
        id[n] = '\0';
        db_buf b = {0};
        db_v(&b, 2), db_v(&b, 0), db_v(&b, 0x900000), db_v(&b, 0x900000), db_v(&b, 0x980000);
        db_s(&b, id), db_s(&b, "/lib/x.so");
        one_record(MT_DAT_REC_MODULE, &b, 1, n == MT_BUILD_ID_MAX ? "" : "build id");
        db_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_bytes),      cmocka_unit_test(string_bytes),
        cmocka_unit_test(events_per_record), cmocka_unit_test(entries_per_record),
        cmocka_unit_test(totals_fields),     cmocka_unit_test(trace_frames),
        cmocka_unit_test(build_id_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
