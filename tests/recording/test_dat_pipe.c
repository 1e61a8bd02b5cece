/* test_dat_pipe.c -- the first pass on a reading thread (src/ipc/dat_pipe.c)
 * gives, call by call, what the reader gives on one thread.
 *
 * A db_long recording (frames of long EVENTS2 records, blocks live at each
 * TOTALS and frame end, frees naming old blocks) is read twice through
 * mt_dat_pipe, with 1 and with 2 threads, in the replay's first-pass call
 * pattern (mt_dat_pipe_next; mt_dat_pipe_next_batch for the rest of a
 * record; a flush after each TOTALS and wherever mt_dat_pipe_tell is
 * true).  Everything each pass sees is logged as text (every event's
 * fields with its deferred flag, every position, the blocks each flush
 * gives and where, the final code and message) and the two logs must be
 * equal: for the whole file, for copies cut at many points (mid-frame
 * too), for copies with bytes overwritten (zstd's errors inside frames)
 * and for copies whose decompressed records were changed (errors of the
 * frame context and of the EVENTS2 columns, some within a run of events:
 * the events before the error must come out; an event failing both, the
 * context's error first, whichever thread checks what).  Then a pass ended
 * early, the producer blocked on a full ring: it must stop (the test would
 * hang otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "dat_pipe.h"
#include "test_reader_builder.h"

typedef struct logbuf {
    char *p;
    size_t n;
    FILE *f;
} logbuf;

static int log_blocks(void *ctx, const mt_dat_block *b, size_t n)
{
    logbuf *l = ctx;
    for (size_t i = 0; i < n; i++)
        fprintf(l->f, "B %u %llu %llu\n", b[i].trace, (unsigned long long)b[i].size,
                (unsigned long long)b[i].birth_ms);
    return 0;
}

static void log_hev(FILE *f, mt_dat_kind kind, uint64_t t, const mt_dat_ev *e)
{
    fprintf(f, "E %d %llu %u %u %llu %u %u %llu\n", kind, (unsigned long long)t, e->tid, e->trace,
            (unsigned long long)e->size, e->flags, e->deferred, (unsigned long long)e->birth_ms);
}

static void log_tell(mt_dat_pipe *p, FILE *f)
{
    mt_dat_pos pos;
    if (mt_dat_pipe_tell(p, &pos))
        fprintf(f, "T %llu %llu %llu %llu %d\n", (unsigned long long)pos.offset,
                (unsigned long long)pos.ndefs, (unsigned long long)pos.nmodules,
                (unsigned long long)pos.t_ns, pos.started);
}

static void log_flush(mt_dat_pipe *p, FILE *f, const char *why)
{
    mt_err err = {0};
    mt_errc rc = mt_dat_pipe_flush_blocks(p, &err);
    fprintf(f, "F %s %d\n", why, rc);
}

/* The rest of an EVENTS2 record; the pass's code. */
static mt_errc batches(mt_dat_pipe *p, FILE *f, mt_err *err)
{
    mt_dat_hev *b;
    size_t n;
    mt_errc rc;
    while ((rc = mt_dat_pipe_next_batch(p, &b, &n, err)) == MT_OK && n) {
        for (size_t i = 0; i < n; i++)
            log_hev(f, b[i].kind, b[i].t_ns, &b[i].ev);
        log_tell(p, f);
        mt_dat_pos pos;
        if (mt_dat_pipe_tell(p, &pos))
            log_flush(p, f, "tell");
    }
    for (size_t i = 0; rc && i < n; i++) /* the events before an error */
        log_hev(f, b[i].kind, b[i].t_ns, &b[i].ev);
    return rc;
}

/* One first pass over the file's bytes with `threads`: its log. */
static char *pass(const db_file *file, size_t len, unsigned threads)
{
    logbuf l = {0};
    l.f = open_memstream(&l.p, &l.n);
    assert_non_null(l.f);
    db_file cut = *file;
    cut.out.n = len;
    mt_err err = {0};
    mt_dat_reader *r = mt_dat_open_fd(db_memfd(&cut), "t.dat", &err);
    if (!r) {
        fprintf(l.f, "open %d %s\n", err.code, err.msg);
        fclose(l.f);
        return l.p;
    }
    mt_dat_pipe *p = mt_dat_pipe_start(r, log_blocks, &l, threads, &err);
    assert_non_null(p);
    mt_dat_event ev;
    mt_errc rc;
    log_tell(p, l.f);
    while ((rc = mt_dat_pipe_next(p, &ev, &err)) == MT_OK) {
        bool hooked = ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE;
        if (hooked)
            log_hev(l.f, ev.kind, ev.t_ns, &ev.u.ev);
        else
            fprintf(l.f, "K %d %llu\n", ev.kind, (unsigned long long)ev.t_ns);
        log_tell(p, l.f);
        mt_dat_pos pos;
        bool told = mt_dat_pipe_tell(p, &pos);
        if (hooked && !told) {
            if ((rc = batches(p, l.f, &err)) != MT_OK)
                break;
        } else {
            if (ev.kind == MT_DAT_TOTALS)
                log_flush(p, l.f, "totals");
            if (told)
                log_flush(p, l.f, "tell");
        }
    }
    if (rc == MT_E_EMPTY)
        log_flush(p, l.f, "end");
    fprintf(l.f, "R %s %d %s\n", rc == MT_E_EMPTY ? "end" : "error", rc,
            rc == MT_E_EMPTY ? "" : err.msg);
    mt_dat_pipe_end(p);
    mt_dat_close(r);
    fclose(l.f);
    return l.p;
}

static void same(const db_file *f, size_t len, const char *what)
{
    char *one = pass(f, len, 1), *two = pass(f, len, 2);
    if (strcmp(one, two) != 0) {
        fprintf(stderr, "%s (%zu bytes): the logs differ\n", what, len);
        fail();
    }
    free(one);
    free(two);
}

static void whole_and_cut(void **state)
{
    (void)state;
    db_file f;
    db_long(&f, 12, 1500);
    char *one = pass(&f, f.out.n, 1);
    assert_non_null(strstr(one, "F totals"));
    assert_non_null(strstr(one, "\nB ")); /* blocks given: deferral on */
    assert_non_null(strstr(one, "\nR end"));
    free(one);
    same(&f, f.out.n, "whole");
    for (size_t len = MT_DAT_HEADER_BYTES; len < f.out.n; len += f.out.n / 97 + 1)
        same(&f, len, "cut");
    db_file_free(&f);
}

static void corrupt(void **state)
{
    (void)state;
    db_file f;
    db_long(&f, 6, 800);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    unsigned errors = 0;
    for (unsigned k = 0; k < 60; k++) {
        db_file g = f;
        g.out.p = malloc(f.out.n);
        assert_non_null(g.out.p);
        memcpy(g.out.p, f.out.p, f.out.n);
        size_t at = MT_DAT_HEADER_BYTES + test_xorshift(&seed) % (f.out.n - MT_DAT_HEADER_BYTES);
        for (unsigned i = 0; i < 8 && at + i < g.out.n; i++)
            ((unsigned char *)g.out.p)[at + i] ^= (unsigned char)test_xorshift(&seed);
        char *one = pass(&g, g.out.n, 1);
        errors += strstr(one, "\nR error") != NULL;
        free(one);
        same(&g, g.out.n, "corrupt");
        free(g.out.p);
    }
    print_message("%u of 60 corrupt copies end in an error\n", errors);
    assert_true(errors >= 30);
    db_file_free(&f);
}

/* f with frame i's decompressed bytes changed at `at` (xor x), compressed
 * again: into g (g->out.p to free). */
static void change_inside(const db_file *f, size_t i, size_t at, unsigned char x, db_file *g)
{
    size_t from = i ? f->frame_end[i - 1] : MT_DAT_HEADER_BYTES, len = f->frame_end[i] - from;
    const unsigned char *src = (const unsigned char *)f->out.p + from;
    unsigned long long raw = ZSTD_getFrameContentSize(src, len);
    assert_true(raw != ZSTD_CONTENTSIZE_UNKNOWN && raw != ZSTD_CONTENTSIZE_ERROR);
    unsigned char *plain = malloc(raw);
    size_t cap = ZSTD_compressBound(raw);
    unsigned char *z = malloc(cap);
    assert_non_null(plain);
    assert_non_null(z);
    assert_int_equal(ZSTD_decompress(plain, raw, src, len), raw);
    plain[at % raw] ^= x;
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t zn = ZSTD_compress2(c, z, cap, plain, raw);
    assert_false(ZSTD_isError(zn));
    ZSTD_freeCCtx(c);
    *g = *f;
    g->out.n = from + zn + (f->out.n - f->frame_end[i]);
    g->out.p = malloc(g->out.n);
    assert_non_null(g->out.p);
    memcpy(g->out.p, f->out.p, from);
    memcpy((unsigned char *)g->out.p + from, z, zn);
    memcpy((unsigned char *)g->out.p + from + zn, (const unsigned char *)f->out.p + f->frame_end[i],
           f->out.n - f->frame_end[i]);
    free(plain);
    free(z);
}

/* Records changed inside their frames: the first error, its message and
 * the events before it, whichever thread finds it. */
static void corrupt_inside(void **state)
{
    (void)state;
    db_file f;
    db_long(&f, 4, 600);
    uint64_t seed = 0x2545f4914f6cdd1dull;
    unsigned errors = 0, context = 0;
    for (unsigned k = 0; k < 300; k++) {
        db_file g;
        size_t frame = 1 + test_xorshift(&seed) % (f.nframes - 1);
        unsigned char x = (unsigned char)(1u << (test_xorshift(&seed) % 8));
        change_inside(&f, frame, test_xorshift(&seed), x, &g);
        char *one = pass(&g, g.out.n, 1);
        errors += strstr(one, "\nR error") != NULL;
        context += strstr(one, "not live") || strstr(one, "not allocated in its frame") ||
                   strstr(one, "SAME_SIZE before") || strstr(one, "NEXT_TRACE");
        free(one);
        same(&g, g.out.n, "changed inside");
        free(g.out.p);
    }
    print_message("%u of 300 changed copies end in an error, %u of the frame context\n", errors,
                  context);
    assert_true(errors >= 100);
    assert_true(context >= 20);
    db_file_free(&f);
}

/* A recording of one frame: db_culled_head's, then an EVENTS2 record of
 * `good` allocations of trace 1 (8 bytes), then the events `bad` writes. */
static void one_record(db_file *f, unsigned good, void (*bad)(db_ev2 *e))
{
    db_culled_head(f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    for (unsigned i = 0; i < good; i++) {
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
        db_ev2_put(&e, DB_TRACES, 1);
        db_ev2_put(&e, DB_SIZES, 8);
    }
    bad(&e);
    db_ev2_record(f, &e, 5, 1000000000ull);
    db_totals(f, 1500000000ull, 1000, 2000);
    db_flush(f);
}

/* The record's last event frees a block no longer live (the context's
 * error), and a column holds one value too many (the columns' error,
 * checked after the whole event). */
static void bad_last(db_ev2 *e)
{
    db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(e, DB_TRACES, 1);
    db_ev2_put(e, DB_SIZES, 8);
    for (unsigned i = 0; i < 2; i++) {
        db_ev2_tag(e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME);
        db_ev2_put(e, DB_TRACES, 1);
        db_ev2_put(e, DB_REFS, 0);
    }
    db_ev2_put(e, DB_SIZES, 9);
}

/* A free of trace 2 with SAME_SIZE before any size of it (the context's
 * error), its age missing from its column (the columns', checked after). */
static void bad_size(db_ev2 *e)
{
    db_ev2_tag(e, MT_DAT_EV_FREE | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_SIZE);
    db_ev2_put(e, DB_TRACES, 2);
    db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(e, DB_TRACES, 1);
    db_ev2_put(e, DB_SIZES, 8);
}

/* An event whose checks fail both in the frame context and, after, in its
 * columns: the context's error first, as on one thread; alone in its
 * record (mt_dat_next) and after a run (mt_dat_next_batch). */
static void both_checks(void **state)
{
    (void)state;
    static const struct {
        unsigned good;
        void (*bad)(db_ev2 *e);
        const char *msg;
    } cases[] = {
        {0, bad_last, "free of a block that is not live"},
        {40, bad_last, "free of a block that is not live"},
        {0, bad_size, "SAME_SIZE before any size"},
        {40, bad_size, "SAME_SIZE before any size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        db_file f;
        one_record(&f, cases[i].good, cases[i].bad);
        char *one = pass(&f, f.out.n, 1);
        if (!strstr(one, cases[i].msg))
            fprintf(stderr, "case %zu: %s", i, strstr(one, "\nR ") ? strstr(one, "\nR ") : one);
        assert_non_null(strstr(one, cases[i].msg));
        free(one);
        same(&f, f.out.n, "both checks");
        db_file_free(&f);
    }
}

/* Ended after one event: the producer, stopped on a full ring, ends.  The
 * file holds over three rings' worth of slots (48 frames of 2,250
 * events: ~900), and the producer is given time to fill the ring and wait
 * in room(). */
static void early_end(void **state)
{
    (void)state;
    db_file f;
    db_long(&f, 48, 1500);
    mt_err err = {0};
    mt_dat_reader *r = mt_dat_open_fd(db_memfd(&f), "t.dat", &err);
    assert_non_null(r);
    logbuf l = {0};
    l.f = open_memstream(&l.p, &l.n);
    mt_dat_pipe *p = mt_dat_pipe_start(r, log_blocks, &l, 2, &err);
    assert_non_null(p);
    mt_dat_event ev;
    assert_int_equal(mt_dat_pipe_next(p, &ev, &err), MT_OK);
    assert_int_equal(ev.kind, MT_DAT_PROCESS);
    usleep(100000);
    mt_dat_pipe_end(p);
    mt_dat_close(r);
    fclose(l.f);
    free(l.p);
    db_file_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_and_cut),  cmocka_unit_test(corrupt),
        cmocka_unit_test(corrupt_inside), cmocka_unit_test(both_checks),
        cmocka_unit_test(early_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
