/* test_wrapper_shape.c -- the shape rule for allocator wrappers
 * (src/tui/model/wrapper_shape.h) on made-up traces: a custom-named wrapper
 * with many callers is skipped; a leaking function called from one site is
 * kept, and so is one that allocates its own fixed-size object from many
 * sites; a user's "!name" keeps a wrapper; stripped wrappers (unnamed
 * frames) are skipped, both by their callers and under a named allocator
 * of their library; wrappers of wrappers; the threshold itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_fixture.h"
#include "plumbing.h"
#include "wrapper_shape.h"

#define PROG 0x400000ull      /* the program: function i at PROG + i * 0x100 */
#define LIB 0x7f0000000000ull /* a stripped library, the same way */
#define AT(base, fn, off) ((base) + (uint64_t)(fn)*0x100 + (off))

enum { MY_POOL_GET, PARSE_A, MAIN = PARSE_A + 8, LEAKY_STORE, MAIN_LOOP, REMEMBER, POOL_ZEROED };
static const char *const prog_names[] = {
    "my_pool_get", "parse_a", "parse_b", "parse_c",     "parse_d",   "parse_e",  "parse_f",
    "parse_g",     "parse_h", "main",    "leaky_store", "main_loop", "remember", "pool_zeroed"};
/* In LIB: 0 unnamed (calls malloc), 1 "sqlite3Malloc", 2 unnamed (many callers), 3.. unnamed. */
enum { LIB_INNER, LIB_MALLOC, LIB_WIDE, LIB_CALLER };

/* The fake symbolizer: names from the tables above; LIB has only sqlite3Malloc. */
static unsigned symbolize(void *ctx, const mt_module_info *m, int pid, mt_frame *f, unsigned max)
{
    (void)ctx;
    (void)pid;
    (void)max;
    uint64_t fn = (f->address - m->start) / 0x100;
    if (m->start == PROG && fn < sizeof prog_names / sizeof prog_names[0])
        f->function = prog_names[fn];
    else if (m->start == LIB && fn == LIB_MALLOC)
        f->function = "sqlite3Malloc";
    else
        f->unresolved = "no symbols";
    return 1;
}

typedef struct world {
    mt_modules mods;
    mt_defs defs;
    mt_snapshot *snap;
    mt_plumbing skip;
    mt_addr_set wrappers;
    mt_locator loc;
} world;

static void add_module(mt_modules *m, uint64_t start, const char *path)
{
    mt_module_info *o = &m->items[m->count++];
    memset(o, 0, sizeof *o);
    o->start = o->bias = start;
    o->end = start + 0x100000;
    strcpy(o->path, path);
}

/* traces[i][0..] (0-terminated, innermost first), each allocating sizes[i]
 * bytes once; skip_env as MEMTOP_SKIP_FUNCS.  Runs the shape rule. */
static void world_make(world *w, const uint64_t traces[][8], const uint64_t *sizes, size_t n,
                       const char *skip_env)
{
    mt_err err;
    mt_modules_init(&w->mods);
    w->mods.items = calloc(2, sizeof *w->mods.items);
    w->mods.cap = 2;
    add_module(&w->mods, PROG, "/usr/bin/prog");
    add_module(&w->mods, LIB, "/usr/lib/libstripped.so");
    assert_int_equal(mt_modules_reindex(&w->mods, &err), MT_OK);
    mt_defs_init(&w->defs);
    w->snap = fx_snap(n, 1.0);
    for (size_t i = 0; i < n; i++) {
        mt_def_info info = {0};
        while (info.nframes < 8 && traces[i][info.nframes])
            info.nframes++;
        assert_int_equal(mt_defs_push(&w->defs, &info, traces[i], &err), MT_OK);
        fx_trace(w->snap, i, 1, sizes[i], 0, 0);
    }
    assert_true(mt_plumbing_init(&w->skip, skip_env));
    w->loc = (mt_locator){&w->mods, symbolize, NULL, &w->skip, NULL, 0};
    mt_addr_set_init(&w->wrappers);
    assert_int_equal(mt_wrapper_shape(&w->loc, &w->defs, w->snap, &w->wrappers), 0);
    w->loc.wrappers = &w->wrappers;
}

static void world_free(world *w)
{
    mt_addr_set_free(&w->wrappers);
    mt_plumbing_free(&w->skip);
    fx_snap_free(w->snap);
    mt_defs_free(&w->defs);
    mt_modules_free(&w->mods);
}

/* The location of trace id: its function, or "LIB+0x<offset>" when unnamed. */
static const char *where(const world *w, uint32_t id, char *buf, size_t n)
{
    unsigned nf = 0;
    const uint64_t *frames = mt_defs_frames(&w->defs, id, &nf);
    mt_frame f;
    mt_trace_location(&w->loc, frames, nf, &f);
    if (f.function)
        return f.function;
    snprintf(buf, n, "LIB+0x%llx", (unsigned long long)f.offset);
    return buf;
}

#define assert_where(w, id, want)                                                                  \
    do {                                                                                           \
        char b_[64];                                                                               \
        assert_string_equal(where((w), (id), b_, sizeof b_), (want));                              \
    } while (0)

/* my_pool_get(size) called by parse_a..parse_e with their own sizes: each
 * trace's location is its caller, and my_pool_get is in the set. */
static void test_custom_wrapper_skipped(void **state)
{
    (void)state;
    uint64_t tr[5][8], sizes[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t[8] = {AT(PROG, MY_POOL_GET, 0x10), AT(PROG, PARSE_A + i, 0x20),
                         AT(PROG, MAIN, 0x30)};
        memcpy(tr[i], t, sizeof t);
        sizes[i] = 32 + 16 * (uint64_t)i;
    }
    world w;
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 5, NULL);
    assert_true(mt_addr_set_has(&w.wrappers, AT(PROG, MY_POOL_GET, 0x10)));
    assert_where(&w, 0, "parse_a");
    assert_where(&w, 4, "parse_e");
    world_free(&w);
}

/* leaky_store called from one site (main_loop) is the location, next to
 * the wrapper traces of the previous case; so is remember(), called from
 * five sites but always allocating the same 48-byte node: its size does
 * not depend on the caller. */
static void test_leaking_function_kept(void **state)
{
    (void)state;
    uint64_t tr[6][8] = {
        {AT(PROG, LEAKY_STORE, 0x10), AT(PROG, MAIN_LOOP, 0x20), AT(PROG, MAIN, 0x30)}};
    uint64_t sizes[6] = {4096};
    for (int i = 0; i < 5; i++) {
        uint64_t t[8] = {AT(PROG, REMEMBER, 0x10), AT(PROG, PARSE_A + i, 0x40)};
        memcpy(tr[1 + i], t, sizeof t);
        sizes[1 + i] = 48;
    }
    world w;
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 6, NULL);
    assert_int_equal(w.wrappers.n, 0);
    assert_where(&w, 0, "leaky_store");
    assert_where(&w, 3, "remember");
    world_free(&w);
}

/* MT_SHAPE_MIN_CALLERS - 1 callers are not enough; MT_SHAPE_MIN_CALLERS are. */
static void test_threshold(void **state)
{
    (void)state;
    for (int k = MT_SHAPE_MIN_CALLERS - 1; k <= MT_SHAPE_MIN_CALLERS; k++) {
        uint64_t tr[8][8] = {{0}}, sizes[8];
        for (int i = 0; i < k; i++) {
            tr[i][0] = AT(PROG, MY_POOL_GET, 0x10);
            tr[i][1] = AT(PROG, PARSE_A + i, 0x20);
            sizes[i] = 100 + (uint64_t)i;
        }
        world w;
        world_make(&w, (const uint64_t(*)[8])tr, sizes, (size_t)k, NULL);
        assert_where(&w, 0, k < MT_SHAPE_MIN_CALLERS ? "my_pool_get" : "parse_a");
        world_free(&w);
    }
}

/* MEMTOP_SKIP_FUNCS="!my_pool_get": the wrapper of the first case is kept. */
static void test_user_keeps(void **state)
{
    (void)state;
    uint64_t tr[5][8], sizes[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t[8] = {AT(PROG, MY_POOL_GET, 0x10), AT(PROG, PARSE_A + i, 0x20)};
        memcpy(tr[i], t, sizeof t);
        sizes[i] = 32 + 16 * (uint64_t)i;
    }
    world w;
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 5, "zfoo, !my_pool_get");
    assert_false(mt_addr_set_has(&w.wrappers, AT(PROG, MY_POOL_GET, 0x10)));
    assert_where(&w, 2, "my_pool_get");
    world_free(&w);
}

/* A stripped library as Debian's libsqlite3: an unnamed frame calls malloc
 * under the exported sqlite3Malloc (the library's allocator inside: skipped),
 * which an unnamed wrapper (LIB_WIDE) calls for five unnamed callers with
 * their own sizes (skipped by shape): each location is the unnamed caller. */
static void test_stripped_wrappers(void **state)
{
    (void)state;
    uint64_t tr[5][8], sizes[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t[8] = {AT(LIB, LIB_INNER, 0x3), AT(LIB, LIB_MALLOC, 0x8f),
                         AT(LIB, LIB_WIDE, 0x6b), AT(LIB, LIB_CALLER + i, 0x34),
                         AT(PROG, MAIN, 0x30)};
        memcpy(tr[i], t, sizeof t);
        sizes[i] = 1000 * (uint64_t)(i + 1);
    }
    world w;
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 5, NULL);
    assert_true(mt_addr_set_has(&w.wrappers, AT(LIB, LIB_INNER, 0x3)));
    assert_true(mt_addr_set_has(&w.wrappers, AT(LIB, LIB_WIDE, 0x6b)));
    assert_where(&w, 0, "LIB+0x334");
    assert_where(&w, 4, "LIB+0x734");
    world_free(&w);
}

/* A wrapper of a wrapper: parse_a..e call pool_zeroed(), which calls
 * my_pool_get(), and also call my_pool_get() directly; both are wrappers
 * (the second round finds pool_zeroed) and every location is a parse_*.
 * With only the pool_zeroed traces, my_pool_get has one caller and stays
 * the location: it looks like a leaking function called from one site. */
static void test_wrapper_of_wrapper(void **state)
{
    (void)state;
    uint64_t tr[10][8], sizes[10];
    for (int i = 0; i < 5; i++) {
        uint64_t a[8] = {AT(PROG, MY_POOL_GET, 0x10), AT(PROG, POOL_ZEROED, 0x20),
                         AT(PROG, PARSE_A + i, 0x30)};
        uint64_t b[8] = {AT(PROG, MY_POOL_GET, 0x10), AT(PROG, PARSE_A + i, 0x50)};
        memcpy(tr[i], a, sizeof a);
        memcpy(tr[5 + i], b, sizeof b);
        sizes[i] = sizes[5 + i] = 64 * (uint64_t)(i + 1);
    }
    world w;
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 10, NULL);
    assert_where(&w, 1, "parse_b");
    assert_where(&w, 6, "parse_b");
    world_free(&w);
    world_make(&w, (const uint64_t(*)[8])tr, sizes, 5, NULL);
    assert_where(&w, 1, "my_pool_get");
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_wrapper_skipped),
        cmocka_unit_test(test_leaking_function_kept),
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_user_keeps),
        cmocka_unit_test(test_stripped_wrappers),
        cmocka_unit_test(test_wrapper_of_wrapper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
