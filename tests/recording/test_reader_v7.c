/* test_reader_v7.c -- unit tests of the reader's version-7 EVENTS2 events
 * (docs/recording-format.md, 13 EVENTS2, "Version 7"; src/ipc
 * dat_reader_events2.c, dat_reader_batch2.c) on hand-built files: runs
 * of references (FREE_REF and FREE_PREV, also after a seek that decodes
 * the frame before), rising sizes, references still counted among every
 * thread's blocks of a trace (tag bit 7 on one a bad tag, as in version
 * 6), and every corrupt case with its message.
 * Each file is read three ways: one event at a time, and in runs of 1 and
 * 256 (mt_dat_next_batch), which must agree, and from each frame after a
 * seek (test_reader_script.c). */
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
#include "test_reader_script.h"

/* The script (test_reader_script.h) in a version-7 file read three ways
 * gives the sizes want[0, n) and ends, or ends with msg after them. */
static void expect(const step *s, const uint64_t *want, size_t n, const char *msg)
{
    ts_expect(s, MT_DAT_VERSION_RUNS, want, n, msg);
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
 * references read as in order (in runs too). */
static void prev_refs_after_seek(void **state)
{
    (void)state;
    db_file f;
    ts_build(prev_script, MT_DAT_VERSION_RUNS, &f);
    ts_expect_file(&f, prev_want, N(prev_want));
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
            ts_build(s[k], versions[v], &f);
            uint64_t got[8];
            mt_err err = {MT_OK, ""};
            mt_errc end;
            for (size_t per = 0; per <= 256; per += 256) {
                size_t n = ts_read_sizes(&f, per, got, 8, &end, &err);
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
    ts_expect_file(&f, m->want, m->n);
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
