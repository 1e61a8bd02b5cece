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
 * too) and for copies with bytes overwritten (errors inside frames, found
 * by the producer).  Then a pass ended early, the producer blocked on a
 * full ring: it must stop (the test would hang otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* Ended after one event: the producer, stopped on a full ring, ends. */
static void early_end(void **state)
{
    (void)state;
    db_file f;
    db_long(&f, 12, 1500);
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
    mt_dat_pipe_end(p);
    mt_dat_close(r);
    fclose(l.f);
    free(l.p);
    db_file_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_and_cut),
        cmocka_unit_test(corrupt),
        cmocka_unit_test(early_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
