/* test_writer_blocks.c -- unit test of the writer's EVENTS2 frame context
 * (src/preload/record/record_blocks.c) against a model: millions of random
 * allocations and frees on a few hundred to a few hundred thousand
 * addresses (reuse, long probe clusters, growth, shrinking at frame
 * boundaries), frees with the block's values or with other values.  A
 * free may name its block exactly when the model's entry at its address
 * holds the same trace, size and birth, and then with that entry's serial;
 * an allocation at an address replaces the entry there; a new frame
 * keeps the entries not named as the frame before's, where a free its own
 * frame does not name may name its block (with the trace's count of that
 * frame), and forgets the older ones; a new file forgets both; a frame
 * counts at most MT_DAT_FRAME_ALLOCS_MAX allocations.  Exit 0 when every
 * answer matches. */
#include "record_blocks.h"

#include "dat_format.h"
#include "test_xorshift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ADDRS 300000u

typedef struct entry {
    bool present;
    uint32_t trace;
    uint64_t serial, size, birth_ms;
} entry;

static entry model[MAX_ADDRS], prev[MAX_ADDRS]; /* this frame's, the frame before's */
static uint64_t count[6], prev_count[6];        /* per trace */
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    return test_xorshift(&rng);
}

static int failures;

static void expect(bool ok, const char *what, uint64_t op)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "op %llu: %s\n", (unsigned long long)op, what);
}

/* Like heap blocks: 16-byte aligned, close together; one in 97 above the
 * 48 bits a slot keeps (never kept), equal to another's in those bits. */
static uint64_t addr_of(uint64_t i)
{
    uint64_t a = 0x7f0000001000ull + i * 48;
    return i % 97 == 5 ? (a - 48) | 1ull << 48 : a;
}

/* What a 16-byte slot can hold (record_blocks.c): a size below 2^23 and
 * a birth within 2^15 ms of the frame's first allocation. */
static bool fits(uint64_t addr, uint64_t size, int64_t diff)
{
    return addr < 1ull << 48 && size < 1ull << 23 && diff >= -32768 && diff < 32768;
}

/* Sizes and births at either side of the limits of a slot. */
static uint64_t some_size(void)
{
    static const uint64_t edge[] = {(1u << 23) - 1, 1u << 23, 0};
    uint64_t k = rnd() % 16;
    return k < 12 ? 16 * (1 + rnd() % 4) : k < 15 ? edge[k - 12] : rnd();
}

static uint64_t some_birth(uint64_t t_ms, uint64_t base_ms)
{
    static const int64_t edge[] = {32767, 32768, -32768, -32769};
    uint64_t k = rnd() % 1000;
    if (k < 990)
        return t_ms;
    return k < 994 ? base_ms + (uint64_t)edge[k - 990] : t_ms + (1ull << 32);
}

static void new_frame(uint64_t *base_ms, bool *have_base, bool file)
{
    if (file)
        mt_rb_new_file();
    else
        mt_rb_new_frame();
    memcpy(prev, model, sizeof model);
    memcpy(prev_count, count, sizeof count);
    if (file) {
        memset(prev, 0, sizeof prev);
        memset(prev_count, 0, sizeof prev_count);
    }
    memset(model, 0, sizeof model);
    memset(count, 0, sizeof count);
    *have_base = false;
    (void)base_ms;
}

/* A free its frame did not name: whether the frame before's map names
 * it, as the model says. */
static void take_prev(uint64_t i, const entry *v, uint64_t op)
{
    mt_rb_trace *ts = mt_rb_trace_get(v->trace);
    expect(ts && ts->prev_count == prev_count[v->trace], "the trace's count of the frame before",
           op);
    const entry *p = &prev[i];
    bool match =
        p->present && v->trace == p->trace && v->size == p->size && v->birth_ms == p->birth_ms;
    uint64_t serial = UINT64_MAX;
    bool got =
        ts && mt_rb_take_prev(addr_of(i), v->trace, v->size, v->birth_ms, ts->prev_count, &serial);
    expect(got == match,
           got ? "named a block of the frame before it should not"
               : "missed its block of the frame before",
           op);
    if (got && match)
        expect(serial == p->serial, "wrong serial in the frame before", op);
    if (got)
        prev[i].present = false;
}

/* One frame of n operations on `addrs` addresses (a new file's first if
 * file). */
static void frame(uint64_t n, uint64_t addrs, uint64_t *op, bool file)
{
    uint64_t base_ms = 0, t_ms = 1000 + rnd() % 100000;
    bool have_base = false;
    new_frame(&base_ms, &have_base, file);
    for (uint64_t k = 0; k < n; k++, (*op)++) {
        uint64_t i = rnd() % addrs;
        entry *m = &model[i];
        t_ms += rnd() % 8 == 0;
        if (rnd() % 2) { /* an allocation */
            uint32_t trace = (uint32_t)(rnd() % 6);
            mt_rb_trace *ts = mt_rb_trace_get(trace);
            expect(ts != NULL, "trace state", *op);
            uint64_t size = some_size();
            uint64_t birth = have_base ? some_birth(t_ms, base_ms) : t_ms;
            if (!have_base) {
                base_ms = birth;
                have_base = true;
            }
            uint64_t serial = ts->count++;
            count[trace]++;
            mt_rb_note_alloc(addr_of(i), trace, serial, size, birth);
            bool kept = fits(addr_of(i), size, (int64_t)(birth - base_ms));
            *m = (entry){kept, trace, serial, size, birth};
            continue;
        }
        entry v = *m; /* a free: the block's own values, or another block's */
        if (!v.present && prev[i].present && rnd() % 4)
            v = prev[i]; /* the frame before's block at the address */
        else if (!v.present || rnd() % 4 == 0) {
            v.trace = (uint32_t)(rnd() % 6);
            v.size = 16 * (1 + rnd() % 4);
            v.birth_ms = t_ms - rnd() % 3;
        }
        bool match =
            m->present && v.trace == m->trace && v.size == m->size && v.birth_ms == m->birth_ms;
        uint64_t serial = UINT64_MAX, not_found = mt_rb_get_stats()->not_found;
        bool got = mt_rb_take(addr_of(i), v.trace, v.size, v.birth_ms, &serial);
        /* A block that does not fit a slot is not kept at all. */
        expect(m->present || mt_rb_get_stats()->not_found == not_found + 1,
               "kept an entry it should not", *op);
        expect(got == match, got ? "named a block it should not" : "missed its block", *op);
        if (got && match)
            expect(serial == m->serial, "wrong serial", *op);
        if (got)
            m->present = false;
        else
            take_prev(i, &v, *op);
    }
}

/* A frame counts at most MT_DAT_FRAME_ALLOCS_MAX allocations; a new frame
 * starts again from zero. */
static void frame_alloc_limit(void)
{
    mt_rb_new_frame();
    for (uint64_t i = 0; i < MT_DAT_FRAME_ALLOCS_MAX; i++)
        expect(mt_rb_count_alloc(), "allocation refused below the frame's limit", i);
    expect(!mt_rb_count_alloc(), "allocation counted beyond the frame's limit", 0);
    mt_rb_new_frame();
    expect(mt_rb_count_alloc(), "a new frame did not reset the allocation count", 0);
}

int main(void)
{
    uint64_t op = 0;
    frame_alloc_limit();
    const mt_rb_stats *st = mt_rb_get_stats();
    frame(200000, 300, &op, true);         /* heavy reuse, long clusters */
    frame(2000000, MAX_ADDRS, &op, false); /* growth */
    frame(100000, 1000, &op, false);       /* after a big frame: shrinks */
    for (int f = 0; f < 20; f++)           /* many small frames: the map empties each time */
        frame(5000 + rnd() % 5000, 50 + rnd() % 5000, &op, f == 10);
    frame(1000000, 100000, &op, false);
    printf("%llu operations: %llu frees named their block (%llu in the frame before), %llu not "
           "found, %llu another block; %llu bytes\n",
           (unsigned long long)op, (unsigned long long)st->refs, (unsigned long long)st->prev_refs,
           (unsigned long long)st->not_found, (unsigned long long)st->mismatched,
           (unsigned long long)mt_rb_bytes());
    if (st->refs == 0 || st->prev_refs == 0 || st->mismatched == 0 || st->not_found == 0)
        return fprintf(stderr, "the test did not reach every case\n"), 1;
    if (failures)
        fprintf(stderr, "%d wrong answers\n", failures);
    return failures ? 1 : 0;
}
