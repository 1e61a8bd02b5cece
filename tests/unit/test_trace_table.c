/* test_trace_table.c -- unit tests of the preload's trace table and its
 * lock-free index (src/preload/table/table_trace.c, table_trace_index.c, table_trace_index.h),
 * compiled on their own.
 *
 * Backtraces here are made-up frame values; hashes are either the real
 * mt_hash_frames() or crafted, to force equal hashes and to put every
 * trace of a test into one shard, whose index then grows.  The table is
 * process-global and append-only: each test uses frames of its own (a
 * per-test salt), so traces never leak from one test into another.
 *
 * What is checked: the locked path (mt_trace_intern) tells apart every two
 * distinct backtraces, equal hashes included; the lock-free lookup
 * (mt_trace_find) finds every trace interned before it started, and
 * returns a trace that matches in hash (its documented trust) or nothing,
 * even among traces whose index slots collide; many threads interning the
 * same new traces at once get one id per trace; a retired trace (its
 * library unloaded) is found no more, its backtrace gets a new id, unless
 * the same build is back at its place (then it is given back); an
 * index that grows while
 * readers probe it keeps answering them, and its replaced arrays stay
 * counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "core_hash.h"
#include "core_os_memory.h"
#include "table_trace_index.h"
#include "table_trace.h"
#include "test_xorshift.h"

#define MAXF 32u

typedef struct {
    uint64_t frames[MAXF];
    uint32_t n;
    uint64_t hash;
} trace;

#define GROW_SHARD 9u /* only the growth test's traces go there */

static uint64_t off_grow_shard(uint64_t hash)
{
    return mt_tidx_shard(hash) == GROW_SHARD ? hash ^ 1 : hash;
}

/* Random frames (n in 1..MAXF, distinct per salt) and their hash. */
static void make_trace(trace *t, uint64_t *rng, uint64_t salt)
{
    t->n = 1 + (uint32_t)(test_xorshift(rng) % MAXF);
    for (uint32_t i = 0; i < t->n; i++)
        t->frames[i] = (test_xorshift(rng) & 0xffffffffffull) | salt << 40;
    t->hash = off_grow_shard(mt_hash_frames(t->frames, t->n));
}

static uint32_t intern(const trace *t)
{
    return mt_trace_intern(t->frames, t->n, t->hash, 0, 1);
}

static uint32_t find(const trace *t)
{
    return mt_trace_find(t->hash);
}

/* Trace id's definition is exactly t. */
static bool defines(uint32_t id, const trace *t)
{
    const mt_trace_def *d = mt_trace_def_get(id);
    return mt_trace_ready(mt_trace_get(id)) && d->hash == t->hash && d->nframes == t->n &&
           memcmp(mt_trace_def_frames(d), t->frames, t->n * sizeof t->frames[0]) == 0;
}

static int setup(void **state)
{
    (void)state;
    return mt_traces_init(MT_TRACE_MAX) ? 0 : -1;
}

static void unknown_trace_is_not_found(void **state)
{
    (void)state;
    uint64_t rng = 11;
    trace t;
    make_trace(&t, &rng, 1);
    assert_int_equal(find(&t), MT_TRACE_OVERFLOW);
    uint32_t id = intern(&t);
    assert_int_not_equal(id, MT_TRACE_OVERFLOW);
    assert_true(defines(id, &t));
    assert_int_equal(find(&t), id);
    assert_int_equal(intern(&t), id);
    assert_int_equal(mt_trace_id(t.frames, t.n, t.hash, 0, 1), id);
}

static void trace_without_frames(void **state)
{
    (void)state;
    trace t = {.n = 0, .hash = off_grow_shard(mt_hash_frames(NULL, 0) ^ 0x1234)}; /* own trace */
    uint32_t id = intern(&t);
    assert_int_not_equal(id, MT_TRACE_OVERFLOW);
    assert_int_equal(find(&t), id);
    assert_int_equal(mt_trace_def_get(id)->nframes, 0);
}

/* A dlclose retires the traces with a frame in the code it unloaded
 * (mt_traces_retire): the same addresses seen again (another library at its
 * place) get a new id, found by both lookups from then on; the retired
 * trace stays defined and ready (its blocks are freed under it); a trace
 * with no frame there keeps its id; retiring again changes nothing. */
static void retired_traces_get_new_ids(void **state)
{
    (void)state;
    trace in = {.frames = {0x7000101, 0x7000202, 0x5000303}, .n = 3};
    trace edge = {.frames = {0x5000101, 0x70001ff}, .n = 2}; /* last byte of the range */
    trace out = {.frames = {0x5000101, 0x7000200}, .n = 2};  /* just past it */
    trace *all[] = {&in, &edge, &out};
    uint32_t id[3];
    for (int i = 0; i < 3; i++) {
        all[i]->hash = off_grow_shard(mt_hash_frames(all[i]->frames, all[i]->n));
        id[i] = intern(all[i]);
        assert_int_not_equal(id[i], MT_TRACE_OVERFLOW);
    }
    /* no build-id: never given back */
    const mt_code_range gone[] = {{.lo = 0x9000000, .hi = 0x9001000},
                                  {.lo = 0x7000000, .hi = 0x7000200}};
    mt_traces_retire(gone, 2);
    mt_traces_retire(gone, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(find(all[i]), MT_TRACE_OVERFLOW);
        uint32_t again = intern(all[i]);
        assert_true(again != MT_TRACE_OVERFLOW && again > id[i]);
        assert_true(defines(again, all[i]));
        assert_int_equal(find(all[i]), again);
        assert_int_equal(intern(all[i]), again);
        assert_true(mt_trace_ready(mt_trace_get(id[i])));
        assert_int_equal(mt_trace_def_get(id[i])->nframes, all[i]->n);
    }
    assert_int_equal(find(&out), id[2]);
    assert_int_equal(intern(&out), id[2]);
}

/* A retired trace is given back when the build its frames were taken in
 * is at its place again (its build-id's bytes where they were: here a
 * buffer of the test's), and not when another build is there.  A trace
 * given back is retired again at the next unload, though older than that
 * life's `since` (the retirement looks at the traces given back). */
static uint8_t g_build_id[20] = {0xb1, 0x1d, 0x1d, 7,  1,  2,  3,  4,  5,  6,
                                 7,    8,    9,    10, 11, 12, 13, 14, 15, 16};

static void retired_trace_given_back_to_its_build(void **state)
{
    (void)state;
    trace t = {.frames = {0x8000104, 0x5000202}, .n = 2};
    t.hash = off_grow_shard(mt_hash_frames(t.frames, t.n));
    /* loaded after the last dlclose: its traces from the count then on */
    mt_code_range gone = {.lo = 0x8000000,
                          .hi = 0x8001000,
                          .since = mt_trace_count(),
                          .id_at = (uint64_t)(uintptr_t)g_build_id,
                          .id_len = 20};
    memcpy(gone.id, g_build_id, 20);
    uint32_t id = intern(&t);
    assert_int_not_equal(id, MT_TRACE_OVERFLOW);
    for (int life = 0; life < 3; life++) { /* unloaded and loaded again, the same build */
        mt_traces_retire(&gone, 1);
        assert_int_equal(find(&t), MT_TRACE_OVERFLOW);
        gone.since = mt_trace_count(); /* the next life's: t is older, yet given back */
        assert_int_equal(intern(&t), id);
        assert_int_equal(find(&t), id);
    }
    mt_traces_retire(&gone, 1);
    g_build_id[0] ^= 1; /* another build at the place */
    uint32_t other = intern(&t);
    assert_true(other != MT_TRACE_OVERFLOW && other != id);
    assert_int_equal(find(&t), other);
}

/* Places with build-ids (buffers of the test's) for the tests below. */
static uint8_t g_build_p[20] = {0xa1, 1,  2,  3,  4,  5,  6,  7,  8,  9,
                                10,   11, 12, 13, 14, 15, 16, 17, 18, 19};
static uint8_t g_build_q[20] = {0xa2, 1,  2,  3,  4,  5,  6,  7,  8,  9,
                                10,   11, 12, 13, 14, 15, 16, 17, 18, 19};

static mt_code_range place_of(uint64_t lo, const uint8_t *id)
{
    mt_code_range r = {.lo = lo, .hi = lo + 0x1000, .since = 0};
    if (id) {
        r.id_at = (uint64_t)(uintptr_t)id;
        r.id_len = 20;
        memcpy(r.id, id, 20);
    }
    return r;
}

/* Two threads' dlcloses retiring at once: a trace given back is looked at
 * by both, as either may have unloaded its module.  One thread here: the
 * first retirement has read the traces given back (and is scanning), then
 * the second, which unloads the trace's module again, runs whole. */
static uint8_t g_build_c[20] = {0xc1, 1,  2,  3,  4,  5,  6,  7,  8,  9,
                                10,   11, 12, 13, 14, 15, 16, 17, 18, 19};

static void given_back_seen_by_concurrent_retirement(void **state)
{
    (void)state;
    trace t = {.frames = {0xc000104, 0x5000202}, .n = 2};
    t.hash = off_grow_shard(mt_hash_frames(t.frames, t.n));
    mt_code_range gone = place_of(0xc000000, g_build_c);
    gone.since = mt_trace_count();
    uint32_t id = intern(&t);
    assert_int_not_equal(id, MT_TRACE_OVERFLOW);
    mt_traces_retire(&gone, 1);
    assert_int_equal(intern(&t), id); /* its build back: given back */
    uint32_t back[MT_PLACES_GIVEN_BACK];
    bool all = false;
    assert_true(mt_places_read_given_back(back, &all) >= 1); /* the other retirement's */
    gone.since = mt_trace_count();                           /* t is older than this life */
    mt_traces_retire(&gone, 1);
    assert_int_equal(find(&t), MT_TRACE_OVERFLOW);
}

/* A trace with frames in two modules unloaded together is not given back
 * once the history of one of their places is forgotten (more places noted
 * since than are kept), even though the build of the other is back at its
 * place: a frame at a forgotten place cannot be told from one in code never
 * unloaded, and another build may be there now.  The other place's entry,
 * made just after, is still kept when the first is forgotten. */
static void forgotten_place_never_given_back(void **state)
{
    (void)state;
    trace t = {.frames = {0xa1000104, 0xa2000208, 0x5000202}, .n = 3};
    t.hash = off_grow_shard(mt_hash_frames(t.frames, t.n));
    uint32_t id = intern(&t);
    assert_int_not_equal(id, MT_TRACE_OVERFLOW);
    const mt_code_range gone[] = {place_of(0xa2000000, g_build_q), place_of(0xa1000000, g_build_p)};
    mt_traces_retire(gone, 2); /* Q's entry, then P's */
    assert_int_equal(find(&t), MT_TRACE_OVERFLOW);
    uint64_t at_q = 0xa2000208;
    assert_true(mt_places_same(id, &at_q, 1)); /* Q's history is kept */
    /* other places unloaded, one at a time, until Q's is forgotten */
    for (uint64_t k = 0; mt_places_same(id, &at_q, 1); k++) {
        assert_true(k < 200);
        mt_code_range other = place_of(0xb0000000 + k * 0x10000, NULL);
        mt_traces_retire(&other, 1);
    }
    g_build_q[0] ^= 1; /* another build at Q's place */
    uint32_t again = intern(&t);
    assert_true(again != MT_TRACE_OVERFLOW);
    assert_int_not_equal(again, id);
}

/* Equal hashes: the locked path compares frames and gives each its own
 * id; the lock-free one trusts the hash and may answer any of them
 * (table_trace_index.h: what it trusts), never a trace of another hash. */
static void equal_hashes_apart(void **state)
{
    (void)state;
    const uint64_t h = 0xfeedface00000003ull;
    trace a = {.frames = {0x201, 0x202, 0x203}, .n = 3, .hash = h};
    trace b = {.frames = {0x209, 0x202, 0x203}, .n = 3, .hash = h}; /* other frame0 */
    trace c = {.frames = {0x201, 0x202}, .n = 2, .hash = h};        /* other count */
    uint32_t ia = intern(&a), ib = intern(&b), ic = intern(&c);
    assert_true(ia && ib && ic);
    assert_true(ia != ib && ia != ic && ib != ic);
    const trace *all[] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        uint32_t f = find(all[i]);
        assert_true(f == ia || f == ib || f == ic);
    }
    assert_int_equal(intern(&b), ib);
    assert_true(defines(ia, &a) && defines(ib, &b) && defines(ic, &c));
}

/* Equal hash, count and innermost frame, different deeper frames: the
 * locked path still gives two ids; the lock-free lookup trusts the hash
 * and may answer either (table_trace_index.h: what it trusts), never another. */
static void equal_keys_apart_when_locked(void **state)
{
    (void)state;
    const uint64_t h = 0xfeedface00000005ull;
    trace a = {.frames = {0x301, 0x302, 0x303}, .n = 3, .hash = h};
    trace b = {.frames = {0x301, 0x302, 0x304}, .n = 3, .hash = h};
    uint32_t ia = intern(&a), ib = intern(&b);
    assert_true(ia && ib && ia != ib);
    assert_int_equal(intern(&a), ia);
    assert_int_equal(intern(&b), ib);
    uint32_t fa = find(&a), fb = find(&b);
    assert_true(fa == ia || fa == ib);
    assert_true(fb == ia || fb == ib);
}

/* --- many threads interning the same new traces ------------------------- */

#define NTHREADS 8
#define NTRACES 1000
#define ROUNDS 6

static trace g_traces[NTRACES];
static uint32_t g_ids[NTHREADS][NTRACES];
static pthread_barrier_t g_barrier;
static int g_round;

typedef struct {
    int index;
} worker_arg;

/* Interns every trace of the round, like the hooks do (lookup, then lock):
 * in even rounds all threads in the same order, so that they race for the
 * same new trace; in odd rounds half of them the other way round. */
static void *intern_worker(void *p)
{
    int me = ((worker_arg *)p)->index;
    bool backwards = g_round % 2 && me % 2;
    pthread_barrier_wait(&g_barrier);
    for (uint32_t k = 0; k < NTRACES; k++) {
        uint32_t i = backwards ? NTRACES - 1 - k : k;
        const trace *t = &g_traces[i];
        g_ids[me][i] = mt_trace_id(t->frames, t->n, t->hash, 0, 1);
    }
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void race_round(uint64_t salt)
{
    uint64_t rng = 77 + salt;
    for (uint32_t i = 0; i < NTRACES; i++)
        make_trace(&g_traces[i], &rng, salt);
    /* Every tenth trace differs from the previous one in its innermost
     * frame, and its hash only in bit 8: same shard, home slot and tag
     * (table_trace_index.h), so the lock-free lookup must tell the two apart by
     * the key in the counters' line. */
    for (uint32_t i = 1; i < NTRACES; i += 10) {
        g_traces[i] = g_traces[i - 1];
        g_traces[i].frames[0] ^= 0x10;
        g_traces[i].hash ^= 0x100;
    }
    pthread_t th[NTHREADS];
    worker_arg args[NTHREADS];
    assert_int_equal(pthread_barrier_init(&g_barrier, NULL, NTHREADS), 0);
    for (int k = 0; k < NTHREADS; k++) {
        args[k].index = k;
        assert_int_equal(pthread_create(&th[k], NULL, intern_worker, &args[k]), 0);
    }
    for (int k = 0; k < NTHREADS; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&g_barrier);

    static uint32_t sorted[NTRACES];
    for (uint32_t i = 0; i < NTRACES; i++) {
        uint32_t id = g_ids[0][i];
        assert_int_not_equal(id, MT_TRACE_OVERFLOW);
        for (int k = 1; k < NTHREADS; k++)
            assert_int_equal(g_ids[k][i], id);
        assert_true(defines(id, &g_traces[i]));
        assert_int_equal(find(&g_traces[i]), id);
        sorted[i] = id;
    }
    qsort(sorted, NTRACES, sizeof sorted[0], cmp_u32);
    for (uint32_t i = 1; i < NTRACES; i++)
        assert_true(sorted[i] != sorted[i - 1]);
}

static void threads_agree_on_ids(void **state)
{
    (void)state;
    uint32_t before = mt_trace_count();
    for (g_round = 0; g_round < ROUNDS; g_round++)
        race_round(16 + (uint64_t)g_round);
    /* One id per trace: no id was handed out twice for one trace. */
    assert_int_equal(mt_trace_count() - before, ROUNDS * NTRACES);
}

/* --- growth while readers probe ---------------------------------------- */

#define GROW_TRACES 6000u /* one shard: its index grows to 16384 slots */
#define NREADERS 3

static trace g_grow[GROW_TRACES];
static uint32_t g_grow_ids[GROW_TRACES];
static _Atomic uint32_t g_grow_done; /* g_grow_ids[0 .. done) are set */
static _Atomic uint64_t g_reader_lookups;

typedef struct {
    int index;
    uint32_t wrong; /* a found id that was not the trace's */
    uint32_t missed;
} reader_arg;

static void *grow_reader(void *p)
{
    reader_arg *a = p;
    uint64_t rng = 1234567ull * (uint64_t)(a->index + 1);
    uint64_t lookups = 0;
    for (;;) {
        uint32_t done = atomic_load_explicit(&g_grow_done, memory_order_acquire);
        if (done == GROW_TRACES)
            break;
        /* A trace interned before we looked must be found, exactly. */
        if (done) {
            uint32_t i = (uint32_t)(test_xorshift(&rng) % done);
            uint32_t id = find(&g_grow[i]);
            a->missed += id == MT_TRACE_OVERFLOW;
            a->wrong += id != MT_TRACE_OVERFLOW && id != g_grow_ids[i];
        }
        /* One being interned now may be found or not, but only as itself. */
        uint32_t next = done + (uint32_t)(test_xorshift(&rng) % 4);
        if (next < GROW_TRACES) {
            uint32_t id = find(&g_grow[next]);
            a->wrong += id != MT_TRACE_OVERFLOW && !defines(id, &g_grow[next]);
        }
        lookups += 2;
    }
    atomic_fetch_add_explicit(&g_reader_lookups, lookups, memory_order_relaxed);
    return NULL;
}

static void index_grows_under_readers(void **state)
{
    (void)state;
    uint64_t rng = 4242;
    uint64_t expect_bytes = 0;
    for (uint32_t i = 0; i < GROW_TRACES; i++) {
        make_trace(&g_grow[i], &rng, 3);
        g_grow[i].hash = (g_grow[i].hash & ~(uint64_t)(MT_TRACE_SHARDS - 1)) | GROW_SHARD;
        expect_bytes += sizeof(mt_trace) + sizeof(mt_trace_def) + g_grow[i].n * sizeof(uint64_t);
    }
    assert_int_equal(mt_tidx_mask(atomic_load(&mt_trace_index[GROW_SHARD])), 0); /* unused */
    uint64_t before = mt_os_bytes();

    pthread_t th[NREADERS];
    reader_arg args[NREADERS];
    for (int k = 0; k < NREADERS; k++) {
        args[k] = (reader_arg){.index = k};
        assert_int_equal(pthread_create(&th[k], NULL, grow_reader, &args[k]), 0);
    }
    for (uint32_t i = 0; i < GROW_TRACES; i++) {
        uint32_t id = mt_trace_id(g_grow[i].frames, g_grow[i].n, g_grow[i].hash, 0, 1);
        assert_int_not_equal(id, MT_TRACE_OVERFLOW);
        g_grow_ids[i] = id;
        atomic_store_explicit(&g_grow_done, i + 1, memory_order_release);
    }
    for (int k = 0; k < NREADERS; k++) {
        pthread_join(th[k], NULL);
        assert_int_equal(args[k].wrong, 0);
        assert_int_equal(args[k].missed, 0);
    }
    for (uint32_t i = 0; i < GROW_TRACES; i++) {
        assert_true(defines(g_grow_ids[i], &g_grow[i]));
        assert_int_equal(find(&g_grow[i]), g_grow_ids[i]);
    }
    /* 6000 traces at most half full: 16384 slots, after 512 .. 8192.  The
     * replaced arrays are kept (a reader may still probe them) and counted,
     * as whole pages of the arena the shards share: to within a page. */
    uint32_t cap = mt_tidx_mask(atomic_load(&mt_trace_index[GROW_SHARD])) + 1;
    assert_int_equal(cap, 16384);
    for (uint32_t c = 512; c <= cap; c *= 2)
        expect_bytes += c * sizeof(uint32_t);
    uint64_t added = mt_os_bytes() - before, page = mt_os_whole_pages(1);
    assert_in_range(added, expect_bytes - page + 1, expect_bytes + page - 1);
    print_message("readers: %llu lookups during growth\n",
                  (unsigned long long)atomic_load(&g_reader_lookups));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_trace_is_not_found),
        cmocka_unit_test(trace_without_frames),
        cmocka_unit_test(retired_traces_get_new_ids),
        cmocka_unit_test(retired_trace_given_back_to_its_build),
        cmocka_unit_test(given_back_seen_by_concurrent_retirement),
        cmocka_unit_test(forgotten_place_never_given_back),
        cmocka_unit_test(equal_hashes_apart),
        cmocka_unit_test(equal_keys_apart_when_locked),
        cmocka_unit_test(threads_agree_on_ids),
        cmocka_unit_test(index_grows_under_readers),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
