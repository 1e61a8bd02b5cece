/* test_reader_v8.c -- unit tests of the reader's version 8, paired tags
 * (docs/recording-format.md, 13 EVENTS2, "Version 8"; src/ipc
 * dat_reader_tagpairs.c) on hand-built files: codes, escapes, an odd
 * count, contexts the table lacks, a second TAG_PAIRS replacing the
 * first, the table reset at each frame (in order and after seeks), the
 * tags column's length, TAG_PAIRS skipped in a version-7 file, every
 * corrupt case with its message, and random files against a model.
 * Each file is read one event at a time, in runs, and (when it is sound)
 * from each frame after a seek (test_reader_script.c). */
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
#include "dat_reader_tagpairs.h"
#include "test_reader_script.h"

#define N(a) (sizeof(a) / sizeof *(a))
#define V8 MT_DAT_VERSION_PAIRS

/* A tag as the script writes it (SAME_TIME), and a pair of two. */
#define T(x) ((x) | MT_DAT_EV_SAME_TIME)
#define PAIR(a, b) (uint16_t)(T(a) | T(b) << 8)

/* Context c of t: the n pairs given. */
static void set_ctx(db_pairs *t, unsigned c, const uint16_t *p, unsigned n)
{
    t->n[c] = n;
    memcpy(t->p[c], p, n * sizeof *p);
}

/* The tables of these tests (set up once: 130 KB each). */
static db_pairs tab_a, tab_b, tab_ab, tab_small, tab_big, tab_more, tab_ctxst, tab_x, tab_empty;

static int setup(void **state)
{
    (void)state;
    /* a: context 0 two pairs, context T(A|ST) two; T(R) and T(A) not listed */
    set_ctx(&tab_a, 0, (const uint16_t[]){PAIR(A, A | ST), PAIR(A, A)}, 2);
    set_ctx(&tab_a, T(A | ST), (const uint16_t[]){PAIR(R | ST, R | ST), PAIR(A | ST, R)}, 2);
    /* b: context 0's pairs the other way round, T(A|ST) not listed */
    set_ctx(&tab_b, 0, (const uint16_t[]){PAIR(A, A), PAIR(A, A | ST)}, 2);
    /* ab: b's, and a's context T(A|ST) (b does not list it) */
    tab_ab = tab_b;
    set_ctx(&tab_ab, T(A | ST), tab_a.p[T(A | ST)], 2);
    /* small: one pair of context 0; big: a's, whose code 1 small lacks;
     * more: three, code 2 above small's */
    set_ctx(&tab_small, 0, (const uint16_t[]){PAIR(A, A)}, 1);
    set_ctx(&tab_big, 0, (const uint16_t[]){PAIR(A, A), PAIR(A, A | ST)}, 2);
    set_ctx(&tab_more, 0, (const uint16_t[]){PAIR(A, A), PAIR(A, R), PAIR(A, A | ST)}, 3);
    /* ctxst: small's, and context T(A|ST), which small does not list */
    tab_ctxst = tab_small;
    set_ctx(&tab_ctxst, T(A | ST), (const uint16_t[]){PAIR(A, A)}, 1);
    /* x: context 0 not listed, T(A|ST) one pair */
    set_ctx(&tab_x, T(A | ST), (const uint16_t[]){PAIR(A | ST, R)}, 1);
    (void)tab_empty; /* no context: every pair escaped */
    return 0;
}

/* Codes, an escape where the table has no pair (context 0x06, T(R),
 * not listed), a pair of the table escaped all the same, an odd last
 * tag as it is, a record of an even count, and an empty table (no
 * context: every pair an escape). */
static void codes_and_escapes(void **state)
{
    (void)state;
    const step s[] = {
        {TP, 0, ON(&tab_a)},
        {REC, 1, TAGS_CODED},
        {A, 1, 10},
        {A | ST, 1, 5}, /* code 0 of context 0: 10 + 1 + 5 = 16 */
        {A | ST, 1, 0}, /* 17 */
        {R, 1, 0},      /* code 1 of context T(A|ST): frees 17 */
        {A, 2, 7},
        {A, 2, 8}, /* context T(R), not listed: escaped */
        {A, 1, 9}, /* the odd last tag */
        {REC, 2, TAGS_ESCAPED},
        {A, 1, 11},
        {A, 1, 12}, /* code 1 of context 0, escaped */
        {REC, 1, TAGS_CODED},
        {A, 2, 13},
        {A, 2, 14},
        {A | ST, 2, 0}, /* 15 */
        {R | ST, 2, 0}, /* frees 15 */
        {FR, 0, 0},
        {TP, 0, ON(&tab_empty)},
        {REC, 1, TAGS_ESCAPED},
        {A, 1, 20},
        {A, 1, 21},
        {A, 1, 22},
        {END, 0, 0},
    };
    const uint64_t want[] = {10, 16, 17, 17, 7, 8, 9, 11, 12, 13, 14, 15, 15, 20, 21, 22};
    ts_expect(s, V8, want, N(want), NULL);
}

/* A code at or above its context's npairs, or in a context the table
 * does not list: corrupt, before the record's first event. */
static void code_beyond_table(void **state)
{
    (void)state;
    const db_pairs *coders[] = {&tab_big, &tab_more, &tab_ctxst};
    for (size_t k = 0; k < N(coders); k++) {
        const step s[] = {
            {TP, 0, ON(&tab_small)},
            {REC, 1, TAGS_CODED},
            {A, 1, 5},
            {A, 1, 6}, /* code 0: fine */
            {TPC, 0, ON(coders[k])},
            {REC, 1, TAGS_CODED},
            {A, 1, 10},
            {A | ST, 1, 0}, /* big: code 1 (small's npairs); more: code 2 */
            {A, 1, 11},
            {A, 1, 12}, /* ctxst: code 0 of context T(A|ST) (small escapes the first pair) */
            {END, 0, 0},
        };
        const uint64_t want[] = {5, 6};
        ts_expect(s, V8, want, N(want), "tag code beyond its table");
    }
}

/* The tags column's length: codes that end before the tags do (a code,
 * an escape's second tag, the odd last tag cut), a byte after them;
 * without a table, tags_len other than nevents either way. */
static void tags_column_length(void **state)
{
    (void)state;
    static const struct {
        const db_pairs *table;
        unsigned how;
        unsigned nev; /* 3 or 4 */
    } cases[] = {
        {&tab_a, TAGS_CUT, 4},     {&tab_a, TAGS_MORE, 4}, {&tab_a, TAGS_CUT, 3},
        {&tab_a, TAGS_MORE, 3},    {&tab_b, TAGS_CUT, 4}, /* escape cut */
        {&tab_empty, TAGS_CUT, 4}, {NULL, TAGS_CUT, 4},    {NULL, TAGS_MORE, 4},
        {NULL, TAGS_CUT, 3},       {NULL, TAGS_MORE, 3},
    };
    for (size_t k = 0; k < N(cases); k++) {
        /* tab_a codes the first pair, its context T(A|ST) the second;
         * tab_b the first only, tab_empty neither */
        const step s[] = {
            {REC, 1, TAGS_CODED},
            {A, 1, 5},
            {FR, 0, 0},
            {cases[k].table ? TP : REC, 1, cases[k].table ? ON(cases[k].table) : TAGS_CODED},
            {REC, 1, cases[k].how},
            {A, 1, 10},
            {A | ST, 1, 0},
            {A | ST, 1, 0},
            {cases[k].nev == 4 ? R : FR, 1, 0},
            {END, 0, 0},
        };
        const uint64_t want[] = {5};
        ts_expect(s, V8, want, N(want), "tags column length");
    }
}

/* A TAG_PAIRS payload from n values. */
static void payload(db_buf *b, const uint64_t *v, size_t n)
{
    b->n = 0;
    for (size_t i = 0; i < n; i++)
        db_v(b, v[i]);
}

/* Every field of a TAG_PAIRS out of range, or cut: "bad tag pairs". */
static void bad_tag_pairs(void **state)
{
    (void)state;
    const uint64_t pa = PAIR(A, A);
    static uint64_t many[1 + 3 * 257];
    many[0] = 257; /* 257 contexts: 0 to 255 ascending, then one more */
    for (unsigned c = 0; c < 257; c++)
        many[1 + 3 * c] = c < 256 ? c : 255, many[2 + 3 * c] = 1, many[3 + 3 * c] = pa;
    static uint64_t wide[3 + 256];
    wide[0] = 1, wide[1] = 0, wide[2] = 256; /* 256 pairs */
    for (unsigned x = 0; x < 256; x++)
        wide[3 + x] = x;
    const struct {
        const uint64_t *v;
        size_t n;
    } cases[] = {
        {(const uint64_t[]){2, 4, 1, pa, 4, 1, pa}, 7},      /* contexts equal */
        {(const uint64_t[]){2, 4, 1, pa, 0, 1, pa}, 7},      /* descending */
        {many, 1 + 3 * 257},                                 /* 257 contexts */
        {(const uint64_t[]){257}, 1},                        /* 257 said, none there */
        {(const uint64_t[]){1, 256, 1, pa}, 4},              /* context 256 */
        {(const uint64_t[]){1, 0, 0}, 3},                    /* npairs 0 */
        {wide, 3 + 256},                                     /* npairs 256 */
        {(const uint64_t[]){1, 0, 1, 0x10000}, 4},           /* a pair above 0xffff */
        {(const uint64_t[]){1, 0, 2, pa}, 4},                /* cut short */
        {(const uint64_t[]){2, 0, 1, pa, 1, 1, 0x10000}, 7}, /* the second context's pair */
    };
    db_buf b = {0};
    for (size_t k = 0; k < N(cases); k++) {
        payload(&b, cases[k].v, cases[k].n);
        const step s[] = {
            {REC, 1, TAGS_CODED},   {A, 1, 5},  {FR, 0, 0},  {TPRAW, 0, ON(&b)},
            {REC, 1, TAGS_ESCAPED}, {A, 1, 10}, {END, 0, 0},
        };
        const uint64_t want[] = {5};
        ts_expect(s, V8, want, N(want), "bad tag pairs");
    }
    db_buf_free(&b);
}

/* A bad TAG_PAIRS leaves no pairs, not the part read before its bad
 * field: a reader asked for more after the error reads the next record's
 * codes as beyond the table. */
static void bad_tag_pairs_hold_none(void **state)
{
    (void)state;
    db_buf b = {0};
    payload(&b, (const uint64_t[]){2, 0, 1, PAIR(A, A), 4, 1, 0x10000}, 7);
    const step s[] = {
        {TPRAW, 0, ON(&b)}, {TPC, 0, ON(&tab_small)}, {REC, 1, TAGS_CODED}, {A, 1, 10}, {A, 1, 11},
        {END, 0, 0},
    };
    db_file f;
    ts_build(s, V8, &f);
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = ts_open_mem(&f, &err);
    assert_non_null(r);
    mt_dat_event ev;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK)
        ;
    assert_non_null(strstr(err.msg, "bad tag pairs"));
    rc = mt_dat_next(r, &ev, &err);
    if (rc != MT_E_CORRUPT || !strstr(err.msg, "tag code beyond its table"))
        fail_msg("after the error: %d '%s'", rc, err.msg);
    mt_dat_close(r);
    db_file_free(&f);
    db_buf_free(&b);
}

/* The limits themselves are sound: context 255, 255 pairs, pair 0xffff,
 * no context at all, bytes after the table (appended fields). */
static void tag_pairs_limits(void **state)
{
    (void)state;
    static uint64_t v[6 + 255];
    v[0] = 2, v[1] = 0, v[2] = 1, v[3] = PAIR(A, A);
    v[4] = 255, v[5] = 255;
    for (unsigned x = 0; x < 255; x++)
        v[6 + x] = x == 254 ? 0xffff : x;
    db_buf b = {0}, e = {0};
    payload(&b, v, 6 + 255);
    db_bytes(&b, "\x05", 1); /* appended */
    payload(&e, (const uint64_t[]){0}, 1);
    const step s[] = {
        {TPRAW, 0, ON(&b)},   {TPC, 0, ON(&tab_small)},
        {REC, 1, TAGS_CODED}, {A, 1, 10},
        {A, 1, 11},           {FR, 0, 0},
        {TPRAW, 0, ON(&e)},   {REC, 1, TAGS_ESCAPED},
        {A, 1, 12},           {A, 1, 13},
        {END, 0, 0},
    };
    const uint64_t want[] = {10, 11, 12, 13};
    ts_expect(s, V8, want, N(want), NULL);
    db_buf_free(&b);
    db_buf_free(&e);
}

/* The expansion reads no byte past its column, wherever the codes end
 * early: the column ends a page, the page after it unreadable. */
static void expand_stays_in_column(void **state)
{
    (void)state;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *m =
        mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + pg, pg, PROT_NONE), 0);
    db_buf b = {0};
    payload(&b, (const uint64_t[]){1, 0, 1, PAIR(A, A)}, 4);
    mt_dtp p = {0};
    const char *why = NULL;
    assert_int_equal(mt_dtp_read(&p, b.p, b.p + b.n, &why), MT_OK);
    static const struct {
        unsigned char codes[2];
        size_t len, n;
    } cases[] = {
        {{0}, 1, 4},         /* a code, and none for the second pair */
        {{255, T(A)}, 2, 2}, /* an escape's second tag cut */
        {{0}, 1, 3},         /* the odd tag cut */
        {{255, T(A)}, 2, 4}, /* the escape's second tag cut (more pairs after) */
    };
    for (size_t k = 0; k < N(cases); k++) {
        unsigned char *at = m + pg - cases[k].len;
        memcpy(at, cases[k].codes, cases[k].len);
        why = mt_dtp_expand(&p, at, m + pg, cases[k].n);
        if (!why || strcmp(why, "tags column length"))
            fail_msg("case %zu: '%s'", k, why ? why : "(none)");
    }
    free(p.t);
    db_buf_free(&b);
    munmap(m, 2 * pg);
}

/* A second TAG_PAIRS replaces the first: the records after it read by
 * it, codes of a context only the first listed are beyond it. */
static void second_table_replaces(void **state)
{
    (void)state;
    const step s[] = {
        {TP, 0, ON(&tab_a)},  {REC, 1, TAGS_CODED}, {A, 1, 10},
        {A, 1, 11}, /* a's code 1 */
        {TP, 0, ON(&tab_b)},  {REC, 2, TAGS_CODED}, {A, 1, 12},
        {A, 1, 13}, /* b's code 0 (a's pair 0 would make it 12 + 1 + 13) */
        {REC, 2, TAGS_CODED}, {A, 2, 14},           {A | ST, 2, 0}, /* b's code 1: 15 */
        {END, 0, 0},
    };
    const uint64_t want[] = {10, 11, 12, 13, 14, 15};
    ts_expect(s, V8, want, N(want), NULL);
    const step t[] = {
        {TP, 0, ON(&tab_a)},  {REC, 1, TAGS_CODED},
        {A, 1, 10},           {A | ST, 1, 0}, /* a's code 0: 11 */
        {TP, 0, ON(&tab_b)},  {TPC, 0, ON(&tab_ab)},
        {REC, 1, TAGS_CODED}, {A, 1, 12},
        {A | ST, 1, 0},                  /* b's code 1 */
        {A | ST, 1, 0},       {R, 1, 0}, /* code 1 of context T(A|ST): a listed it, b does not */
        {END, 0, 0},
    };
    const uint64_t want_t[] = {10, 11};
    ts_expect(t, V8, want_t, N(want_t), "tag code beyond its table");
}

/* A frame starts without a table: in order, and after a seek whatever
 * table the reader held (the frame before, decoded first, reads its own
 * TAG_PAIRS). */
static void table_reset_at_frames(void **state)
{
    (void)state;
    const step s[] = {
        {REC, 1, TAGS_CODED},
        {A, 1, 10},
        {A, 1, 11},
        {FR, 0, 0},
        {TP, 0, ON(&tab_a)},
        {REC, 1, TAGS_CODED},
        {A, 1, 12},
        {A | ST, 1, 0}, /* 13 */
        {A | ST, 1, 0},
        {R, 1, 0},
        {FR, 0, 0},
        {REC, 2, TAGS_CODED},
        {A, 1, 20},
        {A, 1, 21},
        {P, 1, 1},
        /* 13 */ {FR, 0, 0},
        {TP, 0, ON(&tab_b)},
        {REC, 1, TAGS_CODED},
        {A, 1, 30},
        {A, 1, 31},
        {P, 1, 0},
        /* 21 */ {END, 0, 0},
    };
    const uint64_t want[] = {10, 11, 12, 13, 14, 14, 20, 21, 13, 30, 31, 21};
    ts_expect(s, V8, want, N(want), NULL);
}

/* Codes in a frame without a TAG_PAIRS, by the table of the frame
 * before: read as tags, as the format says a frame without a table holds
 * them: a column of another length than the tags' is corrupt; one of
 * the same length is read as tags (here 255, a bad tag). */
static void codes_without_table(void **state)
{
    (void)state;
    const step s[] = {
        {TP, 0, ON(&tab_a)},  {REC, 1, TAGS_CODED}, {A, 1, 10}, {A, 1, 11}, {FR, 0, 0},
        {TPC, 0, ON(&tab_a)}, {REC, 1, TAGS_CODED}, {A, 1, 12}, {A, 1, 13}, {END, 0, 0},
    };
    const uint64_t want[] = {10, 11};
    ts_expect(s, V8, want, N(want), "tags column length");
    /* 4 tags in 4 bytes: an escape (255 and two tags), then a code */
    const step t[] = {
        {TP, 0, ON(&tab_x)},  {REC, 1, TAGS_CODED},
        {A, 1, 10},           {A, 1, 11},
        {FR, 0, 0},           {TPC, 0, ON(&tab_x)},
        {REC, 1, TAGS_CODED}, {A, 1, 12},
        {A | ST, 1, 0},                  /* context 0 not listed: escaped */
        {A | ST, 1, 0},       {R, 1, 0}, /* code 0 of context T(A|ST) */
        {END, 0, 0},
    };
    ts_expect(t, V8, want, N(want), "bad event tag");
}

/* TAG_PAIRS in a file of an earlier version: skipped, as an unknown
 * record (even one that would be bad), the tags as they are. */
static void tag_pairs_in_v7(void **state)
{
    (void)state;
    db_buf b = {0};
    payload(&b, (const uint64_t[]){1, 256, 0}, 3);
    const step s[] = {
        {TPRAW, 0, ON(&b)}, {TP, 0, ON(&tab_a)}, {REC, 1, 0},
        {A, 1, 10},         {A | ST, 1, 0},      {END, 0, 0},
    };
    const uint64_t want[] = {10, 11};
    ts_expect(s, MT_DAT_VERSION_RUNS, want, N(want), NULL);
    db_file f;
    ts_build(s, MT_DAT_VERSION_RUNS, &f);
    mt_err err;
    mt_dat_reader *r = ts_open_mem(&f, &err);
    assert_non_null(r);
    mt_dat_event ev;
    while (mt_dat_next(r, &ev, &err) == MT_OK)
        ;
    assert_int_equal(mt_dat_records_skipped(r), 2);
    mt_dat_close(r);
    db_file_free(&f);
    db_buf_free(&b);
}

/* Random version-8 files (test_reader_v7model.c: random tables, a
 * second one in some frames, none in others, escapes) give the model's
 * sizes every way, from every frame after a seek too. */
static void many_events(void **state)
{
    (void)state;
    db_v7_sizes *m = calloc(1, sizeof *m);
    assert_non_null(m);
    static const uint64_t seeds[] = {0x2545f4914f6cdd1dull, 0x9e3779b97f4a7c15ull, 7};
    for (size_t k = 0; k < N(seeds); k++) {
        db_file f;
        db_v8_random(&f, 16, seeds[k], m);
        ts_expect_file(&f, m->want, m->n);
        db_file_free(&f);
    }
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(codes_and_escapes),       cmocka_unit_test(code_beyond_table),
        cmocka_unit_test(tags_column_length),      cmocka_unit_test(bad_tag_pairs),
        cmocka_unit_test(bad_tag_pairs_hold_none), cmocka_unit_test(tag_pairs_limits),
        cmocka_unit_test(expand_stays_in_column),  cmocka_unit_test(second_table_replaces),
        cmocka_unit_test(table_reset_at_frames),   cmocka_unit_test(codes_without_table),
        cmocka_unit_test(tag_pairs_in_v7),         cmocka_unit_test(many_events),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
