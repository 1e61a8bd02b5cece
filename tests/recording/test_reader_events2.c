/* test_reader_events2.c -- unit tests of the reader's EVENTS2 records
 * (dat_format.h, src/ipc/dat_reader_events2.c, dat_reader_blocks.c) on
 * hand-built files: every field decoded, frees naming their block (also
 * across records of one frame), SAME_SIZE, split varints up to 64 bits,
 * the frame context reset at each frame, every corruption rejected with
 * its message, thousands of blocks against a model, and restarting at
 * frame boundaries, the frame's blocks deferred (mt_dat_defer_blocks),
 * version 4's NEXT_TRACE. */
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

static mt_dat_reader *open_mem(const db_file *f, mt_err *err)
{
    int fd = memfd_create("dat", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f->out.p, f->out.n), (ssize_t)f->out.n);
    return mt_dat_open_fd(fd, "mem", err);
}

/* The allocations and frees of thread tid, up to n; the code that ended
 * the reading in *end. */
static size_t events_of(const db_file *f, uint32_t tid, mt_dat_event *out, size_t n, mt_errc *end,
                        mt_err *err)
{
    mt_dat_reader *r = open_mem(f, err);
    assert_non_null(r);
    mt_dat_event ev;
    size_t k = 0;
    while ((*end = mt_dat_next(r, &ev, err)) == MT_OK)
        if ((ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) && ev.u.ev.tid == tid && k < n)
            out[k++] = ev;
    mt_dat_close(r);
    return k;
}

static void expect_ev(const mt_dat_event *ev, mt_dat_kind kind, uint64_t t, uint32_t trace,
                      uint64_t size, uint64_t birth_ms, uint32_t flags)
{
    assert_int_equal(ev->kind, kind);
    assert_int_equal(ev->t_ns, t);
    assert_int_equal(ev->u.ev.trace, trace);
    assert_int_equal(ev->u.ev.size, size);
    assert_int_equal(ev->u.ev.birth_ms, birth_ms);
    assert_int_equal(ev->u.ev.flags, flags);
}

static void decoded(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 1, 0);
    db_ev2 e = {0};
    const uint64_t big = (1ull << 40) + 5, t0 = 5000 * MS;
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME); /* (1, 0) */
    db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_SIZES, 300);
    db_ev2_tag(&e, MT_DAT_EV_ALLOC); /* (2, 0) */
    db_ev2_put(&e, DB_TIMES, MS), db_ev2_put(&e, DB_TRACES, 2), db_ev2_put(&e, DB_SIZES, big);
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_SIZE); /* (1, 1): 300 again */
    db_ev2_put(&e, DB_TIMES, MS), db_ev2_put(&e, DB_TRACES, 1);
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | (MT_DAT_EVF_REALLOC << 4));
    db_ev2_put(&e, DB_TRACES, 2), db_ev2_put(&e, DB_REFS, 0); /* (2, 0) */
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_REFS, 1); /* (1, 0) */
    db_ev2_tag(&e, MT_DAT_EV_FREE | MT_DAT_EV_SAME_TRACE | MT_DAT_EV_SAME_SIZE |
                       (MT_DAT_EVF_TEMPORARY << 4));
    db_ev2_put(&e, DB_TIMES, 200 * MS), db_ev2_put(&e, DB_AGES, 7);
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 2), db_ev2_put(&e, DB_SIZES, UINT64_MAX);
    db_ev2_record(&f, &e, 9, t0);
    /* another record of the same frame names a block of the first */
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF);
    db_ev2_put(&e, DB_TIMES, 0), db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_REFS, 0);
    db_ev2_record(&f, &e, 9, t0 + 300 * MS);
    db_flush(&f);
    mt_dat_event ev[16];
    mt_err err;
    mt_errc end;
    assert_int_equal(events_of(&f, 9, ev, 16, &end, &err), 8);
    assert_int_equal(end, MT_E_EMPTY);
    expect_ev(&ev[0], MT_DAT_ALLOC, t0, 1, 300, 5000, 0);
    expect_ev(&ev[1], MT_DAT_ALLOC, t0 + MS, 2, big, 5001, 0);
    expect_ev(&ev[2], MT_DAT_ALLOC, t0 + 2 * MS, 1, 300, 5002, 0);
    expect_ev(&ev[3], MT_DAT_FREE, t0 + 2 * MS, 2, big, 5001, MT_DAT_EVF_REALLOC);
    expect_ev(&ev[4], MT_DAT_FREE, t0 + 2 * MS, 1, 300, 5000, 0);
    expect_ev(&ev[5], MT_DAT_FREE, t0 + 202 * MS, 1, 300, 5202 - 7, MT_DAT_EVF_TEMPORARY);
    expect_ev(&ev[6], MT_DAT_ALLOC, t0 + 202 * MS, 2, UINT64_MAX, 5202, 0);
    expect_ev(&ev[7], MT_DAT_FREE, t0 + 300 * MS, 1, 300, 5002, 0);
    assert_int_equal(ev[7].u.ev.tid, 9);
    db_file_free(&f);
}

/* One EVENTS2 record of thread 9 in a frame of its own after db_standard. */
static mt_errc read_record(const db_buf *payload, mt_err *err)
{
    db_file f;
    db_standard(&f, 1, 0);
    db_rec(&f, MT_DAT_REC_EVENTS2, payload, 0);
    db_flush(&f);
    mt_dat_event ev[4];
    mt_errc end;
    events_of(&f, 9, ev, 4, &end, err);
    db_file_free(&f);
    return end;
}

static void expect_corrupt(db_ev2 *e, const char *needle)
{
    db_buf b = {0};
    db_v(&b, 9), db_v(&b, 1000 * MS), db_v(&b, e->n);
    for (unsigned c = DB_TIMES; c < DB_COLS; c++)
        db_v(&b, e->col[c][0].n), db_v(&b, e->col[c][1].n);
    for (unsigned c = 0; c < DB_COLS; c++)
        for (unsigned k = 0; k < 2; k++)
            db_bytes(&b, e->col[c][k].p, e->col[c][k].n);
    db_ev2_free(e);
    mt_err err = {MT_OK, ""};
    assert_int_equal(read_record(&b, &err), MT_E_CORRUPT);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
    db_buf_free(&b);
}

/* An allocation of trace 1 (size 8), then one more event as given. */
static void alloc_then(db_ev2 *e, unsigned tag)
{
    db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(e, DB_TRACES, 1), db_ev2_put(e, DB_SIZES, 8);
    db_ev2_tag(e, tag | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
}

static void corrupt(void **state)
{
    (void)state;
    db_ev2 e = {0};
    alloc_then(&e, MT_DAT_EV_FREE_REF), db_ev2_put(&e, DB_REFS, 0);
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
    db_ev2_put(&e, DB_REFS, 0); /* the same block again */
    expect_corrupt(&e, "not live");
    alloc_then(&e, MT_DAT_EV_FREE_REF), db_ev2_put(&e, DB_REFS, 1);
    expect_corrupt(&e, "not allocated in its frame");
    alloc_then(&e, 3);
    expect_corrupt(&e, "bad event tag");
    alloc_then(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_SIZE), db_ev2_put(&e, DB_REFS, 0);
    expect_corrupt(&e, "bad event tag");
    alloc_then(&e, MT_DAT_EV_ALLOC | (MT_DAT_EVF_TEMPORARY << 4)), db_ev2_put(&e, DB_SIZES, 1);
    expect_corrupt(&e, "bad event tag");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_SIZE);
    db_ev2_put(&e, DB_TRACES, 1);
    expect_corrupt(&e, "SAME_SIZE before");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
    db_ev2_put(&e, DB_SIZES, 1);
    expect_corrupt(&e, "SAME_TRACE");
    /* The same on a free naming a block, first of its file: the look-ahead
     * that prefetches the named blocks has no trace (and no trace state) */
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
    db_ev2_put(&e, DB_REFS, 9);
    expect_corrupt(&e, "SAME_TRACE");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 77), db_ev2_put(&e, DB_SIZES, 1);
    expect_corrupt(&e, "undefined trace");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME); /* no trace in its column */
    db_ev2_put(&e, DB_SIZES, 1);
    expect_corrupt(&e, "column cut short");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 1);
    db_bytes(&e.col[DB_SIZES][0], "\x85", 1); /* a lead byte going on, no tail */
    expect_corrupt(&e, "column cut short");
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
    db_ev2_put(&e, DB_TRACES, 1);
    db_bytes(&e.col[DB_SIZES][0], "\x85", 1); /* 11 bytes in all */
    db_bytes(&e.col[DB_SIZES][1], "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
    expect_corrupt(&e, "column cut short");
    alloc_then(&e, MT_DAT_EV_FREE), db_ev2_put(&e, DB_SIZES, 8), db_ev2_put(&e, DB_AGES, 1001);
    expect_corrupt(&e, "born before tracking began");
    alloc_then(&e, MT_DAT_EV_FREE_REF), db_ev2_put(&e, DB_REFS, 0);
    db_ev2_put(&e, DB_AGES, 1); /* a field no event uses */
    expect_corrupt(&e, "hold more than their events");
    db_buf b = {0}; /* column lengths beyond the record */
    db_v(&b, 9), db_v(&b, 0), db_v(&b, 1);
    for (unsigned c = DB_TIMES; c < DB_COLS; c++)
        db_v(&b, c == DB_TRACES ? 100 : 0), db_v(&b, 0);
    db_bytes(&b, "\0\1", 2);
    mt_err err = {MT_OK, ""};
    assert_int_equal(read_record(&b, &err), MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "longer than the record"));
    db_buf_free(&b);
}

/* The context is the frame's: a new frame knows no earlier block, count
 * or size. */
/* Before version 6, kind 3 is reserved. */
static void prev_kind_reserved(void **state)
{
    (void)state;
    db_ev2 e = {0};
    alloc_then(&e, MT_DAT_EV_FREE_PREV), db_ev2_put(&e, DB_REFS, 0);
    expect_corrupt(&e, "bad event tag");
}

static void frame_local(void **state)
{
    (void)state;
    for (int what = 0; what < 2; what++) {
        db_file f;
        db_standard(&f, 1, 0);
        db_ev2 e = {0};
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
        db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_SIZES, 8);
        db_ev2_record(&f, &e, 9, 2000 * MS);
        db_flush(&f);
        if (what == 0) {
            db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME);
            db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_REFS, 0);
        } else {
            db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_SIZE);
            db_ev2_put(&e, DB_TRACES, 1);
        }
        db_ev2_record(&f, &e, 9, 2001 * MS);
        db_flush(&f);
        mt_dat_event ev[4];
        mt_err err = {MT_OK, ""};
        mt_errc end;
        assert_int_equal(events_of(&f, 9, ev, 4, &end, &err), 1);
        assert_int_equal(end, MT_E_CORRUPT);
        assert_non_null(strstr(err.msg, what ? "SAME_SIZE before" : "not allocated in its frame"));
        db_file_free(&f);
    }
}

/* --- FREE_PREV (version 6) ----------------------------------------------- */

#define F 0x100u    /* in a list of tags: the frame ends */
#define EOFR 0x200u /* ... and the file */

/* A version-6 file: its head frame, then the frames of thread 9's events
 * in tags (each of trace 1 at the frame's time, its field in vals, in
 * order: an ALLOC's size unless SAME_SIZE, a ref); what the reader gives
 * in out, the code that ended the reading returned. */
static mt_errc read_prev(const unsigned *tags, const uint64_t *vals, mt_dat_event *out, size_t *n,
                         mt_err *err)
{
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    for (uint64_t fr = 0; *tags != EOFR; fr++, tags++) {
        for (; *tags != F; tags++) {
            unsigned kind = *tags & MT_DAT_EV_KIND_MASK;
            db_ev2_tag(&e, *tags | MT_DAT_EV_SAME_TIME);
            db_ev2_put(&e, DB_TRACES, 1);
            if (kind == MT_DAT_EV_ALLOC && !(*tags & MT_DAT_EV_SAME_SIZE))
                db_ev2_put(&e, DB_SIZES, *vals++);
            else if (kind != MT_DAT_EV_ALLOC)
                db_ev2_put(&e, DB_REFS, *vals++);
        }
        db_ev2_record(&f, &e, 9, (2000 + fr) * MS);
        db_flush(&f);
    }
    mt_dat_reader *r = open_mem(&f, err);
    assert_non_null(r);
    mt_errc end;
    mt_dat_event ev;
    *n = 0;
    while ((end = mt_dat_next(r, &ev, err)) == MT_OK)
        if ((ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) && *n < 8)
            out[(*n)++] = ev;
    mt_dat_close(r);
    db_file_free(&f);
    return end;
}

#define A MT_DAT_EV_ALLOC
#define R MT_DAT_EV_FREE_REF
#define P MT_DAT_EV_FREE_PREV

/* A FREE_PREV names a block the frame before left live: its size and
 * birth, the newest first; it leaves the trace's last size (SAME_SIZE
 * after it repeats the size before). */
static void prev_frame_refs(void **state)
{
    (void)state;
    const unsigned tags[] = {A, A, A, R, F, A, P, P, A | MT_DAT_EV_SAME_SIZE, F, EOFR};
    const uint64_t vals[] = {8, 16, 24, 0, 40, 1, 2};
    mt_dat_event ev[8];
    size_t n;
    mt_err err;
    mt_errc end = read_prev(tags, vals, ev, &n, &err);
    if (end != MT_E_EMPTY)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 8);
    expect_ev(&ev[3], MT_DAT_FREE, 2000 * MS, 1, 24, 2000, 0); /* in its frame */
    expect_ev(&ev[5], MT_DAT_FREE, 2001 * MS, 1, 16, 2000, 0); /* ref 1 (0 is the freed one) */
    expect_ev(&ev[6], MT_DAT_FREE, 2001 * MS, 1, 8, 2000, 0);  /* ref 2 */
    expect_ev(&ev[7], MT_DAT_ALLOC, 2001 * MS, 1, 40, 2001, 0);
}

/* What the reader rejects of FREE_PREV, each with its message. */
static void prev_frame_corrupt(void **state)
{
    (void)state;
    static const struct {
        unsigned tags[12];
        uint64_t vals[6];
        const char *msg;
    } cases[] = {
        /* the first frame after the head: its frame before has no block */
        {{P, F, EOFR}, {0}, "not allocated in the frame before"},
        {{A, F, P, F, EOFR}, {8, 1}, "not allocated in the frame before"}, /* ref past */
        {{A, R, F, P, F, EOFR}, {8, 0, 0}, "not live"},                    /* freed in its frame */
        {{A, F, P, P, F, EOFR}, {8, 0, 0}, "not live"},                    /* named twice */
        {{A, F, A, F, P, F, EOFR}, {8, 9, 1}, "not allocated in the frame before"},
        {{A, F, A, F, F, P, F, EOFR}, {8, 9, 0}, "not allocated in the frame before"},
        {{A, F, P | MT_DAT_EV_SAME_SIZE, F, EOFR}, {8, 0}, "bad event tag"},
        {{A, F, P, A | MT_DAT_EV_SAME_SIZE, F, EOFR}, {8, 0}, "SAME_SIZE before"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mt_dat_event ev[8];
        size_t n;
        mt_err err = {MT_OK, ""};
        assert_int_equal(read_prev(cases[i].tags, cases[i].vals, ev, &n, &err), MT_E_CORRUPT);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
}

#undef A
#undef R
#undef P
#undef F
#undef EOFR

/* --- thousands of blocks against a model -------------------------------- */

typedef struct model_block {
    uint64_t size, birth_ms, serial;
    uint32_t trace;
} model_block;

typedef struct model {
    model_block *live;
    size_t nlive;
    uint64_t count[64];
    /* version 6: the blocks the frame before left live, and its counts;
     * a third of the frees name one of them (FREE_PREV) */
    bool prev;
    model_block *plive;
    size_t nplive;
    uint64_t pcount[64];
    uint64_t rng;
    uint64_t t;
    mt_dat_event *want; /* every event, in file order */
    size_t nwant;
} model;

static uint64_t rnd(model *m)
{
    return test_xorshift(&m->rng);
}

static void want(model *m, mt_dat_kind kind, uint32_t trace, uint64_t size, uint64_t birth)
{
    mt_dat_event *ev = &m->want[m->nwant++];
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->t_ns = m->t;
    ev->u.ev = (mt_dat_ev){.tid = 9, .trace = trace, .size = size, .birth_ms = birth};
}

/* One event of a frame: mostly allocations while few blocks live, then
 * frees (naming a random live block) and allocations alike. */
static void model_event(model *m, db_ev2 *e)
{
    uint64_t dt = rnd(m) % 3 ? 0 : rnd(m) % (3 * MS);
    m->t += dt;
    unsigned kind =
        (m->nlive || m->nplive) && rnd(m) % 100 < 50 ? MT_DAT_EV_FREE_REF : MT_DAT_EV_ALLOC;
    if (kind == MT_DAT_EV_FREE_REF && m->nplive && (!m->nlive || rnd(m) % 3 == 0))
        kind = MT_DAT_EV_FREE_PREV;
    db_ev2_tag(e, (dt ? 0 : MT_DAT_EV_SAME_TIME) | kind);
    if (dt)
        db_ev2_put(e, DB_TIMES, dt);
    if (kind == MT_DAT_EV_ALLOC) {
        uint32_t trace = 1 + (uint32_t)(rnd(m) % 2);
        uint64_t size = rnd(m) % 5 ? rnd(m) % 300 : rnd(m);
        db_ev2_put(e, DB_TRACES, trace), db_ev2_put(e, DB_SIZES, size);
        m->live[m->nlive++] = (model_block){size, m->t / MS, m->count[trace]++, trace};
        want(m, MT_DAT_ALLOC, trace, size, m->t / MS);
        return;
    }
    bool before = kind == MT_DAT_EV_FREE_PREV;
    model_block *live = before ? m->plive : m->live;
    size_t *n = before ? &m->nplive : &m->nlive;
    size_t i = rnd(m) % *n;
    model_block b = live[i];
    live[i] = live[--*n];
    uint64_t count = before ? m->pcount[b.trace] : m->count[b.trace];
    db_ev2_put(e, DB_TRACES, b.trace), db_ev2_put(e, DB_REFS, count - 1 - b.serial);
    want(m, MT_DAT_FREE, b.trace, b.size, b.birth_ms);
}

/* One frame of n allocations of trace 1, never freed (1-byte events). */
static void frame_of_allocs(db_file *f, uint64_t n)
{
    db_ev2 e = {0};
    for (uint64_t done = 0; done < n;) {
        for (unsigned k = 0; k < MT_DAT_EVENTS_MAX && done < n; k++, done++) {
            unsigned tag = MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME;
            if (done == 0) {
                db_ev2_tag(&e, tag);
                db_ev2_put(&e, DB_TRACES, 1);
                db_ev2_put(&e, DB_SIZES, 8);
            } else if (k == 0) {
                db_ev2_tag(&e, tag | MT_DAT_EV_SAME_SIZE);
                db_ev2_put(&e, DB_TRACES, 1);
            } else {
                db_ev2_tag(&e, tag | MT_DAT_EV_SAME_TRACE | MT_DAT_EV_SAME_SIZE);
            }
        }
        db_ev2_record(f, &e, 9, 5000 * MS);
    }
    db_ev2_free(&e);
    db_flush(f);
}

/* A frame may hold MT_DAT_FRAME_ALLOCS_MAX allocations, not one more: a
 * few KB of file must not make the reader keep millions of blocks. */
static void frame_alloc_limit(void **state)
{
    (void)state;
    for (uint64_t extra = 0; extra <= 1; extra++) {
        db_file f;
        db_standard(&f, 1, 0);
        frame_of_allocs(&f, MT_DAT_FRAME_ALLOCS_MAX + extra);
        mt_dat_reader *r = open_mem(&f, &(mt_err){0});
        mt_err err = {MT_OK, ""};
        mt_dat_event ev;
        mt_errc end;
        uint64_t n = 0;
        while ((end = mt_dat_next(r, &ev, &err)) == MT_OK)
            n += ev.kind == MT_DAT_ALLOC && ev.u.ev.tid == 9;
        if (extra) {
            assert_int_equal(end, MT_E_CORRUPT);
            assert_non_null(strstr(err.msg, "allocations in one frame"));
        } else {
            assert_int_equal(end, MT_E_EMPTY);
            assert_int_equal(n, MT_DAT_FRAME_ALLOCS_MAX);
        }
        mt_dat_close(r);
        db_file_free(&f);
    }
}

enum { FRAMES = 3, PER_FRAME = 30000, PER_RECORD = 7000 };

/* FRAMES frames of random allocations and frees into f, m's events; with
 * m->prev, a version-6 file whose frames also free blocks of the frame
 * before. */
static void random_frames(model *m, db_file *f)
{
    m->live = calloc(PER_FRAME, sizeof *m->live);
    m->plive = calloc(PER_FRAME, sizeof *m->plive);
    m->want = calloc(FRAMES * PER_FRAME, sizeof *m->want);
    if (m->prev)
        db_culled_head(f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0);
    else
        db_standard(f, 1, 0);
    for (int fr = 0; fr < FRAMES; fr++) { /* each frame starts with no live block */
        if (m->prev) {                    /* the frame before's, for FREE_PREV */
            memcpy(m->plive, m->live, m->nlive * sizeof *m->live);
            m->nplive = m->nlive;
            memcpy(m->pcount, m->count, sizeof m->count);
        }
        m->nlive = 0;
        memset(m->count, 0, sizeof m->count);
        db_ev2 e = {0};
        uint64_t base = m->t;
        for (int i = 0; i < PER_FRAME; i++) {
            model_event(m, &e);
            if (e.n == PER_RECORD || i == PER_FRAME - 1) {
                db_ev2_record(f, &e, 9, base);
                base = m->t;
            }
        }
        db_ev2_free(&e);
        db_flush(f);
    }
}

/* Live blocks and bytes per (trace < 4, birth ms). */
typedef struct groups {
    int64_t (*g)[2];
    size_t n;
} groups;

static int64_t *group(groups *gs, uint32_t trace, uint64_t birth_ms)
{
    size_t i = trace * (gs->n / 4) + birth_ms;
    assert_true(trace < 4 && birth_ms < gs->n / 4);
    assert_true(i < gs->n);
    return gs->g[i];
}

static int add_blocks(void *ctx, const mt_dat_block *b, size_t n)
{
    assert_true(n > 0 && n <= MT_DAT_BLOCKS_PER_CALL);
    for (size_t i = 0; i < n; i++) {
        int64_t *g = group(ctx, b[i].trace, b[i].birth_ms);
        g[0]++, g[1] += (int64_t)b[i].size;
    }
    return 0;
}

static void add_ev(groups *gs, const mt_dat_event *ev)
{
    int64_t *g = group(gs, ev->u.ev.trace, ev->u.ev.birth_ms),
            sign = ev->kind == MT_DAT_ALLOC ? 1 : -1;
    g[0] += sign, g[1] += sign * (int64_t)ev->u.ev.size;
}

/* mt_dat_defer_blocks: the groups from the events not deferred and the
 * blocks given to fn are those of every event, wherever the deferral was
 * flushed (within each frame, as before a TOTALS, and at each frame's
 * end); deferral goes on after a flush. */
static void deferred_blocks_in(bool prev)
{
    model m = {.rng = 0x9e3779b97f4a7c15ull, .t = 1000 * MS, .prev = prev};
    db_file f;
    random_frames(&m, &f);
    size_t n = 4 * (m.t / MS + 1);
    groups all = {calloc(n, sizeof *all.g), n}, part = {calloc(n, sizeof *part.g), n};
    mt_err err;
    mt_dat_reader *r = open_mem(&f, &err);
    mt_dat_defer_blocks(r, add_blocks, &part);
    mt_dat_event ev;
    mt_errc end;
    uint64_t k = 0, deferred = 0;
    while ((end = mt_dat_next(r, &ev, &err)) == MT_OK) {
        if (ev.kind != MT_DAT_ALLOC && ev.kind != MT_DAT_FREE)
            continue;
        add_ev(&all, &ev);
        if (!ev.u.ev.deferred)
            add_ev(&part, &ev);
        if (ev.u.ev.tid != 9)
            continue;
        deferred += ev.u.ev.deferred;
        if (++k % PER_FRAME == 2 * PER_FRAME / 3) { /* a TOTALS */
            assert_int_equal(mt_dat_flush_blocks(r, &err), MT_OK);
            assert_memory_equal(all.g, part.g, n * sizeof *all.g);
        }
    }
    assert_int_equal(end, MT_E_EMPTY);
    assert_memory_equal(all.g, part.g, n * sizeof *all.g);
    assert_int_equal(k, m.nwant);
    assert_true(deferred > 2 * k / 3); /* deferral goes on after a flush */
    mt_dat_close(r);
    free(all.g), free(part.g), free(m.live), free(m.plive), free(m.want);
    db_file_free(&f);
}

/* Also with FREE_PREV, whose blocks were given at their frame's end. */
static void deferred_blocks(void **state)
{
    (void)state;
    deferred_blocks_in(false);
    deferred_blocks_in(true);
}

static void many_blocks_in(bool prev)
{
    model m = {.rng = 0x9e3779b97f4a7c15ull, .t = 1000 * MS, .prev = prev};
    db_file f;
    random_frames(&m, &f);
    mt_dat_event *got = calloc(m.nwant, sizeof *got);
    mt_err err;
    mt_errc end;
    assert_int_equal(events_of(&f, 9, got, m.nwant, &end, &err), m.nwant);
    assert_int_equal(end, MT_E_EMPTY);
    for (size_t i = 0; i < m.nwant; i++)
        expect_ev(&got[i], m.want[i].kind, m.want[i].t_ns, m.want[i].u.ev.trace,
                  m.want[i].u.ev.size, m.want[i].u.ev.birth_ms, 0);
    /* restarting at each frame boundary gives the same events again */
    mt_dat_reader *r = open_mem(&f, &err);
    mt_dat_pos pos[FRAMES + 8];
    size_t at[FRAMES + 8], npos = 0, k = 0;
    mt_dat_event ev;
    while (mt_dat_next(r, &ev, &err) == MT_OK) {
        k += (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE) && ev.u.ev.tid == 9;
        if (npos < FRAMES + 8 && mt_dat_tell(r, &pos[npos]))
            at[npos++] = k;
    }
    assert_true(npos >= FRAMES);
    for (size_t p = npos; p-- > 0;) {
        assert_int_equal(mt_dat_seek(r, &pos[p], &err), MT_OK);
        size_t j = at[p];
        while ((end = mt_dat_next(r, &ev, &err)) == MT_OK) {
            if ((ev.kind != MT_DAT_ALLOC && ev.kind != MT_DAT_FREE) || ev.u.ev.tid != 9)
                continue;
            assert_true(j < m.nwant);
            assert_int_equal(ev.u.ev.size, m.want[j].u.ev.size);
            assert_int_equal(ev.u.ev.birth_ms, m.want[j].u.ev.birth_ms);
            j++;
        }
        assert_int_equal(end, MT_E_EMPTY);
        assert_int_equal(j, m.nwant);
    }
    mt_dat_close(r);
    free(got);
    free(m.live);
    free(m.plive);
    free(m.want);
    db_file_free(&f);
}

static size_t read_runs(const db_file *f, size_t per, mt_dat_hev *out, mt_errc *end, mt_err *err);

/* Also with FREE_PREV: a restart decodes the frame before its position
 * first, for the blocks the frees name there; and the runs of
 * dat_reader_batch2.c give the same FREE_PREVs as the one-event decoder. */
static void many_blocks(void **state)
{
    (void)state;
    many_blocks_in(false);
    many_blocks_in(true);
    model m = {.rng = 0x9e3779b97f4a7c15ull, .t = 1000 * MS, .prev = true};
    db_file f;
    random_frames(&m, &f); /* thread 9's events only */
    mt_dat_hev *got = calloc(m.nwant, sizeof *got);
    mt_err err;
    mt_errc end;
    assert_int_equal(read_runs(&f, 37, got, &end, &err), m.nwant);
    assert_int_equal(end, MT_E_EMPTY);
    for (size_t i = 0; i < m.nwant; i++) {
        assert_int_equal(got[i].ev.size, m.want[i].u.ev.size);
        assert_int_equal(got[i].ev.birth_ms, m.want[i].u.ev.birth_ms);
    }
    free(got), free(m.live), free(m.plive), free(m.want);
    db_file_free(&f);
}

/* --- NEXT_TRACE (version 4) --------------------------------------------- */

/* An ALLOC of `trace` (size 8, or SAME_SIZE), at the record's time. */
static void alloc_of(db_ev2 *e, uint32_t trace, bool same_size)
{
    db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | (same_size ? MT_DAT_EV_SAME_SIZE : 0));
    db_ev2_put(e, DB_TRACES, trace);
    if (!same_size)
        db_ev2_put(e, DB_SIZES, 8);
}

static void alloc_next(db_ev2 *e)
{
    db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_NEXT_TRACE);
    db_ev2_put(e, DB_SIZES, 9);
}

/* The traces of thread 9's events in f; the reading's end in *end. */
static size_t traces_of(const db_file *f, uint32_t *trace, size_t n, mt_errc *end, mt_err *err)
{
    mt_dat_event ev[16];
    size_t k = events_of(f, 9, ev, n < 16 ? n : 16, end, err);
    for (size_t i = 0; i < k; i++) {
        trace[i] = ev[i].u.ev.trace;
        if (ev[i].kind == MT_DAT_ALLOC) /* NEXT_TRACE is no free flag */
            assert_int_equal(ev[i].u.ev.flags, 0);
    }
    return k;
}

/* An ALLOC right after an ALLOC may leave its trace out: next(P), the trace
 * that followed P's allocation last time in the frame, across records of
 * the frame, never across frames. */
static void next_trace(void **state)
{
    (void)state;
    db_file f;
    db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    alloc_of(&e, 1, false), alloc_of(&e, 2, false); /* next(1) = 2 */
    db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
    db_ev2_put(&e, DB_REFS, 0);
    alloc_of(&e, 1, true), alloc_next(&e);          /* 2 */
    alloc_of(&e, 2, false), alloc_of(&e, 1, false); /* next(2) = 1 */
    alloc_next(&e), alloc_next(&e), alloc_next(&e); /* 2, 1, 2 */
    db_ev2_record(&f, &e, 9, 2000 * MS);
    alloc_of(&e, 1, true), alloc_next(&e); /* another record of the frame: 2 */
    db_ev2_record(&f, &e, 9, 2000 * MS);
    db_flush(&f);
    uint32_t got[16], want[] = {1, 2, 2, 1, 2, 2, 1, 2, 1, 2, 1, 2};
    mt_err err = {MT_OK, ""};
    mt_errc end;
    assert_int_equal(traces_of(&f, got, 16, &end, &err), 12);
    assert_int_equal(end, MT_E_EMPTY);
    assert_memory_equal(got, want, sizeof want);
    alloc_of(&e, 1, false), alloc_next(&e); /* a new frame: next(1) is not known */
    db_ev2_record(&f, &e, 9, 3000 * MS);
    db_flush(&f);
    assert_int_equal(traces_of(&f, got, 16, &end, &err), 13);
    assert_int_equal(end, MT_E_CORRUPT);
    assert_non_null(strstr(err.msg, "no trace after"));
    db_file_free(&f);
}

/* NEXT_TRACE where it cannot be: in a version-2 file, with SAME_TRACE,
 * after a free, on a record's first event. */
static void next_trace_corrupt(void **state)
{
    (void)state;
    static const char *const msg[] = {"bad event tag", "bad event tag", "not after an allocation",
                                      "not after an allocation"};
    for (unsigned what = 0; what < 4; what++) {
        db_file f;
        if (what == 0)
            db_standard(&f, 1, 0);
        else
            db_culled_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0);
        db_ev2 e = {0};
        if (what != 3)
            alloc_of(&e, 1, false), alloc_of(&e, 2, false), alloc_of(&e, 1, false);
        if (what == 2) {
            db_ev2_tag(&e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
            db_ev2_put(&e, DB_REFS, 0);
        }
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | MT_DAT_EV_NEXT_TRACE |
                           (what == 1 ? MT_DAT_EV_SAME_TRACE : 0));
        db_ev2_put(&e, DB_SIZES, 9);
        db_ev2_record(&f, &e, 9, 2000 * MS);
        db_flush(&f);
        uint32_t got[16];
        mt_err err = {MT_OK, ""};
        mt_errc end;
        traces_of(&f, got, 16, &end, &err);
        assert_int_equal(end, MT_E_CORRUPT);
        if (!strstr(err.msg, msg[what]))
            fail_msg("case %u: message '%s' lacks '%s'", what, err.msg, msg[what]);
        db_file_free(&f);
    }
}

/* Tick order (version 5): the traces column holds each trace as its step
 * from the one the column gave before in the record (zigzag), from 0 at
 * each record; a step outside the defined traces is corrupt, as are a
 * PROCESS order cut short or out of range. */
static void tick_steps(void **state)
{
    (void)state;
    db_file f;
    db_order_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0, MT_DAT_ORDER_TICK);
    db_ev2 e = {0};
    static const uint64_t steps[] = {4, 0, 1, 0, 2}; /* +2, 0, -1, 0, +1: 2 2 1 1 2 */
    for (unsigned i = 0; i < 5; i++) {
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
        db_ev2_put(&e, DB_TRACES, steps[i]);
        db_ev2_put(&e, DB_SIZES, 8);
    }
    db_ev2_record(&f, &e, 9, 2000 * MS);
    db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME); /* a new record: from 0 */
    db_ev2_put(&e, DB_TRACES, 2);
    db_ev2_put(&e, DB_SIZES, 8);
    db_ev2_record(&f, &e, 9, 2000 * MS);
    db_flush(&f);
    uint32_t got[16], want[] = {2, 2, 1, 1, 2, 1};
    mt_err err = {MT_OK, ""};
    mt_errc end;
    assert_int_equal(traces_of(&f, got, 16, &end, &err), 6);
    assert_int_equal(end, MT_E_EMPTY);
    assert_memory_equal(got, want, sizeof want);
    db_file_free(&f);
    /* below trace 0, past the last trace (3 defined), huge */
    static const uint64_t bad_steps[] = {1, 6, UINT64_MAX, UINT64_MAX - 1};
    for (unsigned k = 0; k < 4; k++) {
        db_order_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0, MT_DAT_ORDER_TICK);
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME);
        db_ev2_put(&e, DB_TRACES, bad_steps[k]);
        db_ev2_put(&e, DB_SIZES, 8);
        db_ev2_record(&f, &e, 9, 2000 * MS);
        db_flush(&f);
        assert_int_equal(traces_of(&f, got, 16, &end, &err), 0);
        assert_int_equal(end, MT_E_CORRUPT);
        assert_non_null(strstr(err.msg, "undefined trace"));
        db_file_free(&f);
    }
    static const char *const msg[] = {"order cut short", "order out of range"};
    for (unsigned k = 0; k < 2; k++) {
        db_order_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0, k ? 2 : -1);
        db_flush(&f);
        traces_of(&f, got, 16, &end, &err);
        assert_int_equal(end, MT_E_CORRUPT);
        if (!strstr(err.msg, msg[k]))
            fail_msg("message '%s' lacks '%s'", err.msg, msg[k]);
        db_file_free(&f);
    }
}

/* --- runs: mt_dat_next_batch against mt_dat_next ------------------------- */

#define RUN_N 600u

typedef struct run_model {
    uint64_t count1, oldest1; /* trace 1: allocations, its oldest block live */
    bool ticks;               /* a file in tick order: traces as steps */
    uint32_t col;             /* the trace the record's column gave last */
} run_model;

/* A trace into the traces column: the id, or in tick order its step from
 * the one before in the record (dat_format.h). */
static void put_trace(db_ev2 *e, run_model *m, uint32_t trace)
{
    db_ev2_put(e, DB_TRACES, m->ticks ? mt_dat_zigzag((int64_t)trace - m->col) : trace);
    m->col = trace;
}

/* Event i of a long record of traces 1 and 2 (every kind, SAME_*,
 * NEXT_TRACE, varints of 1 to 6 bytes, frees of old blocks), or at
 * i == bad the spoilt event `how` (1..6) in its place. */
static void run_event(db_ev2 *e, run_model *m, unsigned i, unsigned bad, unsigned how)
{
    uint64_t size = i % 7 == 0 ? (1ull << 41) + i : i % 5 == 0 ? 20000 + i : 8 + i % 100;
    unsigned spoil = i == bad ? how : 0;
    static const unsigned tags[] = {3,
                                    MT_DAT_EV_FREE_REF,
                                    MT_DAT_EV_FREE_REF,
                                    MT_DAT_EV_ALLOC,
                                    MT_DAT_EV_FREE,
                                    MT_DAT_EV_ALLOC | MT_DAT_EV_NEXT_TRACE};
    if (spoil) {
        db_ev2_tag(e, tags[spoil - 1]);
        db_ev2_put(e, DB_TIMES, 3);
        if (spoil != 1 && spoil != 6)
            put_trace(e, m, spoil == 4 ? 77 : 1);
        if (spoil == 2 || spoil == 3) /* a block never allocated, one freed */
            db_ev2_put(e, DB_REFS, spoil == 2 ? m->count1 : m->count1 - m->oldest1);
        if (spoil >= 4)
            db_ev2_put(e, DB_SIZES, 8);
        if (spoil == 5)
            db_ev2_put(e, DB_AGES, 1ull << 50); /* born before tracking */
        return;
    }
    switch (i % 6) {
    case 0: /* ALLOC of 1 */
    case 5: /* again, SAME_SIZE */
        db_ev2_tag(e, MT_DAT_EV_ALLOC | (i % 6 ? MT_DAT_EV_SAME_SIZE : 0));
        db_ev2_put(e, DB_TIMES, (uint64_t)i * i * 1000), put_trace(e, m, 1);
        if (i % 6 == 0)
            db_ev2_put(e, DB_SIZES, size);
        m->count1++;
        return;
    case 1: /* ALLOC of 2: next(1) from the second time on */
        db_ev2_tag(e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TIME | (i > 6 ? MT_DAT_EV_NEXT_TRACE : 0));
        if (i < 6)
            put_trace(e, m, 2);
        db_ev2_put(e, DB_SIZES, size + 1);
        return;
    case 2: /* FREE_REF of 2's newest */
        db_ev2_tag(e, MT_DAT_EV_FREE_REF | MT_DAT_EV_SAME_TIME | MT_DAT_EV_SAME_TRACE);
        db_ev2_put(e, DB_REFS, 0);
        return;
    case 3: /* FREE_REF of 1's oldest live block: from the block table */
        db_ev2_tag(e, MT_DAT_EV_FREE_REF | (MT_DAT_EVF_TEMPORARY << 4));
        db_ev2_put(e, DB_TIMES, 1), put_trace(e, m, 1);
        db_ev2_put(e, DB_REFS, m->count1 - 1 - m->oldest1++);
        return;
    default: /* a FREE written in full */
        db_ev2_tag(e, MT_DAT_EV_FREE | MT_DAT_EV_SAME_TIME);
        put_trace(e, m, 2), db_ev2_put(e, DB_SIZES, size * 3), db_ev2_put(e, DB_AGES, 2);
        return;
    }
}

/* Thread 9's events and the reading's end, by mt_dat_next alone (per 0)
 * or by mt_dat_next_batch, `per` at a time, after each record's first. */
static size_t read_runs(const db_file *f, size_t per, mt_dat_hev *out, mt_errc *end, mt_err *err)
{
    mt_dat_reader *r = open_mem(f, err);
    assert_non_null(r);
    mt_dat_event ev;
    size_t k = 0, n = 0;
    while ((*end = mt_dat_next(r, &ev, err)) == MT_OK) {
        if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE)
            out[k++] = (mt_dat_hev){ev.kind, ev.t_ns, ev.u.ev};
        while (per && (*end = mt_dat_next_batch(r, &out[k], per, &n, err)) == MT_OK && n)
            k += n;
        if (per && *end != MT_OK) {
            k += n;
            break;
        }
    }
    mt_dat_close(r);
    return k;
}

/* Two reads' events alike, field by field. */
static void same_hevs(const mt_dat_hev *a, const mt_dat_hev *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].kind, b[i].kind);
        assert_int_equal(a[i].t_ns, b[i].t_ns);
        assert_int_equal(a[i].ev.trace, b[i].ev.trace);
        assert_int_equal(a[i].ev.size, b[i].ev.size);
        assert_int_equal(a[i].ev.birth_ms, b[i].ev.birth_ms);
        assert_int_equal(a[i].ev.flags, b[i].ev.flags);
        assert_int_equal(a[i].ev.tid, b[i].ev.tid);
    }
}

/* The runs of dat_reader_batch2.c give what the one-event decoder gives:
 * the same events, the same first error at any event of a run (its
 * first, last, across runs, the record's last), after the same events;
 * in the threads' order and in tick order. */
static void runs_like_single(void **state)
{
    (void)state;
    static const unsigned at[] = {0, 1, 2, 3, 4, 5, 17, 255, 256, 257, 258, 300, 511, 598, 599};
    static mt_dat_hev a[2 * RUN_N], b[2 * RUN_N];
    for (unsigned how = 0; how <= 13; how++) {
        for (unsigned p = 0; p < sizeof at / sizeof at[0] && (how % 7 || !p); p++) {
            db_file f;
            bool ticks = how >= 7;
            db_order_head(&f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0,
                          ticks ? MT_DAT_ORDER_TICK : MT_DAT_ORDER_THREAD);
            db_ev2 e = {0};
            run_model m = {.ticks = ticks};
            for (unsigned i = 0; i < RUN_N; i++)
                run_event(&e, &m, i, at[p], how % 7);
            db_ev2_record(&f, &e, 9, 2000 * MS);
            m.col = 0;
            for (unsigned i = 0; i < 50; i++) /* another record of the frame */
                run_event(&e, &m, i + 6, RUN_N, 0);
            db_ev2_record(&f, &e, 9, 2000 * MS);
            db_flush(&f);
            mt_err ea = {MT_OK, ""};
            mt_errc enda;
            size_t na = read_runs(&f, 0, a, &enda, &ea);
            if (!(how % 7))
                assert_true(na == RUN_N + 50 && enda == MT_E_EMPTY);
            else /* a spoilt event may still be one that fits (NEXT_TRACE) */
                assert_true(enda == MT_E_CORRUPT || enda == MT_E_EMPTY);
            for (size_t per = 1; per <= 256; per = per * 3 + 2) {
                mt_err eb = {MT_OK, ""};
                mt_errc endb;
                size_t nb = read_runs(&f, per, b, &endb, &eb);
                if (nb != na || endb != enda || strcmp(ea.msg, eb.msg) != 0)
                    fail_msg("spoilt %u at %u, %zu per call: %zu events, '%s' against %zu, '%s'",
                             how, at[p], per, nb, eb.msg, na, ea.msg);
                same_hevs(a, b, na);
            }
            db_file_free(&f);
        }
    }
}

/* Every tag byte, at an event inside a run, in a file of every version
 * with EVENTS2 records: the runs give what the one-event decoder gives
 * (the tags a version accepts, the columns each reads; dat_reader_batch2.c
 * has these as a table, tag_op).  Before version 4 the record's first
 * NEXT_TRACE (event 7) is an error: there only the tag at 3 is read. */
static void runs_every_tag(void **state)
{
    (void)state;
    static mt_dat_hev a[2 * RUN_N], b[2 * RUN_N];
    for (uint32_t v = MT_DAT_VERSION_FULL; v <= MT_DAT_VERSION; v++) {
        for (unsigned tag = 0; tag < 256; tag++) {
            for (unsigned at = 3; at < RUN_N; at += 297) { /* 3, 300, 597 */
                db_file f;
                db_order_head(&f, v, MT_DAT_MODE_FULL, 0, v >= 5 ? MT_DAT_ORDER_THREAD : -1);
                db_ev2 e = {0};
                run_model m = {0};
                for (unsigned i = 0; i < RUN_N; i++) {
                    if (i != at) {
                        run_event(&e, &m, i, RUN_N, 0);
                        continue;
                    }
                    db_ev2_tag(&e, tag); /* a value in every column: what it reads */
                    db_ev2_put(&e, DB_TIMES, 3), db_ev2_put(&e, DB_TRACES, 1);
                    db_ev2_put(&e, DB_SIZES, 8), db_ev2_put(&e, DB_REFS, 0);
                    db_ev2_put(&e, DB_AGES, 1);
                }
                db_ev2_record(&f, &e, 9, 2000 * MS);
                db_flush(&f);
                mt_err ea = {MT_OK, ""};
                mt_errc enda;
                size_t na = read_runs(&f, 0, a, &enda, &ea);
                for (size_t per = 16; per <= 256; per *= 16) {
                    mt_err eb = {MT_OK, ""};
                    mt_errc endb;
                    size_t nb = read_runs(&f, per, b, &endb, &eb);
                    if (nb != na || endb != enda || strcmp(ea.msg, eb.msg) != 0)
                        fail_msg("version %u, tag %#x at %u, %zu per call: %zu events, '%s' "
                                 "against %zu, '%s'",
                                 v, tag, at, per, nb, eb.msg, na, ea.msg);
                    same_hevs(a, b, na);
                }
                db_file_free(&f);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decoded),
        cmocka_unit_test(corrupt),
        cmocka_unit_test(frame_local),
        cmocka_unit_test(many_blocks),
        cmocka_unit_test(frame_alloc_limit),
        cmocka_unit_test(deferred_blocks),
        cmocka_unit_test(next_trace),
        cmocka_unit_test(next_trace_corrupt),
        cmocka_unit_test(runs_like_single),
        cmocka_unit_test(runs_every_tag),
        cmocka_unit_test(tick_steps),
        cmocka_unit_test(prev_frame_refs),
        cmocka_unit_test(prev_frame_corrupt),
        cmocka_unit_test(prev_kind_reserved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
