/* test_unwind_replay.c -- the own walker's replay of a thread's previous walk.
 *
 * mt_unwind (src/preload/unwind/unwind_walk.c) keeps each walk in a memo and replays
 * it in the next walk where the state and the stack words match
 * (unwind_memo.h).  Here the walker runs on this program's own stacks,
 * started from a hook-like frame record as the allocation hooks do, and
 * every walk that may replay is compared with a walk from the very same
 * stack with an empty memo (no replay): frames, count, truncation and hash
 * must be equal.  Stack shapes: one deep stack again and again, an outer
 * part shared under different inner parts, recursion of varying depth
 * (same CFAs under different inner depths), one function reached at the
 * same CFA through two callers with equal frames (only the check of the
 * stack words tells them apart), one place reached with two different
 * frame pointers that a later step needs, truncation at several depths, a record
 * whose words are made stale by hand, and a flush of the rule cache
 * (dlclose) between walks.  Replays must have happened where they can.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm_layout.h"
#include "core_state.h"
#include "unwind_walk.h"
#include "unwind_cache.h"

mt_global mt_g; /* the walker reads mt_g.self_lo/hi: no range is memtop's here */

#define NOINLINE __attribute__((noinline, noclone))
#define KEEP() __asm__ volatile("" ::: "memory")

typedef struct walk_result {
    uint64_t frames[MT_MAX_DEPTH];
    uint64_t hash;
    int n;
    bool truncated;
} walk_result;

static mt_walk_memo *g_memo, *g_fresh; /* for MT_MAX_DEPTH */
static uint32_t g_depth = 32;
static unsigned g_walks, g_replayed, g_inplace;

/* A stand-in for an allocation hook: it has a frame pointer, and the walk
 * starts at its caller from its frame record. */
static NOINLINE int hook(walk_result *r, mt_walk_memo *m)
{
    const mt_hook_frame *hf = __builtin_frame_address(0);
    r->truncated = false;
    r->n = mt_unwind(hf, m, g_depth, &r->truncated, &r->hash);
    if (r->n > 0)
        mt_unwind_frames(m, r->frames, (uint32_t)r->n);
    KEEP();
    return r->n;
}

static void assert_same(const walk_result *a, const walk_result *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->truncated, b->truncated);
    assert_memory_equal(a->frames, b->frames, (size_t)a->n * sizeof a->frames[0]);
    assert_int_equal(a->hash, b->hash);
}

static void clear(mt_walk_memo *m)
{
    memset(m, 0, mt_walk_memo_bytes(MT_MAX_DEPTH));
    mt_walk_memo_init(m, MT_MAX_DEPTH);
}

/* Walks twice from one call site (so from the same stack): with the
 * thread's memo, then with an empty one; they must agree. */
static NOINLINE void probe(void)
{
    walk_result r[2];
    uint32_t cur = g_memo->cur, valid = g_memo->valid;
    for (volatile int i = 0; i < 2; i++) { /* volatile: one call site, not unrolled */
        mt_walk_memo *m = i == 0 ? g_memo : g_fresh;
        if (i == 1)
            clear(g_fresh);
        assert_true(hook(&r[i], m) > 0);
    }
    assert_int_equal(g_fresh->copied, 0);
    assert_same(&r[0], &r[1]);
    g_walks++;
    g_replayed += g_memo->copied > 0;
    /* The walk rewrote the previous walk's record in place (unwind_memo.h). */
    g_inplace += valid && g_memo->cur == cur;
}

/* A chain of n frames, each a real frame (work after the call). */
static NOINLINE uint64_t chain(int n)
{
    if (n == 0) {
        probe();
        return 1;
    }
    uint64_t v = chain(n - 1);
    KEEP();
    return v * 3 + (uint64_t)n;
}

static void reset(void)
{
    clear(g_memo);
    g_walks = g_replayed = g_inplace = 0;
    g_depth = 32;
}

static void test_same_stack(void **state)
{
    (void)state;
    reset();
    for (int i = 0; i < 20; i++)
        chain(12);
    assert_int_equal(g_walks, 20);
    assert_int_equal(g_replayed, 19); /* all but the first */
    assert_int_equal(g_inplace, 19);  /* each in the record it replayed: no step copied */
}

/* Two inner parts under one outer part, alternating. */
static NOINLINE uint64_t inner_a(int n)
{
    uint64_t v = chain(n);
    KEEP();
    return v + 1;
}

static NOINLINE uint64_t inner_b(int n)
{
    volatile char pad[200];
    pad[0] = (char)n;
    uint64_t v = chain(n + pad[0] % 2);
    KEEP();
    return v + (uint64_t)pad[0];
}

static NOINLINE uint64_t outer(int i)
{
    uint64_t v = (i % 3) ? inner_a(2 + i % 4) : inner_b(3);
    KEEP();
    return v;
}

static void test_shared_outer(void **state)
{
    (void)state;
    reset();
    uint64_t v = 0;
    for (int i = 0; i < 40; i++)
        v += chain(5) + outer(i);
    assert_true(v > 0);
    assert_int_equal(g_walks, 80);
    assert_true(g_replayed >= 70);
    assert_true(g_inplace > 0 && g_inplace < g_replayed); /* inner depths differ: some copy */
}

/* Recursion whose innermost frames reach the same CFAs at different
 * depths. */
static void test_recursion(void **state)
{
    (void)state;
    reset();
    static const int depths[] = {5, 12, 3, 30, 7, 7, 1, 25, 0, 16, 2, 40};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++)
            chain(depths[i]);
    assert_int_equal(g_walks, 36);
    assert_true(g_replayed >= 30);
}

/* One function reached through two callers of equal frames: at the same
 * CFA, with the same return address below it; only the return address
 * one frame up tells the callers apart. */
static uintptr_t g_cfa[2];

static NOINLINE uint64_t common_leaf(int who)
{
    volatile char here;
    g_cfa[who] = (uintptr_t)&here;
    probe();
    KEEP();
    return (uint64_t)who;
}

static NOINLINE uint64_t common(int who)
{
    uint64_t v = common_leaf(who);
    KEEP();
    return v + 1;
}

/* Distinct functions of one shape (no_icf: not merged into one). */
#define CALLER(name, k)                                                                            \
    static NOINLINE __attribute__((no_icf)) uint64_t name(int who)                                 \
    {                                                                                              \
        uint64_t v = common(who);                                                                  \
        KEEP();                                                                                    \
        return v * (k);                                                                            \
    }
CALLER(caller_a, 7)
CALLER(caller_b, 11)

static void test_two_callers(void **state)
{
    (void)state;
    reset();
    uint64_t v = 0;
    for (int i = 0; i < 20; i++)
        v += (i & 1) ? caller_b(1) : caller_a(0);
    assert_true(v > 0);
    assert_int_equal(g_cfa[0], g_cfa[1]); /* the premise: the same place */
    assert_int_equal(g_walks, 20);
    assert_int_equal(g_replayed, 19);
}

/* A frame pointer that differs at the same CFA: rbp_frame (alloca: a
 * rbp-based CFA) is reached from two callers whose frames differ by as
 * much as their alloca sizes, so rbp_leaf below it is at one CFA with one
 * return address, but rbp (rbp_frame's frame pointer) differs, and the
 * step out of rbp_frame depends on it. */
static uintptr_t g_leaf_sp, g_frame_fp;

static NOINLINE void rbp_leaf(void)
{
    volatile char here;
    g_leaf_sp = (uintptr_t)&here;
    probe();
    KEEP();
}

static NOINLINE void rbp_frame(size_t n)
{
    volatile char *buf = __builtin_alloca(n);
    buf[0] = 1;
    g_frame_fp = (uintptr_t)__builtin_frame_address(0);
    rbp_leaf();
    buf[n - 1] = buf[0];
}

static NOINLINE __attribute__((no_icf)) void rbp_deep(size_t n)
{
    volatile char pad[256];
    pad[0] = 1;
    rbp_frame(n);
    pad[1] = pad[0];
}

static NOINLINE __attribute__((no_icf)) void rbp_shallow(size_t n)
{
    rbp_frame(n);
    KEEP();
}

static void test_frame_pointer(void **state)
{
    (void)state;
    reset();
    rbp_deep(64);
    uintptr_t sp_deep = g_leaf_sp, fp_deep = g_frame_fp;
    rbp_shallow(64);
    assert_true(g_leaf_sp > sp_deep);
    size_t n = 64 + (g_leaf_sp - sp_deep); /* puts rbp_leaf where rbp_deep(64) does */
    rbp_shallow(n);
    assert_int_equal(g_leaf_sp, sp_deep); /* the premise: one CFA, */
    assert_true(g_frame_fp != fp_deep);   /* another frame pointer */
    for (int i = 0; i < 10; i++) {
        rbp_deep(64);
        rbp_shallow(n);
    }
    assert_int_equal(g_walks, 23);
}

static void test_truncation(void **state)
{
    (void)state;
    static const uint32_t depths[] = {1, 2, 3, 5, 8, 13, 14, 15, 16, 20};
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
        reset();
        g_depth = depths[d];
        for (int i = 0; i < 6; i++)
            chain(10 + i % 3);
        assert_int_equal(g_walks, 6);
    }
    g_depth = 32;
}

/* A memo sized for fewer frames than the walk's depth: the walk does not
 * use it (it falls back to libunwind rather than write past it). */
static void test_small_memo(void **state)
{
    (void)state;
    mt_walk_memo *m = calloc(1, mt_walk_memo_bytes(4));
    assert_non_null(m);
    mt_walk_memo_init(m, 4);
    walk_result r;
    g_depth = 5;
    assert_int_equal(hook(&r, m), -1);
    g_depth = 4;
    assert_int_equal(hook(&r, m), 4);
    assert_true(r.truncated);
    g_depth = 32;
    free(m);
}

/* A record whose stack words no longer hold what it says (as if the
 * callers had changed): every outer step's return address is made stale
 * in the record; the next walk must notice each and still be right. */
static void test_stale_words(void **state)
{
    (void)state;
    reset();
    for (int k = 0; k < 12; k++) {
        chain(12);
        mt_walk_record *r = &g_memo->rec[g_memo->cur];
        mt_walk_step *steps = mt_walk_memo_steps(g_memo, g_memo->cur);
        assert_true(r->nok > (uint32_t)k);
        steps[r->nok - 1 - (uint32_t)k].ra ^= 0x10;
        if (k % 3 == 0 && r->nok > 3)
            steps[1].ra ^= 0x20;
    }
    chain(12);
}

/* After a flush of the rule cache (what dlclose does), the next walk may
 * not replay: the rules it recorded may describe code that is gone. */
static void test_flush(void **state)
{
    (void)state;
    reset();
    chain(8);
    chain(8);
    assert_int_equal(g_replayed, 1);
    mt_ucache_flush();
    chain(8);
    assert_int_equal(g_replayed, 1);
    chain(8);
    assert_int_equal(g_replayed, 2);
}

int main(void)
{
    if (!mt_unwind_init())
        return 77; /* glibc < 2.35: the own walker is not used */
    g_memo = malloc(mt_walk_memo_bytes(MT_MAX_DEPTH));
    g_fresh = malloc(mt_walk_memo_bytes(MT_MAX_DEPTH));
    if (!g_memo || !g_fresh)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_stack),    cmocka_unit_test(test_shared_outer),
        cmocka_unit_test(test_recursion),     cmocka_unit_test(test_two_callers),
        cmocka_unit_test(test_frame_pointer), cmocka_unit_test(test_small_memo),
        cmocka_unit_test(test_truncation),    cmocka_unit_test(test_stale_words),
        cmocka_unit_test(test_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
