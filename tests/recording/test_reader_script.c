/* test_reader_script.c -- scripts of EVENTS2 events into files, and the
 * files read every way (see test_reader_script.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_reader_script.h"

static void put_event(db_ev2 *e, const step *s)
{
    unsigned tag = s->tag & 0xffu, kind = tag & MT_DAT_EV_KIND_MASK;
    db_ev2_tag(e, tag | (s->tag & NT ? 0 : MT_DAT_EV_SAME_TIME));
    if (s->tag & NT)
        db_ev2_put(e, DB_TIMES, 0);
    if (!(tag & ST))
        db_ev2_put(e, DB_TRACES, s->trace);
    if (kind == A && !(tag & SS))
        db_ev2_put(e, DB_SIZES, s->v);
    else if (kind >= R)
        db_ev2_put(e, DB_REFS, s->v);
}

/* A record in version 8: its tags column as `how` says, by `by` (the
 * table the script codes by, or NULL). */
static void record8(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base, const db_pairs *by,
                    unsigned how)
{
    static const db_pairs none;
    db_buf col = {0};
    if (how == TAGS_PLAIN || (!by && how != TAGS_ESCAPED))
        db_bytes(&col, e->col[0][0].p, e->col[0][0].n);
    else
        db_ev2_code(how == TAGS_ESCAPED ? &none : by, e, &col, NULL);
    if (how == TAGS_CUT)
        col.n--;
    if (how == TAGS_MORE)
        db_bytes(&col, "", 1);
    db_ev2_record8(f, e, tid, base, col.p, col.n);
    db_buf_free(&col);
}

static void tag_pairs_raw(db_file *f, const db_buf *payload)
{
    db_rec(f, MT_DAT_REC_TAG_PAIRS, payload, 0);
}

void ts_build(const step *s, uint32_t version, db_file *f)
{
    db_culled_head(f, version, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    uint64_t tid = 0, fr = 0, how = 0;
    const db_pairs *by = NULL;
    for (;; s++) {
        if ((s->tag & (REC | FR | END | TP | TPC | TPRAW)) && e.n) {
            if (version >= MT_DAT_VERSION_PAIRS)
                record8(f, &e, tid, (2000 + fr) * MS, by, (unsigned)how);
            else
                db_ev2_record(f, &e, tid, (2000 + fr) * MS);
        }
        if (s->tag & REC)
            tid = s->trace, how = s->v;
        else if (s->tag & TP)
            by = (const db_pairs *)(uintptr_t)s->v, db_tag_pairs(f, by);
        else if (s->tag & TPC)
            by = (const db_pairs *)(uintptr_t)s->v;
        else if (s->tag & TPRAW)
            tag_pairs_raw(f, (const db_buf *)(uintptr_t)s->v);
        else if (s->tag & (FR | END))
            db_flush(f), fr++, by = NULL;
        else
            put_event(&e, s);
        if (s->tag & END)
            break;
    }
    db_ev2_free(&e);
}

mt_dat_reader *ts_open_mem(const db_file *f, mt_err *err)
{
    int fd = memfd_create("dat", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f->out.p, f->out.n), (ssize_t)f->out.n);
    return mt_dat_open_fd(fd, "mem", err);
}

size_t ts_read_sizes(const db_file *f, size_t per, uint64_t *out, size_t max, mt_errc *end,
                     mt_err *err)
{
    mt_dat_reader *r = ts_open_mem(f, err);
    assert_non_null(r);
    mt_dat_event ev;
    mt_dat_hev h[256];
    size_t k = 0, n = 0;
    assert_true(per <= 256);
    while ((*end = mt_dat_next(r, &ev, err)) == MT_OK) {
        if ((ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) && k < max)
            out[k++] = ev.u.ev.size;
        while (per && (*end = mt_dat_next_batch(r, h, per, &n, err)) == MT_OK && n)
            for (size_t i = 0; i < n && k < max; i++)
                out[k++] = h[i].ev.size;
        if (per && *end != MT_OK) {
            for (size_t i = 0; i < n && k < max; i++)
                out[k++] = h[i].ev.size;
            break;
        }
    }
    mt_dat_close(r);
    return k;
}

/* f read in runs of each of pers gives want[0, n), then the end or msg. */
static void read_ways(const db_file *f, const size_t *pers, size_t npers, const uint64_t *want,
                      size_t n, const char *msg)
{
    uint64_t *got = malloc((n + 1) * sizeof *got);
    assert_non_null(got);
    for (size_t p = 0; p < npers; p++) {
        mt_err err = {MT_OK, ""};
        mt_errc end;
        size_t k = ts_read_sizes(f, pers[p], got, n + 1, &end, &err);
        if (msg ? end != MT_E_CORRUPT || !strstr(err.msg, msg) : end != MT_E_EMPTY)
            fail_msg("per %zu: ended %d '%s', wanted '%s'", pers[p], end, err.msg,
                     msg ? msg : "the end");
        if (k != n)
            fail_msg("per %zu: %zu events, wanted %zu ('%s')", pers[p], k, n, err.msg);
        for (size_t i = 0; i < n; i++)
            if (got[i] != want[i])
                fail_msg("per %zu: event %zu size %llu, wanted %llu", pers[p], i,
                         (unsigned long long)got[i], (unsigned long long)want[i]);
    }
    free(got);
}

#define MAXPOS 64

/* Seek to pos, then the allocations and frees to the end are want[j, n). */
static void read_from(mt_dat_reader *r, const mt_dat_pos *pos, size_t j, const uint64_t *want,
                      size_t n, size_t p)
{
    mt_err err = {MT_OK, ""};
    mt_dat_event ev;
    if (mt_dat_seek(r, pos, &err) != MT_OK)
        fail_msg("seek to position %zu: '%s'", p, err.msg);
    mt_errc end;
    while ((end = mt_dat_next(r, &ev, &err)) == MT_OK) {
        if (ev.kind != MT_DAT_ALLOC && ev.kind != MT_DAT_FREE)
            continue;
        assert_true(j < n);
        if (ev.u.ev.size != want[j])
            fail_msg("from position %zu: event %zu size %llu, wanted %llu", p, j,
                     (unsigned long long)ev.u.ev.size, (unsigned long long)want[j]);
        j++;
    }
    if (end != MT_E_EMPTY)
        fail_msg("from position %zu: '%s'", p, err.msg);
    assert_int_equal(j, n);
}

/* Seek to pos and read up to its first allocation or free: the reader
 * stops inside that frame (in its state: a version-8 table). */
static void stop_in(mt_dat_reader *r, const mt_dat_pos *pos)
{
    mt_err err = {MT_OK, ""};
    mt_dat_event ev;
    if (mt_dat_seek(r, pos, &err) != MT_OK)
        fail_msg("seek to stop in a frame: '%s'", err.msg);
    while (mt_dat_next(r, &ev, &err) == MT_OK)
        if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE)
            break;
}

/* From each frame boundary after a seek (its frame before decoded
 * first): the events read as in order.  Each seek comes after reading to
 * the end, and after stopping inside another frame (every other one, or
 * for many frames the two after the target's). */
static void read_after_seeks(const db_file *f, const uint64_t *want, size_t n)
{
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = ts_open_mem(f, &err);
    assert_non_null(r);
    mt_dat_pos pos[MAXPOS];
    size_t at[MAXPOS], npos = 0, k = 0;
    mt_dat_event ev;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        k += ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE;
        if (npos < MAXPOS && mt_dat_tell(r, &pos[npos]))
            at[npos++] = k;
    }
    assert_true(npos >= 2);
    for (size_t p = npos; p-- > 0;) {
        read_from(r, &pos[p], at[p], want, n, p);
        for (size_t q = 0; q < npos; q++) {
            size_t d = (q + npos - p) % npos;
            if (q == p || (npos > 8 && d > 2))
                continue;
            stop_in(r, &pos[q]);
            read_from(r, &pos[p], at[p], want, n, p);
        }
    }
    mt_dat_close(r);
}

void ts_expect(const step *s, uint32_t version, const uint64_t *want, size_t n, const char *msg)
{
    db_file f;
    ts_build(s, version, &f);
    static const size_t pers[] = {0, 1, 256};
    read_ways(&f, pers, sizeof pers / sizeof *pers, want, n, msg);
    if (!msg)
        read_after_seeks(&f, want, n);
    db_file_free(&f);
}

void ts_expect_file(const db_file *f, const uint64_t *want, size_t n)
{
    static const size_t pers[] = {0, 1, 37, 256};
    read_ways(f, pers, sizeof pers / sizeof *pers, want, n, NULL);
    read_after_seeks(f, want, n);
}
