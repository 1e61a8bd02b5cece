/* test_dat_blocks.c -- the reader's EVENTS2 frame context on its own
 * (src/ipc/dat_reader_blocks.c): each trace's blocks of the frame against
 * a model.  Many traces with the same serials, growth of their arrays,
 * frees in random order (each block once, then no longer live), sizes
 * and births of every width a recording can give (the wide entries, their
 * reuse), a new frame emptying
 * the context, the arrays a frame no longer uses given back, the epoch
 * wrapping, and mt_dctx_give giving each live block once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dat_reader_blocks.h"
#include "test_xorshift.h"

#define NTRACES 64u
#define PER_TRACE 600u

typedef struct model_block {
    uint32_t trace;
    uint64_t serial, size, birth_ms;
    bool live;
} model_block;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    return test_xorshift(&rng);
}

/* The size and birth of block i: with odd, sizes of 40 bits and more
 * and births from 0 to the largest a u64 ns clock gives, most ordinary. */
static void values(size_t i, bool odd, uint64_t *size, uint64_t *birth_ms)
{
    *size = 16 + i % 4000;
    *birth_ms = 5000000000ull + i / 7;
    if (odd && i % 13 == 0)
        *size = ((uint64_t)1 << 40) + i;
    else if (odd && i % 11 == 0)
        *size = UINT64_MAX - i;
    if (odd && i % 17 == 0)
        *birth_ms = i % 2 ? 0 : UINT64_MAX / 1000000u - i;
}

/* Allocates PER_TRACE blocks on each of NTRACES traces, interleaved (same
 * serials on every trace: the keys differ only by trace). */
static model_block *fill(mt_dctx *c, bool odd)
{
    model_block *m = calloc(NTRACES * PER_TRACE, sizeof *m);
    assert_non_null(m);
    mt_err err;
    for (size_t i = 0; i < NTRACES * PER_TRACE; i++) {
        uint32_t trace = (uint32_t)(i % NTRACES);
        mt_dtrace *t = mt_dctx_trace(c, trace);
        assert_non_null(t);
        model_block *b = &m[i];
        values(i, odd, &b->size, &b->birth_ms);
        b->trace = trace;
        b->serial = t->count;
        b->live = true;
        assert_int_equal(mt_dctx_alloc(c, t, b->size, b->birth_ms, &err), MT_OK);
    }
    return m;
}

static void take_ok(mt_dctx *c, model_block *b)
{
    uint64_t size = 0, birth = 0;
    mt_dtrace *t = mt_dctx_trace(c, b->trace);
    assert_true(mt_dctx_take(c, t, b->serial, &size, &birth));
    assert_int_equal(size, b->size);
    assert_int_equal(birth, b->birth_ms);
    b->live = false;
}

static void take_gone(mt_dctx *c, const model_block *b)
{
    uint64_t size, birth;
    mt_dtrace *t = mt_dctx_trace(c, b->trace);
    assert_false(mt_dctx_take(c, t, b->serial, &size, &birth));
}

/* Frees every block in random order, each exactly once: a broken
 * deletion loses the blocks behind the hole in their probe run. */
static void take_all_random(mt_dctx *c, model_block *m, size_t n)
{
    size_t *order = malloc(n * sizeof *order);
    assert_non_null(order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = next_rand() % (i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (size_t i = 0; i < n; i++) {
        take_ok(c, &m[order[i]]);
        take_gone(c, &m[order[i]]);
    }
    free(order);
}

static void growth_and_random_frees(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    model_block *m = fill(&c, false);
    for (uint32_t k = 0; k < NTRACES; k++)
        assert_int_equal(mt_dctx_trace(&c, k)->count, PER_TRACE);
    take_all_random(&c, m, NTRACES * PER_TRACE);
    free(m);
    mt_dctx_free(&c);
}

static void all_widths(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    model_block *m = fill(&c, true);
    assert_true(c.nwide > 0); /* sizes of 40 bits and more, births far apart */
    size_t nwide = c.nwide;
    take_all_random(&c, m, NTRACES * PER_TRACE);
    free(m);
    /* more blocks in this frame: serials go on after the freed ones, and
     * the freed wide entries are used again */
    m = fill(&c, true);
    assert_int_equal(m[0].serial, PER_TRACE);
    assert_int_equal(c.nwide, nwide);
    take_all_random(&c, m, NTRACES * PER_TRACE);
    free(m);
    mt_dctx_free(&c);
}

static int given_fn(void *ctx, const mt_dat_block *g, size_t n)
{
    model_block *m = ctx;
    assert_true(n > 0 && n <= MT_DAT_BLOCKS_PER_CALL);
    for (size_t k = 0; k < n; k++) {
        size_t i = 0;
        for (; i < NTRACES * PER_TRACE; i++) {
            model_block *b = &m[i];
            if (b->live && b->trace == g[k].trace && b->size == g[k].size &&
                b->birth_ms == g[k].birth_ms) {
                b->live = false; /* given once */
                break;
            }
        }
        if (i == NTRACES * PER_TRACE) {
            fail_msg("gave a block that is not live: trace %u size %llu", g[k].trace,
                     (unsigned long long)g[k].size);
            return 1;
        }
    }
    return 0;
}

static void give_each_once(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    model_block *m = fill(&c, true);
    for (size_t i = 0; i < NTRACES * PER_TRACE; i += 3)
        take_ok(&c, &m[i]);
    assert_int_equal(mt_dctx_give(&c, given_fn, m), 0);
    for (size_t i = 0; i < NTRACES * PER_TRACE; i++)
        assert_false(m[i].live);
    free(m);
    mt_dctx_free(&c);
}

static int count_fn(void *ctx, const mt_dat_block *b, size_t n)
{
    (void)b;
    assert_true(n > 0 && n <= MT_DAT_BLOCKS_PER_CALL);
    *(unsigned *)ctx += (unsigned)n;
    return 0;
}

/* Allocates n blocks on trace 1 in a new frame: mt_dctx_give then gives
 * those n and nothing of an older frame. */
static void frame_of(mt_dctx *c, unsigned n)
{
    mt_dctx_new_frame(c);
    mt_dtrace *t = mt_dctx_trace(c, 1);
    assert_int_equal(t->count, 0);
    mt_err err;
    for (unsigned k = 0; k < n; k++)
        assert_int_equal(mt_dctx_alloc(c, t, 8 + k, 1000 + k, &err), MT_OK);
    unsigned given = 0;
    assert_int_equal(mt_dctx_give(c, count_fn, &given), 0);
    assert_int_equal(given, n);
}

/* A new frame empties the context, again and again, and when the epoch
 * wraps (a state of epoch 0 would look current then). */
static void frames_and_epoch_wrap(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    free(fill(&c, true));
    for (unsigned f = 0; f < 3000; f++)
        frame_of(&c, f % 2 ? 12 : 6);
    c.epoch = UINT32_MAX - 3;
    for (unsigned f = 0; f < 8; f++)
        frame_of(&c, f % 2 ? 12 : 6);
    assert_true(c.epoch > 0 && c.epoch < 8);
    mt_dctx_free(&c);
}

/* A trace's array is kept while the frames use a quarter of it, and given
 * back after a frame that does not, or in which the trace does not
 * allocate: the arrays follow the last frames, not the largest count a
 * trace ever had. */
static void arrays_follow_the_frames(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    frame_of(&c, 4000);
    uint64_t cap = mt_dctx_trace(&c, 1)->cap;
    assert_true(cap >= 4000);
    frame_of(&c, 1000); /* a quarter: kept */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, cap);
    frame_of(&c, 10); /* the frame of 1000 used less than a quarter: given back */
    assert_true(mt_dctx_trace(&c, 1)->cap < cap);
    frame_of(&c, 1); /* the frame of 10 used a quarter of its 16: kept */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 16);
    frame_of(&c, 1); /* the frame of 1 did not: given back, then 4 entries */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 4);
    mt_dctx_new_frame(&c); /* four entries for the frame of 1: kept */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 4);
    mt_dctx_new_frame(&c); /* trace 1 did not allocate in that frame: given back */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 0);
    assert_null(mt_dctx_trace(&c, 1)->ents);
    assert_int_equal(c.nheld, 0);
    mt_dctx_free(&c);
}

static uint64_t kept_entries(const mt_dctx *c)
{
    uint64_t n = 0;
    for (uint32_t trace = 0; trace < c->ntraces; trace++)
        n += c->traces[trace].cap;
    return n;
}

/* The entries kept at a frame's end are at most four per allocation of
 * that frame, whatever the traces allocated before: many traces with a
 * few blocks each, then a frame in which one trace allocates once. */
static void kept_entries_bounded_by_the_frame(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    mt_err err;
    uint64_t allocs = 0;
    for (uint32_t trace = 0; trace < 5000; trace++) {
        mt_dtrace *t = mt_dctx_trace(&c, trace);
        for (unsigned k = 0; k < 1 + trace % 40; k++, allocs++)
            assert_int_equal(mt_dctx_alloc(&c, t, 8, 1000, &err), MT_OK);
    }
    mt_dctx_new_frame(&c);
    assert_true(kept_entries(&c) <= 4 * allocs);
    mt_dctx_trace(&c, 4999); /* a state, no allocation */
    assert_int_equal(mt_dctx_alloc(&c, mt_dctx_trace(&c, 1), 8, 1000, &err), MT_OK);
    mt_dctx_new_frame(&c);
    assert_int_equal(kept_entries(&c), 4); /* trace 1's */
    assert_int_equal(c.nheld, 1);
    mt_dctx_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(growth_and_random_frees),
        cmocka_unit_test(all_widths),
        cmocka_unit_test(give_each_once),
        cmocka_unit_test(frames_and_epoch_wrap),
        cmocka_unit_test(arrays_follow_the_frames),
        cmocka_unit_test(kept_entries_bounded_by_the_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
