/* test_reader_v7.c -- unit tests of the reader's version-7 EVENTS2 events
 * (docs/recording-format.md, 13 EVENTS2, "Version 7"; src/ipc
 * dat_reader_events2.c, dat_reader_batch2.c) on hand-built files: runs
 * of references (FREE_REF and FREE_PREV, also after a seek that decodes
 * the frame before), rising sizes, references still counted among every
 * thread's blocks of a trace (tag bit 7 on one a bad tag, as in version
 * 6), and every corrupt case with its message.
 * Each file is read three ways: one event at a time, and in runs of 1 and
 * 256 (mt_dat_next_batch), which must agree. */
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

#define MS 1000000ull

/* A script: each step an event (tag, trace, value: an ALLOC's size
 * unless SAME_SIZE, a reference's ref column value), or a REC(tid) that
 * starts a record of thread tid, FR (the frame ends), END (the file
 * ends).  Every event has SAME_TIME unless NT. */
enum { REC = 0x1000u, FR = 0x2000u, END = 0x4000u, NT = 0x800u };

typedef struct step {
    unsigned tag;
    uint32_t trace;
    uint64_t v;
} step;

#define A MT_DAT_EV_ALLOC
#define R MT_DAT_EV_FREE_REF
#define P MT_DAT_EV_FREE_PREV
#define O 0x80u /* tag bit 7 (SAME_SIZE on an ALLOC or FREE): bad on a reference */
#define ST MT_DAT_EV_SAME_TRACE
#define SS MT_DAT_EV_SAME_SIZE

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

/* The file a script makes: db_culled_head (traces 0 to 2), then its
 * frames, frame i's records at (2000 + i) s. */
static void build(const step *s, uint32_t version, db_file *f)
{
    db_culled_head(f, version, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    uint64_t tid = 0, fr = 0;
    for (;; s++) {
        if ((s->tag & (REC | FR | END)) && e.n)
            db_ev2_record(f, &e, tid, (2000 + fr) * MS);
        if (s->tag & REC)
            tid = s->trace;
        else if (s->tag & (FR | END))
            db_flush(f), fr++;
        else
            put_event(&e, s);
        if (s->tag & END)
            break;
    }
    db_ev2_free(&e);
}

static mt_dat_reader *open_mem(const db_file *f, mt_err *err)
{
    int fd = memfd_create("dat", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f->out.p, f->out.n), (ssize_t)f->out.n);
    return mt_dat_open_fd(fd, "mem", err);
}

#define MAXEV 64

/* The allocations' and frees' sizes, per runs of `per` (0: one event at
 * a time); their count, the code that ended the reading in *end. */
static size_t read_sizes(const db_file *f, size_t per, uint64_t *out, mt_errc *end, mt_err *err)
{
    mt_dat_reader *r = open_mem(f, err);
    assert_non_null(r);
    mt_dat_event ev;
    mt_dat_hev h[MAXEV];
    size_t k = 0, n = 0;
    while ((*end = mt_dat_next(r, &ev, err)) == MT_OK) {
        if ((ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) && k < MAXEV)
            out[k++] = ev.u.ev.size;
        while (per && (*end = mt_dat_next_batch(r, h, per, &n, err)) == MT_OK && n)
            for (size_t i = 0; i < n && k < MAXEV; i++)
                out[k++] = h[i].ev.size;
        if (per && *end != MT_OK) {
            for (size_t i = 0; i < n && k < MAXEV; i++)
                out[k++] = h[i].ev.size;
            break;
        }
    }
    mt_dat_close(r);
    return k;
}

/* The script read three ways gives the sizes want[0, n) and ends with
 * MT_E_EMPTY, or (msg) ends in MT_E_CORRUPT with msg after them. */
static void expect(const step *s, const uint64_t *want, size_t n, const char *msg)
{
    db_file f;
    build(s, MT_DAT_VERSION_RUNS, &f);
    static const size_t pers[] = {0, 1, 256};
    for (size_t p = 0; p < sizeof pers / sizeof *pers; p++) {
        uint64_t got[MAXEV];
        mt_err err = {MT_OK, ""};
        mt_errc end;
        size_t k = read_sizes(&f, pers[p], got, &end, &err);
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
    db_file_free(&f);
}

#define N(a) (sizeof(a) / sizeof *(a))

/* Threads 1 and 2 allocate trace 1 in one frame: a reference counts
 * back among every thread's blocks of the trace, as in version 6 (not
 * among its record's thread's: the draft's references by thread,
 * docs/performance.md, were not kept). */
static void refs_among_every_thread(void **state)
{
    (void)state;
    const step s[] = {
        {REC, 1, 0}, {A, 1, 10}, {A, 1, 11}, {A, 1, 12},  {REC, 2, 0},
        {A, 1, 20},  {A, 1, 21}, {A, 1, 22}, {REC, 1, 0}, {R, 1, 0}, /* 22 */
        {R, 1, 1},                                                   /* 21 */
        {R, 1, 3},                                                   /* 12 */
        {REC, 2, 0}, {R, 1, 4},                                      /* 11 */
        {R, 1, 2},                                                   /* 20 */
        {R, 1, 5},                                                   /* 10 */
        {END, 0, 0},
    };
    const uint64_t want[] = {10, 11, 12, 20, 21, 22, 22, 21, 12, 11, 20, 10};
    expect(s, want, N(want), NULL);
}

/* Runs of references: SAME_TIME and SAME_TRACE right after a reference
 * of the same kind: ref = the previous ref + 1 + v; else v. */
static void runs_of_refs(void **state)
{
    (void)state;
    /* a reference whose trace is written, or without SAME_TIME, or after
     * an event of another kind, is not in a run */
    const step t[] = {
        {REC, 1, 0},         {A, 1, 1}, {A, 1, 2}, {A, 1, 3}, {A, 1, 4},
        {A, 1, 5},           {A, 1, 6}, {A, 1, 7}, {A, 1, 8}, {R, 1, 0}, /* 8 */
        {R | ST, 1, 0},                                                  /* 0 + 1 + 0: 7 */
        {R | ST, 1, 1},                                                  /* 1 + 1 + 1: 5 */
        {R | ST | NT, 1, 4}, /* no SAME_TIME: ref 4: 4 */
        {R | ST, 1, 0},      /* 4 + 1 + 0: 3 */
        {A | ST, 1, 0},      /* a rising size, 3 + 1 + 0: 4, block 8 */
        {R | ST, 1, 3},      /* after an ALLOC: ref 3: 6 */
        {R | ST, 1, 3},      /* 3 + 1 + 3: 2 */
        {R, 1, 0},           /* its trace written: ref 0: the ALLOC's 4 */
        {R | ST, 1, 7},      /* 0 + 1 + 7: 1 */
        {END, 0, 0},
    };
    const uint64_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 5, 4, 3, 4, 6, 2, 4, 1};
    expect(t, want, N(want), NULL);
    /* a run of FREE_PREVs (of thread 1's blocks, in thread 2's record); a
     * FREE_REF after one starts again, and a FREE_PREV after that */
    const step u[] = {
        {REC, 1, 0},    {A, 1, 1},   {A, 1, 2},  {A, 1, 3},  {A, 1, 4},
        {FR, 0, 0},     {REC, 2, 0}, {A, 1, 10}, {A, 1, 11}, {P, 1, 0}, /* 4 */
        {P | ST, 1, 1},                                                 /* 0 + 1 + 1: 2 */
        {R | ST, 1, 0},                                                 /* a FREE_REF: ref 0: 11 */
        {P | ST, 1, 1},                                                 /* after it: ref 1: 3 */
        {P | ST, 1, 1},                                                 /* 1 + 1 + 1: 1 */
        {END, 0, 0},
    };
    const uint64_t want_u[] = {1, 2, 3, 4, 10, 11, 4, 2, 11, 3, 1};
    expect(u, want_u, N(want_u), NULL);
}

/* Rising sizes: an ALLOC with SAME_TIME and SAME_TRACE, without
 * SAME_SIZE, of a trace with a last size s: s + 1 + v. */
static void rising_sizes(void **state)
{
    (void)state;
    const step s[] = {
        {REC, 1, 0},         {A, 1, 100}, {A | ST, 1, 5}, /* 106 */
        {A | ST | SS, 1, 0},                              /* 106 */
        {A | ST, 1, 0},                                   /* 107 */
        {A | ST | NT, 1, 5},                              /* no SAME_TIME: 5 */
        {A, 1, 7},                                        /* no SAME_TRACE: 7 */
        {R | ST, 1, 0}, /* frees 7 (a free's size is its block's) */
        {A | ST, 1, 1}, /* the last size is the free's, 7: 9 */
        {A, 2, 3},           {END, 0, 0},
    };
    const uint64_t want[] = {100, 106, 106, 107, 5, 7, 7, 9, 3};
    expect(s, want, N(want), NULL);
}

/* FREE_PREV among every thread's blocks of the frame before, in runs
 * too (also from a seek: prev_refs_after_seek). */
static const step prev_script[] = {
    {REC, 1, 0},    {A, 1, 10}, {A, 1, 11},  {REC, 2, 0}, {A, 1, 20},
    {A, 1, 21},     {FR, 0, 0}, {REC, 1, 0}, {P, 1, 0},              /* 21 */
    {P | ST, 1, 1},                                                  /* 0 + 1 + 1: 11 */
    {A, 1, 30},     {P, 1, 1},                                       /* 20 */
    {REC, 2, 0},    {P, 1, 3},                                       /* 10 */
    {A, 2, 40},     {A, 2, 41}, {FR, 0, 0},  {REC, 1, 0}, {P, 1, 0}, /* 30 */
    {REC, 2, 0},    {P, 2, 0},                                       /* 41 */
    {P | ST, 2, 0},                                                  /* 0 + 1 + 0: 40 */
    {END, 0, 0},
};
static const uint64_t prev_want[] = {10, 11, 20, 21, 21, 11, 30, 20, 10, 40, 41, 30, 41, 40};

static void prev_refs(void **state)
{
    (void)state;
    expect(prev_script, prev_want, N(prev_want), NULL);
}

/* A seek to each frame decodes the frame before into the context: the
 * references read as in order. */
static void prev_refs_after_seek(void **state)
{
    (void)state;
    db_file f;
    build(prev_script, MT_DAT_VERSION_RUNS, &f);
    mt_err err;
    mt_dat_reader *r = open_mem(&f, &err);
    assert_non_null(r);
    mt_dat_pos pos[16];
    size_t at[16], npos = 0, k = 0;
    mt_dat_event ev;
    mt_errc end;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        k += ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE;
        if (npos < 16 && mt_dat_tell(r, &pos[npos]))
            at[npos++] = k;
    }
    assert_true(npos >= 3);
    for (size_t p = npos; p-- > 0;) {
        assert_int_equal(mt_dat_seek(r, &pos[p], &err), MT_OK);
        size_t j = at[p];
        while ((end = mt_dat_next(r, &ev, &err)) == MT_OK) {
            if (ev.kind != MT_DAT_ALLOC && ev.kind != MT_DAT_FREE)
                continue;
            assert_true(j < N(prev_want));
            if (ev.u.ev.size != prev_want[j])
                fail_msg("from position %zu: event %zu size %llu, wanted %llu", p, j,
                         (unsigned long long)ev.u.ev.size, (unsigned long long)prev_want[j]);
            j++;
        }
        if (end != MT_E_EMPTY)
            fail_msg("from position %zu: '%s'", p, err.msg);
        assert_int_equal(j, N(prev_want));
    }
    mt_dat_close(r);
    db_file_free(&f);
}

/* What the reader rejects of version 7, each with its message. */
static void corrupt_v7(void **state)
{
    (void)state;
    const uint64_t big = UINT64_MAX - 3;
    { /* a run's ref overflows */
        const step s[] = {{REC, 1, 0},
                          {A, 1, 10},
                          {A, 1, 11},
                          {R, 1, 1},
                          {R | ST, 1, UINT64_MAX - 1}, /* 1 + 1 + v wraps to 0 */
                          {A, 1, 12},
                          {END, 0, 0}};
        const uint64_t want[] = {10, 11, 10};
        expect(s, want, N(want), "reference overflows");
    }
    { /* a run of FREE_PREVs' ref overflows */
        const step s[] = {{REC, 1, 0},
                          {A, 1, 10},
                          {A, 1, 11},
                          {FR, 0, 0},
                          {REC, 1, 0},
                          {P, 1, 1},
                          {P | ST, 1, UINT64_MAX - 1},
                          {A, 1, 12},
                          {END, 0, 0}};
        const uint64_t want[] = {10, 11, 10};
        expect(s, want, N(want), "reference overflows");
    }
    { /* a run's ref past the trace's blocks */
        const step s[] = {{REC, 1, 0},
                          {A, 1, 10},
                          {A, 1, 11},
                          {R, 1, 0},
                          {R | ST, 1, 0} /* ref 1: 10 */,
                          {R | ST, 1, 0} /* ref 2 */,
                          {A, 1, 12},
                          {END, 0, 0}};
        const uint64_t want[] = {10, 11, 11, 10};
        expect(s, want, N(want), "free of a block not allocated in its frame");
    }
    { /* a rising size overflows */
        const step s[] = {{REC, 1, 0},    {A, 1, 10}, {A, 1, big},
                          {A | ST, 1, 3}, {A, 1, 12}, {END, 0, 0}};
        const uint64_t want[] = {10, big};
        expect(s, want, N(want), "allocation size overflows");
    }
}

/* Tag bit 7 on a FREE_REF or FREE_PREV (the draft's OTHER, not kept): a
 * bad tag in version 7 as in 6. */
static void bit7_on_refs(void **state)
{
    (void)state;
    const step s[][8] = {
        {{REC, 1, 0}, {A, 1, 10}, {A, 1, 11}, {R | O, 1, 0}, {A, 1, 12}, {END, 0, 0}},
        {{REC, 1, 0},
         {A, 1, 10},
         {A, 1, 11},
         {FR, 0, 0},
         {REC, 1, 0},
         {P | O, 1, 0},
         {A, 1, 12},
         {END, 0, 0}},
    };
    static const uint32_t versions[] = {MT_DAT_VERSION_PREV, MT_DAT_VERSION_RUNS};
    for (size_t k = 0; k < N(s); k++)
        for (size_t v = 0; v < N(versions); v++) {
            db_file f;
            build(s[k], versions[v], &f);
            uint64_t got[MAXEV];
            mt_err err = {MT_OK, ""};
            mt_errc end;
            for (size_t per = 0; per <= 256; per += 256) {
                size_t n = read_sizes(&f, per, got, &end, &err);
                if (n != 2 || end != MT_E_CORRUPT || !strstr(err.msg, "bad event tag"))
                    fail_msg("script %zu, version %u, per %zu: %zu events, '%s'", k,
                             (unsigned)versions[v], per, n, err.msg);
            }
            db_file_free(&f);
        }
}

/* --- thousands of events against a model (test_reader_v7model.c) ------- */

/* Random files read one event at a time, in runs, and from every frame
 * after a seek give the model's sizes. */
static void many_events(void **state)
{
    (void)state;
    db_v7_sizes *m = calloc(1, sizeof *m);
    assert_non_null(m);
    db_file f;
    db_v7_random(&f, 12, 0x2545f4914f6cdd1dull, m);
    uint64_t *got = malloc(DB_V7_WANT * sizeof *got);
    static const size_t pers[] = {0, 1, 37, 256};
    for (size_t p = 0; p < sizeof pers / sizeof *pers; p++) {
        mt_err err = {MT_OK, ""};
        mt_dat_reader *r = open_mem(&f, &err);
        assert_non_null(r);
        mt_dat_event ev;
        mt_dat_hev h[256];
        size_t k = 0, n = 0;
        mt_errc end;
        while ((end = mt_dat_next(r, &ev, &err)) == MT_OK) {
            if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE)
                got[k++] = ev.u.ev.size;
            while (pers[p] && (end = mt_dat_next_batch(r, h, pers[p], &n, &err)) == MT_OK && n)
                for (size_t i = 0; i < n; i++)
                    got[k++] = h[i].ev.size;
            if (pers[p] && end != MT_OK)
                break;
        }
        if (end != MT_E_EMPTY)
            fail_msg("per %zu: '%s' after %zu events", pers[p], err.msg, k);
        assert_int_equal(k, m->n);
        for (size_t i = 0; i < k; i++)
            if (got[i] != m->want[i])
                fail_msg("per %zu: event %zu size %llu, wanted %llu", pers[p], i,
                         (unsigned long long)got[i], (unsigned long long)m->want[i]);
        mt_dat_close(r);
    }
    /* from each frame after a seek (its frame before decoded first) */
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = open_mem(&f, &err);
    mt_dat_pos pos[32];
    size_t at[32], npos = 0, k = 0;
    mt_dat_event ev;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        k += ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE;
        if (npos < 32 && mt_dat_tell(r, &pos[npos]))
            at[npos++] = k;
    }
    assert_true(npos >= 10);
    for (size_t p = npos; p-- > 0;) {
        assert_int_equal(mt_dat_seek(r, &pos[p], &err), MT_OK);
        size_t j = at[p];
        mt_errc end;
        while ((end = mt_dat_next(r, &ev, &err)) == MT_OK)
            if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) {
                assert_true(j < m->n);
                if (ev.u.ev.size != m->want[j])
                    fail_msg("from position %zu: event %zu size %llu, wanted %llu", p, j,
                             (unsigned long long)ev.u.ev.size, (unsigned long long)m->want[j]);
                j++;
            }
        if (end != MT_E_EMPTY)
            fail_msg("from position %zu: '%s'", p, err.msg);
        assert_int_equal(j, m->n);
    }
    mt_dat_close(r);
    free(got);
    free(m);
    db_file_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refs_among_every_thread),
        cmocka_unit_test(runs_of_refs),
        cmocka_unit_test(rising_sizes),
        cmocka_unit_test(prev_refs),
        cmocka_unit_test(prev_refs_after_seek),
        cmocka_unit_test(corrupt_v7),
        cmocka_unit_test(bit7_on_refs),
        cmocka_unit_test(many_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
