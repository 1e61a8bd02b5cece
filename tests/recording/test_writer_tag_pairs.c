/* test_writer_tag_pairs.c -- unit test of the writer's paired tags
 * (src/preload/record/record_tag_pairs.c, format version 8) with a
 * decoder of its own: the TAG_PAIRS it emits (captured from a stand-in of
 * mt_recw_emit) are checked as a reader must, and every record's codes
 * decode back to its tags with the table that holds in the frame.
 *
 *   - round_trip: records of random tags (92 % one of three given the
 *     tag before, rare ones, odd lengths) over several frames: a table from
 *     the frame's own counts at MT_TP_ENOUGH pairs, then one from the frame
 *     before at each frame's start; codes shorter than the tags;
 *   - table_order: the pairs counted twice or more, per context the most
 *     frequent first, ties by the smaller pair value, contexts ascending;
 *   - frame_reset: after a frame's end no table holds (tags as they are)
 *     until the next TAG_PAIRS; after a new file none is pending;
 *   - stale: a table that escapes one pair in MT_TP_STALE is replaced,
 *     each time after twice as many pairs in a frame;
 *   - many_keys: more distinct pairs than the counts hold: escaped, and
 *     every table still valid.
 */
#define _GNU_SOURCE
#include "dat_format.h"
#include "record_tag_pairs.h"
#include "record_writer.h"
#include "test_xorshift.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

mt_recw mt_w;

/* The TAG_PAIRS emitted, decoded: the table that holds in the frame. */
static struct {
    unsigned emitted; /* TAG_PAIRS records */
    bool holds;
    unsigned npairs[256];
    unsigned pairs[256][256];
    unsigned nctx;
    unsigned ctx[256]; /* in file order */
} t;

static uint64_t get_v(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail_msg("varint past the payload");
    return 0;
}

void mt_recw_emit(unsigned type)
{
    assert_int_equal(type, MT_DAT_REC_TAG_PAIRS);
    const unsigned char *p = mt_w.pay.p, *end = p + mt_w.pay.len;
    memset(&t.npairs, 0, sizeof t.npairs);
    t.nctx = (unsigned)get_v(&p, end);
    assert_true(t.nctx >= 1 && t.nctx <= MT_DAT_TAG_CONTEXTS);
    for (unsigned i = 0; i < t.nctx; i++) {
        unsigned c = (unsigned)get_v(&p, end), n = (unsigned)get_v(&p, end);
        assert_true(c <= 255 && (i == 0 || c > t.ctx[i - 1]));
        assert_true(n >= 1 && n <= MT_DAT_TAG_PAIRS_MAX);
        t.ctx[i] = c;
        t.npairs[c] = n;
        for (unsigned x = 0; x < n; x++) {
            t.pairs[c][x] = (unsigned)get_v(&p, end);
            assert_true(t.pairs[c][x] <= 0xffff);
        }
    }
    assert_ptr_equal(p, end);
    mt_w.pay.len = 0;
    t.emitted++;
    t.holds = true;
}

/* The frame ends (record_zstd.c's order: the writer's state, then ours). */
static void end_frame(void)
{
    mt_tp_new_frame();
    t.holds = false;
}

/* Writes one record of n tags as the writer does, and decodes it. */
static size_t write_record(const unsigned char *tags, uint32_t n)
{
    mt_tp_before_record();
    size_t len;
    const unsigned char *col = mt_tp_code(tags, n, &len), *p = col, *end = col + len;
    if (!t.holds) {
        assert_int_equal(len, n);
        assert_memory_equal(col, tags, n);
        return len;
    }
    unsigned c = 0;
    uint32_t i = 0;
    for (; i + 1 < n; i += 2) {
        assert_true(p < end);
        unsigned x = *p++, a, b;
        if (x == MT_DAT_TAG_ESCAPE) {
            assert_true(end - p >= 2);
            a = p[0], b = p[1];
            p += 2;
            for (unsigned k = 0; k < t.npairs[c]; k++) /* never a pair the table lists */
                assert_int_not_equal(t.pairs[c][k], a | b << 8);
        } else {
            assert_true(x < t.npairs[c]);
            a = t.pairs[c][x] & 0xff, b = t.pairs[c][x] >> 8;
        }
        assert_int_equal(a, tags[i]);
        assert_int_equal(b, tags[i + 1]);
        c = b;
    }
    if (i < n)
        assert_int_equal(*p++, tags[i]);
    assert_ptr_equal(p, end);
    return len;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* A tag below spread: mostly one of three values given the one before. */
static unsigned next_tag(unsigned prev, unsigned spread)
{
    uint64_t r = test_xorshift(&rng);
    if (r % 100 < 92)
        return (prev * 7 + (unsigned)(r >> 8) % 3) % spread;
    return (unsigned)(r >> 16) % spread;
}

static void random_tags(unsigned char *tags, uint32_t n, unsigned spread)
{
    unsigned prev = 0;
    for (uint32_t i = 0; i < n; i++)
        tags[i] = (unsigned char)(prev = next_tag(prev, spread));
}

static int setup(void **state)
{
    (void)state;
    assert_true(mt_rbuf_init(&mt_w.pay, 1u << 20));
    mt_tp_new_file();
    memset(&t, 0, sizeof t);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mt_tp_release();
    mt_rbuf_free(&mt_w.pay);
    return 0;
}

static unsigned char g_tags[MT_RR_EVENTS_MAX];

static void round_trip(void **state)
{
    (void)state;
    size_t tags = 0, bytes = 0;
    for (unsigned frame = 0; frame < 6; frame++) {
        unsigned before = t.emitted;
        for (unsigned r = 0; r < 12; r++) {
            uint32_t n = 1 + (uint32_t)(test_xorshift(&rng) % MT_RR_EVENTS_MAX);
            random_tags(g_tags, n, 64);
            size_t len = write_record(g_tags, n);
            if (frame > 0) {
                tags += n;
                bytes += len;
            }
        }
        assert_true(t.emitted > before); /* its own counts, or the frame before's */
        end_frame();
    }
    printf("round_trip: %zu tags in %zu bytes\n", tags, bytes);
    assert_true(bytes < tags * 3 / 4); /* most pairs coded: a byte for two tags */
}

static void table_order(void **state)
{
    (void)state;
    /* context 0 (each record's start): (1,2) x3, (3,4) x3, (5,6) x5, (7,8) x1 */
    static const unsigned char rec[][2] = {{1, 2}, {1, 2}, {1, 2}, {3, 4}, {3, 4}, {3, 4},
                                           {5, 6}, {5, 6}, {5, 6}, {5, 6}, {5, 6}, {7, 8}};
    for (unsigned k = 0; k < MT_TP_ENOUGH; k++) /* context 9: one pair, many times */
        write_record((const unsigned char[]){9, 9, 9, 9}, 4);
    for (unsigned i = 0; i < sizeof rec / sizeof rec[0]; i++)
        write_record(rec[i], 2);
    end_frame();
    write_record((const unsigned char[]){5, 6}, 2); /* the frame before's table */
    assert_true(t.holds);
    assert_int_equal(t.nctx, 2);
    assert_int_equal(t.ctx[0], 0);
    assert_int_equal(t.ctx[1], 9);
    assert_int_equal(t.npairs[0], 4); /* (9,9), then the three seen twice or more */
    assert_int_equal(t.pairs[0][0], 9 | 9 << 8);
    assert_int_equal(t.pairs[0][1], 5 | 6 << 8);
    assert_int_equal(t.pairs[0][2], 1 | 2 << 8); /* a tie: the smaller pair value first */
    assert_int_equal(t.pairs[0][3], 3 | 4 << 8);
    assert_int_equal(t.npairs[9], 1);
}

static void frame_reset(void **state)
{
    (void)state;
    random_tags(g_tags, MT_RR_EVENTS_MAX, 16);
    write_record(g_tags, MT_RR_EVENTS_MAX); /* counted: 8192 pairs */
    write_record(g_tags, 100);
    assert_int_equal(t.emitted, 1);
    end_frame();
    /* a table is pending, none holds: written as it is, without one */
    size_t len;
    assert_ptr_equal(mt_tp_code(g_tags, 10, &len), g_tags);
    assert_int_equal(len, 10);
    write_record(g_tags, 100); /* emits the pending table first */
    assert_int_equal(t.emitted, 2);
    mt_tp_new_file(); /* the file cut back: nothing holds, nothing pending */
    t.holds = false;
    write_record(g_tags, 100);
    assert_int_equal(t.emitted, 2);
}

static void stale(void **state)
{
    (void)state;
    random_tags(g_tags, MT_RR_EVENTS_MAX, 8);
    write_record(g_tags, MT_RR_EVENTS_MAX);
    write_record(g_tags, 2);
    assert_int_equal(t.emitted, 1);
    /* another phase: tags the table never saw */
    for (uint32_t i = 0; i < MT_RR_EVENTS_MAX; i++)
        g_tags[i] = (unsigned char)(200 + i % 3);
    write_record(g_tags, MT_RR_EVENTS_MAX);
    write_record(g_tags, MT_RR_EVENTS_MAX);
    assert_int_equal(t.emitted, 2); /* replaced from the frame's own counts */
    size_t len = write_record(g_tags, MT_RR_EVENTS_MAX);
    assert_true(len < MT_RR_EVENTS_MAX / 2 + 16);
    /* a third phase: the second replacement in the frame waits for twice
     * MT_TP_ENOUGH pairs coded with the table */
    for (uint32_t i = 0; i < MT_RR_EVENTS_MAX; i++)
        g_tags[i] = (unsigned char)(100 + i % 3);
    end_frame(); /* the table of the frame's counts holds from its start */
    write_record(g_tags, 2);
    assert_int_equal(t.emitted, 3);
    for (uint32_t i = 0; i < MT_RR_EVENTS_MAX; i++)
        g_tags[i] = (unsigned char)(150 + i % 3);
    write_record(g_tags, 2 * MT_TP_ENOUGH); /* escaped: replaced, the first time */
    write_record(g_tags, 2);
    assert_int_equal(t.emitted, 4);
    for (uint32_t i = 0; i < MT_RR_EVENTS_MAX; i++)
        g_tags[i] = (unsigned char)(50 + i % 3);
    write_record(g_tags, 2 * MT_TP_ENOUGH * 3 / 2);
    write_record(g_tags, 2);
    assert_int_equal(t.emitted, 4); /* 6,145 pairs coded: not yet */
    write_record(g_tags, 2 * MT_TP_ENOUGH);
    write_record(g_tags, 2);
    assert_int_equal(t.emitted, 5);
}

/* Counts with no pair seen twice give no table; the frame's own counts
 * are tried again only once its pairs have doubled (not at every record:
 * a scan of every slot). */
static void retry_after_none(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < MT_TP_ENOUGH; i++) { /* pairs all different */
        g_tags[2 * i] = (unsigned char)i;
        g_tags[2 * i + 1] = (unsigned char)(i >> 8);
    }
    write_record(g_tags, 2 * MT_TP_ENOUGH);
    memset(g_tags, 1, sizeof g_tags);
    write_record(g_tags, 2000); /* no table from the first record's counts */
    write_record(g_tags, 2000); /* 6,096 pairs: not tried again */
    assert_int_equal(t.emitted, 0);
    write_record(g_tags, 2 * MT_TP_ENOUGH);
    write_record(g_tags, 2); /* 10,192 pairs: tried, (1, 1) seen 5,096 times */
    assert_int_equal(t.emitted, 1);
}

static void many_keys(void **state)
{
    (void)state;
    for (unsigned frame = 0; frame < 3; frame++) {
        for (unsigned r = 0; r < 8; r++) {
            for (uint32_t i = 0; i < MT_RR_EVENTS_MAX; i++)
                g_tags[i] = (unsigned char)test_xorshift(&rng);
            write_record(g_tags, MT_RR_EVENTS_MAX);
        }
        end_frame();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(table_order, setup, teardown),
        cmocka_unit_test_setup_teardown(frame_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(stale, setup, teardown),
        cmocka_unit_test_setup_teardown(retry_after_none, setup, teardown),
        cmocka_unit_test_setup_teardown(many_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
