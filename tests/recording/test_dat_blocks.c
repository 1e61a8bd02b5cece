/* test_dat_blocks.c -- the reader's EVENTS2 frame context on its own
 * (src/ipc/dat_reader_blocks.c): each trace's blocks of the frame against
 * a model.  Many traces with the same serials, growth of their arrays,
 * frees in random order (each block once, then no longer live), sizes
 * and births of every width a recording can give (the wide entries, their
 * reuse), a new frame emptying
 * the context, the arrays a frame no longer uses given back, the epoch
 * wrapping, mt_dctx_give giving each live block once, and the blocks of
 * the frame before (FREE_PREV): each once, with its values, only those
 * still live at the frame's end, none of an earlier frame or after a
 * forget, across the epoch's wrap. */
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

/* A context of fill(odd) whose every third block was freed: its model. */
static model_block *filled_third_freed(mt_dctx *c)
{
    mt_dctx_init(c);
    model_block *m = fill(c, true);
    for (size_t i = 0; i < NTRACES * PER_TRACE; i += 3)
        take_ok(c, &m[i]);
    return m;
}

static void give_each_once(void **state)
{
    (void)state;
    mt_dctx c;
    model_block *m = filled_third_freed(&c);
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

static uint64_t prev_cap(const mt_dctx *c, uint32_t trace)
{
    return c->prev[trace].cap;
}

/* A frame's end hands each trace's array to the frame before, and gives
 * the trace the old array of the frame before while it has at most four
 * entries per allocation of the frame that ends, made as large as that
 * frame's count at once; a trace that did not allocate gives both back:
 * the arrays follow the last frames, not the largest count a trace ever
 * had. */
static void arrays_follow_the_frames(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    frame_of(&c, 4000);
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 4096);
    mt_dent *first = mt_dctx_trace(&c, 1)->ents;
    frame_of(&c, 1100); /* 4096 to the frame before; none to reuse: one of 4096 made */
    assert_ptr_equal(c.prev[1].ents, first);
    assert_int_equal(c.prev[1].count, 4000);
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 4096);
    frame_of(&c, 1100); /* the first array again: 4096 <= 4 * 1100 */
    assert_ptr_equal(mt_dctx_trace(&c, 1)->ents, first);
    frame_of(&c, 300); /* the second again */
    assert_int_equal(prev_cap(&c, 1), 4096);
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 4096);
    frame_of(&c, 200); /* 4096 > 4 * 300: given back, one of 512 made */
    assert_int_equal(prev_cap(&c, 1), 4096);
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 512);
    mt_dctx_new_frame(&c); /* 4096 > 4 * 200: given back, 256 made */
    assert_int_equal(prev_cap(&c, 1), 512);
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 256);
    mt_dctx_new_frame(&c); /* trace 1 did not allocate in that frame: both given back */
    assert_int_equal(mt_dctx_trace(&c, 1)->cap, 0);
    assert_null(mt_dctx_trace(&c, 1)->ents);
    assert_null(c.prev[1].ents);
    assert_int_equal(c.nheld, 0);
    mt_dctx_free(&c);
}

static uint64_t kept_entries(const mt_dctx *c)
{
    uint64_t n = 0;
    for (uint32_t trace = 0; trace < c->ntraces; trace++)
        n += c->traces[trace].cap + c->prev[trace].cap;
    return n;
}

/* The entries kept at a frame's end are at most eight per allocation of
 * that frame (four in the frame before's arrays, four in those kept or
 * made for the next), whatever the traces allocated before: many traces with a
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
    assert_true(kept_entries(&c) <= 8 * allocs);
    mt_dctx_trace(&c, 4999); /* a state, no allocation */
    assert_int_equal(mt_dctx_alloc(&c, mt_dctx_trace(&c, 1), 8, 1000, &err), MT_OK);
    mt_dctx_new_frame(&c);
    assert_int_equal(kept_entries(&c), 8); /* trace 1's: 4 before, 4 reused */
    assert_int_equal(c.nheld, 1);
    mt_dctx_free(&c);
}

/* FREE_PREV of the model's block b, which the frame before holds. */
static int take_prev(mt_dctx *c, const model_block *b, uint64_t *size, uint64_t *birth)
{
    mt_dctx_trace(c, b->trace); /* the decoder has the state of every event's trace */
    uint64_t count = c->prev[b->trace].count;
    return mt_dctx_take_prev(c, b->trace, count - 1 - b->serial, size, birth);
}

/* The blocks a frame did not free are its next frame's frame before: each
 * taken once with its values (wide ones too), whatever the new frame
 * allocates; a block freed in its frame, a ref past the count, and every
 * block once another frame came or the context was forgotten, are not. */
static void prev_frame_blocks(void **state)
{
    (void)state;
    mt_dctx c;
    model_block *m = filled_third_freed(&c);
    mt_dctx_new_frame(&c);
    free(fill(&c, true)); /* the new frame's own blocks, the same serials */
    uint64_t size, birth;
    for (size_t i = 0; i < NTRACES * PER_TRACE; i++) {
        if (!m[i].live) {
            assert_int_equal(take_prev(&c, &m[i], &size, &birth), MT_DPREV_FREED);
            continue;
        }
        assert_int_equal(take_prev(&c, &m[i], &size, &birth), MT_DPREV_OK);
        assert_int_equal(size, m[i].size);
        assert_int_equal(birth, m[i].birth_ms);
        assert_int_equal(take_prev(&c, &m[i], &size, &birth), MT_DPREV_FREED);
    }
    assert_int_equal(mt_dctx_take_prev(&c, 0, PER_TRACE, &size, &birth), MT_DPREV_NONE);
    mt_dctx_new_frame(&c);
    mt_dctx_new_frame(&c); /* the frame before now allocated nothing */
    assert_int_equal(take_prev(&c, &m[1], &size, &birth), MT_DPREV_NONE);
    free(m);
    m = fill(&c, false);
    mt_dctx_forget(&c);
    assert_int_equal(take_prev(&c, &m[1], &size, &birth), MT_DPREV_NONE);
    assert_int_equal(c.nheld, 0);
    free(m);
    mt_dctx_free(&c);
}

/* The frame before stays the frame before when the epoch wraps. */
static void prev_frame_across_the_wrap(void **state)
{
    (void)state;
    mt_dctx c;
    mt_dctx_init(&c);
    c.epoch = UINT32_MAX;
    model_block *m = fill(&c, false);
    mt_dctx_new_frame(&c);
    assert_int_equal(c.epoch, 1);
    uint64_t size, birth;
    for (size_t i = 0; i < NTRACES * PER_TRACE; i += 7) {
        assert_int_equal(take_prev(&c, &m[i], &size, &birth), MT_DPREV_OK);
        assert_int_equal(size, m[i].size);
    }
    mt_dctx_new_frame(&c);
    assert_int_equal(take_prev(&c, &m[1], &size, &birth), MT_DPREV_NONE);
    free(m);
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
        cmocka_unit_test(prev_frame_blocks),
        cmocka_unit_test(prev_frame_across_the_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
