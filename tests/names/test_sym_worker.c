/* test_sym_worker.c -- unit tests of the background symbolizer
 * (src/tui/names/sym_worker.h) against this test binary, built -O0 -g: a
 * lookup first answers module+offset without waiting, then exactly what the
 * synchronous mt_trace_location / mt_locate_all answer.  Expected answers
 * are computed before a worker starts, so two libdw sessions never run at
 * once.  SW_WAIT_FACTOR (default 1) stretches the bounded waits for slow
 * runs (valgrind). */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "calltree_path.h"
#include "sym_intern.h"
#include "sym_queue.h"
#include "sym_table.h"
#include "sym_worker.h"
#include "symbols.h"

#define FAKE_PATH "/nonexistent/sw-fake.so"
#define FAKE_START 0x1000u
#define FAKE_END 0x2000u
#define NBULK 3000u
#define NSHARED 200u

__attribute__((noinline)) int sw_marker(int x)
{
    volatile int y = x * 3;
    return y + 1;
}

__attribute__((noinline)) int sw_plumbing(int x)
{
    volatile int y = x ^ 0x55;
    return sw_marker(y) + 2;
}

static uint64_t fn_addr(int (*fn)(int))
{
    return (uint64_t)(uintptr_t)fn + 4; /* inside the function */
}

/* The test binary as a module. */
typedef struct exe_info {
    mt_module_info mod;
    uint64_t text_start, text_end; /* its executable segment */
} exe_info;

static int find_exe(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    exe_info *x = arg;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        if (ph->p_flags & PF_X) {
            x->text_start = a;
            x->text_end = b;
        }
    }
    x->mod.bias = info->dlpi_addr;
    x->mod.start = lo;
    x->mod.end = hi;
    x->mod.load_seq = 1;
    return 1; /* the first object is the executable */
}

/* items[0..n-1] as an mt_modules, with the index mt_modules_find needs. */
static void build_mods(mt_modules *m, const mt_module_info *items, size_t n)
{
    mt_modules_init(m);
    m->items = calloc(n, sizeof *m->items);
    m->order = calloc(n, sizeof *m->order);
    m->max_end = calloc(n, sizeof *m->max_end);
    assert_true(m->items && m->order && m->max_end);
    memcpy(m->items, items, n * sizeof *items);
    m->count = m->cap = n;
    for (size_t i = 0; i < n; i++) { /* insertion sort by start */
        size_t k = i;
        for (; k > 0 && items[m->order[k - 1]].start > items[i].start; k--)
            m->order[k] = m->order[k - 1];
        m->order[k] = i;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t end = items[m->order[k]].end;
        m->max_end[k] = k && m->max_end[k - 1] > end ? m->max_end[k - 1] : end;
    }
}

typedef struct fixture {
    exe_info exe;
    mt_modules mods;      /* the executable */
    mt_modules mods_fake; /* the executable and FAKE_PATH */
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    dl_iterate_phdr(find_exe, &fx->exe);
    ssize_t len = readlink("/proc/self/exe", fx->exe.mod.path, sizeof fx->exe.mod.path - 1);
    assert_true(len > 0);
    assert_true(fx->exe.text_start < fx->exe.text_end);
    build_mods(&fx->mods, &fx->exe.mod, 1);
    mt_module_info two[2] = {fx->exe.mod};
    two[1].bias = FAKE_START;
    two[1].start = FAKE_START;
    two[1].end = FAKE_END;
    two[1].load_seq = 2;
    strcpy(two[1].path, FAKE_PATH);
    build_mods(&fx->mods_fake, two, 2);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    mt_modules_free(&fx->mods);
    mt_modules_free(&fx->mods_fake);
    free(fx);
    return 0;
}

/* ---- helpers ---- */

static void assert_same_str(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_same_frame(const mt_frame *got, const mt_frame *want)
{
    assert_int_equal(got->address, want->address);
    assert_same_str(got->module, want->module);
    assert_int_equal(got->offset, want->offset);
    assert_same_str(got->function, want->function);
    assert_same_str(got->file, want->file);
    assert_int_equal(got->line, want->line);
    assert_int_equal(got->inlined, want->inlined);
    assert_same_str(got->unresolved, want->unresolved);
}

static mt_symworker *start(bool enabled, const char *skip)
{
    char err[200] = "";
    mt_symworker *w = mt_symworker_start(enabled, skip, err, sizeof err);
    assert_non_null(w);
    assert_string_equal(err, "");
    return w;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double deadline(double secs)
{
    const char *f = getenv("SW_WAIT_FACTOR");
    double factor = f && atof(f) > 0 ? atof(f) : 1.0;
    return now_s() + secs * factor;
}

/* Sleep until the generation moves away from gen (at most ~1 ms). */
static void nap(const mt_symworker *w, uint64_t gen)
{
    struct timespec ts = {0, 100 * 1000};
    for (int i = 0; i < 10 && mt_symworker_generation(w) == gen; i++)
        nanosleep(&ts, NULL);
}

/* The final location of a trace, polling until it is there. */
static void wait_location(mt_symworker *w, uint32_t id, const uint64_t *frames, unsigned n,
                          mt_frame *out)
{
    double end = deadline(10);
    for (;;) {
        uint64_t gen = mt_symworker_generation(w);
        if (mt_symworker_location(w, id, frames, n, out))
            return;
        assert_true(now_s() < end);
        nap(w, gen);
    }
}

static unsigned wait_frames_at(mt_symworker *w, uint64_t addr, uint32_t trace, mt_frame *out,
                               unsigned max)
{
    double end = deadline(10);
    for (;;) {
        uint64_t gen = mt_symworker_generation(w);
        bool final = false;
        unsigned k = mt_symworker_frames(w, addr, trace, out, max, &final);
        assert_true(k >= 1 && k <= max);
        if (final)
            return k;
        assert_true(now_s() < end);
        nap(w, gen);
    }
}

static unsigned wait_frames(mt_symworker *w, uint64_t addr, mt_frame *out, unsigned max)
{
    return wait_frames_at(w, addr, 0, out, max);
}

static void assert_same_chain(mt_symworker *w, uint64_t addr, const mt_frame *want, unsigned k)
{
    mt_frame got[MT_MAX_CHAIN];
    assert_int_equal(wait_frames(w, addr, got, MT_MAX_CHAIN), k);
    for (unsigned j = 0; j < k; j++)
        assert_same_frame(&got[j], &want[j]);
}

/* ---- tests ---- */

/* First module+offset at once, later the synchronous answer. */
static void test_location_async(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, NULL), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    uint64_t addr = fn_addr(sw_marker);
    mt_frame want, want_chain[MT_MAX_CHAIN];
    mt_trace_location(&loc, &addr, 1, &want);
    unsigned k = mt_locate_all(&loc, addr, want_chain, MT_MAX_CHAIN);
    assert_string_equal(want.function, "sw_marker");
    assert_non_null(strstr(want.file, "test_sym_worker.c"));
    assert_true(want.line > 0);

    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    uint64_t gen0 = mt_symworker_generation(w);
    mt_frame fr;
    assert_false(mt_symworker_location(w, 1, &addr, 1, &fr));
    assert_int_equal(fr.address, addr);
    assert_string_equal(fr.module, fx->exe.mod.path);
    assert_int_equal(fr.offset, addr - fx->exe.mod.bias);
    assert_null(fr.function);
    assert_null(fr.file);

    wait_location(w, 1, &addr, 1, &fr);
    assert_true(mt_symworker_generation(w) > gen0);
    assert_same_frame(&fr, &want);
    assert_same_chain(w, addr, want_chain, k);

    mt_frame one;
    bool final = false;
    assert_int_equal(mt_symworker_frames(w, addr, 0, &one, 1, &final), 1); /* max is honoured */
    assert_true(final);
    assert_same_frame(&one, &want_chain[0]);
    assert_int_equal(mt_symworker_pending(w), 0);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* The executable unloaded (its unload stamped: trace ids below 10 were
 * taken while it was there) and another module loaded at its place: a
 * trace's frames are named from the module that held them then, the
 * answers kept apart although the address is the same (sym_lookup.c
 * frames_entry), and the default answer stays the loaded module's. */
static void test_frames_at_trace(void **state)
{
    fixture *fx = *state;
    mt_module_info two[2] = {fx->exe.mod, fx->exe.mod};
    two[0].unload_seq = 1;
    two[0].unload_trace = 10;
    two[1].load_seq = 2;
    strcpy(two[1].path, FAKE_PATH);
    mt_modules mods;
    build_mods(&mods, two, 2);
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &mods);
    uint64_t addr = fn_addr(sw_marker);
    mt_frame fr[MT_MAX_CHAIN];
    for (int round = 0; round < 2; round++) { /* the second from what was kept */
        wait_frames_at(w, addr, 0, fr, MT_MAX_CHAIN);
        assert_string_equal(fr[0].module, FAKE_PATH);
        wait_frames_at(w, addr, 5, fr, MT_MAX_CHAIN);
        assert_string_equal(fr[0].module, fx->exe.mod.path);
        assert_non_null(fr[0].function);
        assert_string_equal(fr[0].function, "sw_marker");
        wait_frames_at(w, addr, 10, fr, MT_MAX_CHAIN); /* taken after the unload */
        assert_string_equal(fr[0].module, FAKE_PATH);
    }
    wait_location(w, 5, &addr, 1, fr);
    assert_string_equal(fr[0].function, "sw_marker");
    wait_location(w, 12, &addr, 1, fr);
    assert_string_equal(fr[0].module, FAKE_PATH);
    mt_symworker_stop(w);
    mt_modules_free(&mods);
}

/* The module map changes under an answer: the executable, loaded, named
 * sw_marker at addr; then it is unloaded (stamp 10) and another module
 * loaded at its place.  The address alone (trace 0) now names the other
 * module -- the answer made with the first map is made again -- and a
 * frame of trace 5 still the executable's sw_marker. */
static void test_frames_module_replaced(void **state)
{
    fixture *fx = *state;
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    uint64_t addr = fn_addr(sw_marker);
    mt_frame fr[MT_MAX_CHAIN];
    wait_frames_at(w, addr, 0, fr, MT_MAX_CHAIN);
    assert_string_equal(fr[0].function, "sw_marker");
    mt_module_info two[2] = {fx->exe.mod, fx->exe.mod};
    two[0].unload_seq = 1;
    two[0].unload_trace = 10;
    two[1].load_seq = 2;
    strcpy(two[1].path, FAKE_PATH);
    mt_modules mods;
    build_mods(&mods, two, 2);
    mt_symworker_set_modules(w, &mods);
    wait_frames_at(w, addr, 0, fr, MT_MAX_CHAIN);
    assert_string_equal(fr[0].module, FAKE_PATH);
    wait_frames_at(w, addr, 5, fr, MT_MAX_CHAIN);
    assert_string_equal(fr[0].function, "sw_marker");
    mt_symworker_stop(w);
    mt_modules_free(&mods);
}

/* Three lives at one place: the executable unloaded at trace 10, again
 * at trace 20 (a record each), and another module loaded there now.  The
 * frames of trace 5 and of trace 12 are named from the first and second
 * lives, neither the default: asked for in turn, as a redraw asks, both
 * are answered (each once replaced the other's entry, never answered). */
static void test_frames_at_two_lives(void **state)
{
    fixture *fx = *state;
    mt_module_info three[3] = {fx->exe.mod, fx->exe.mod, fx->exe.mod};
    three[0].unload_seq = 1;
    three[0].unload_trace = 10;
    three[1].load_seq = 2;
    three[1].unload_seq = 3;
    three[1].unload_trace = 20;
    three[2].load_seq = 4;
    strcpy(three[2].path, FAKE_PATH);
    mt_modules mods;
    build_mods(&mods, three, 3);
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &mods);
    uint64_t addr = fn_addr(sw_marker);
    mt_frame a[MT_MAX_CHAIN], b[MT_MAX_CHAIN];
    double end = deadline(10);
    for (;;) {
        uint64_t gen = mt_symworker_generation(w);
        bool fa = false, fb = false;
        mt_symworker_frames(w, addr, 5, a, MT_MAX_CHAIN, &fa);
        mt_symworker_frames(w, addr, 12, b, MT_MAX_CHAIN, &fb);
        if (fa && fb)
            break;
        assert_true(now_s() < end); /* "never answered" */
        nap(w, gen);
    }
    assert_non_null(a[0].function);
    assert_string_equal(a[0].function, "sw_marker");
    assert_non_null(b[0].function);
    assert_string_equal(b[0].function, "sw_marker");
    mt_symworker_stop(w);
    mt_modules_free(&mods);
}

/* A plugin rebuilt and loaded again at its place: the executable's
 * record unloaded (stamp 10), and a record of the same path loaded there
 * with a bias that puts sw_plumbing's code at sw_marker's address.  The
 * address alone (trace 0) now names sw_plumbing: the answer made with the
 * first life (sw_marker), whose path is the same, is made again. */
static void test_frames_same_path_reloaded(void **state)
{
    fixture *fx = *state;
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    uint64_t addr = fn_addr(sw_marker);
    mt_frame fr[MT_MAX_CHAIN];
    wait_frames_at(w, addr, 0, fr, MT_MAX_CHAIN);
    assert_string_equal(fr[0].function, "sw_marker");
    uint64_t shift = addr - fn_addr(sw_plumbing); /* wraps if negative: added back */
    mt_module_info two[2] = {fx->exe.mod, fx->exe.mod};
    two[0].unload_seq = 1;
    two[0].unload_trace = 10;
    two[1].load_seq = 2;
    two[1].bias += shift;
    two[1].start += shift;
    two[1].end += shift;
    mt_modules mods;
    build_mods(&mods, two, 2);
    mt_symworker_set_modules(w, &mods);
    wait_frames_at(w, addr, 0, fr, MT_MAX_CHAIN);
    assert_non_null(fr[0].function);
    assert_string_equal(fr[0].function, "sw_plumbing");
    wait_frames_at(w, addr, 5, fr, MT_MAX_CHAIN); /* the first life's trace */
    assert_string_equal(fr[0].function, "sw_marker");
    mt_symworker_stop(w);
    mt_modules_free(&mods);
}

/* MEMTOP_SKIP_FUNCS: the location skips the plumbing frame, like mt_trace_location. */
static void test_plumbing_skip(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, "sw_plumbing"), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    uint64_t trace[2] = {fn_addr(sw_plumbing), fn_addr(sw_marker)};
    mt_frame want;
    mt_trace_location(&loc, trace, 2, &want);
    assert_string_equal(want.function, "sw_marker");

    mt_symworker *w = start(true, "sw_plumbing");
    mt_symworker_set_modules(w, &fx->mods);
    mt_frame fr;
    assert_false(mt_symworker_location(w, 5, trace, 2, &fr));
    assert_int_equal(fr.address, trace[0]); /* what is known now: frames[0] */
    wait_location(w, 5, trace, 2, &fr);
    assert_same_frame(&fr, &want);

    /* The same trace id with other frames is answered for those frames. */
    uint64_t other = fn_addr(sw_plumbing);
    mt_trace_location(&loc, &other, 1, &want); /* all plumbing: its one frame */
    assert_string_equal(want.function, "sw_plumbing");
    wait_location(w, 5, &other, 1, &fr);
    assert_same_frame(&fr, &want);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* Every frame plumbing (a trace cut short inside a library): the location
 * is the outermost frame, the nearest to the code that asked, not the
 * innermost one (the allocator itself), for the worker and the call tree as
 * for mt_trace_location. */
static void test_all_plumbing(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, "sw_plumbing,sw_marker"), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    uint64_t trace[2] = {fn_addr(sw_marker), fn_addr(sw_plumbing)}; /* sw_plumbing calls */
    mt_frame want;
    mt_trace_location(&loc, trace, 2, &want);
    assert_string_equal(want.function, "sw_plumbing");

    static mt_ct_pathbuf pb;
    const mt_ct_frame *path;
    assert_int_equal(mt_ct_path_make(&pb, trace, 2, mt_ct_locate_chain, &loc, loc.skip, &path), 1);
    assert_string_equal(path[0].name, "sw_plumbing");

    mt_symworker *w = start(true, "sw_plumbing,sw_marker");
    mt_symworker_set_modules(w, &fx->mods);
    mt_frame fr;
    wait_location(w, 6, trace, 2, &fr);
    assert_same_frame(&fr, &want);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* mt_symworker_callers: nothing while the location is not final, then, as
 * the worker names the callers, exactly mt_trace_callers' answer. */
static void test_callers(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, "sw_plumbing"), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    uint64_t trace[3] = {fn_addr(sw_plumbing), fn_addr(sw_marker), fn_addr(sw_marker)};
    char want[MT_CALLER_DEPTH][MT_CALLER_MAX], got[MT_CALLER_DEPTH][MT_CALLER_MAX];
    assert_int_equal(mt_trace_callers(&loc, trace, 3, want, MT_CALLER_DEPTH), 1);
    assert_non_null(strstr(want[0], "sw_marker ("));

    mt_symworker *w = start(true, "sw_plumbing");
    mt_symworker_set_modules(w, &fx->mods);
    assert_int_equal(mt_symworker_callers(w, 7, trace, 3, got, MT_CALLER_DEPTH), 0);
    double end = deadline(10);
    for (;;) {
        uint64_t gen = mt_symworker_generation(w);
        unsigned k = mt_symworker_callers(w, 7, trace, 3, got, MT_CALLER_DEPTH);
        if (k == 1 && strcmp(got[0], want[0]) == 0)
            break;
        assert_true(now_s() < end);
        nap(w, gen);
    }
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* A fake shape-rule job: sw_plumbing's address is a wrapper; it records
 * what the worker's locator told it, and that it was freed. */
typedef struct shape_job {
    uint64_t addr;
    int *freed;
    bool named; /* the locator named addr (the worker symbolizes for the job) */
} shape_job;

static int shape_run(void *job, const mt_locator *loc, mt_addr_set *out)
{
    shape_job *j = job;
    mt_frame f;
    mt_locate(loc, j->addr, &f);
    j->named = f.function && strcmp(f.function, "sw_plumbing") == 0;
    return mt_addr_set_add(out, j->addr) ? 0 : -1;
}

static void shape_free(void *job)
{
    shape_job *j = job;
    __atomic_add_fetch(j->freed, 1, __ATOMIC_RELEASE); /* read by the test's thread */
    assert_true(j->named);
}

static void shape_free_unrun(void *job)
{
    ++*((shape_job *)job)->freed;
}

/* mt_symworker_shape: the job runs on the worker's thread with its
 * symbolizer; from then on the location skips the wrapper, and a location
 * answered before is given again as not final until made again. */
static void test_shape_job(void **state)
{
    fixture *fx = *state;
    uint64_t trace[2] = {fn_addr(sw_plumbing), fn_addr(sw_marker)};
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    mt_frame fr;
    wait_location(w, 7, trace, 2, &fr);
    assert_string_equal(fr.function, "sw_plumbing");
    uint64_t wgen = mt_symworker_wrappers_gen(w);
    int freed = 0;
    shape_job *job = malloc(sizeof *job);
    *job = (shape_job){trace[0], &freed, false};
    mt_symworker_shape(w, shape_run, shape_free, job);
    double end = deadline(10);
    while (mt_symworker_wrappers_gen(w) == wgen) {
        assert_true(now_s() < end);
        nap(w, mt_symworker_generation(w));
    }
    assert_int_equal(freed, 1);
    wait_location(w, 7, trace, 2, &fr);
    assert_string_equal(fr.function, "sw_marker");

    /* The same wrappers found again: the answers made stay final. */
    wgen = mt_symworker_wrappers_gen(w);
    job = malloc(sizeof *job);
    *job = (shape_job){trace[0], &freed, false};
    mt_symworker_shape(w, shape_run, shape_free, job);
    end = deadline(10);
    while (__atomic_load_n(&freed, __ATOMIC_ACQUIRE) < 2 || mt_symworker_pending(w) != 0) {
        assert_true(now_s() < end);
        nap(w, mt_symworker_generation(w));
    }
    assert_int_equal(mt_symworker_wrappers_gen(w), wgen);
    assert_true(mt_symworker_location(w, 7, trace, 2, &fr));
    assert_string_equal(fr.function, "sw_marker");
    mt_symworker_stop(w);

    /* A job for no worker is freed at once. */
    shape_job idle = {trace[0], &freed, false};
    mt_symworker_shape(NULL, shape_run, shape_free_unrun, &idle);
    assert_int_equal(freed, 3);
}

/* --no-symbols: final at once, module + offset, as the synchronous locator. */
static void test_disabled(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, false, NULL), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    uint64_t trace[2] = {fn_addr(sw_plumbing), 0x10};
    mt_frame want;
    mt_trace_location(&loc, trace, 2, &want);

    mt_symworker *w = start(false, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    mt_frame fr;
    assert_true(mt_symworker_location(w, 1, trace, 2, &fr));
    assert_same_frame(&fr, &want);
    assert_string_equal(fr.module, fx->exe.mod.path);
    assert_null(fr.function);
    bool final = false;
    mt_frame chain[4];
    assert_int_equal(mt_symworker_frames(w, trace[0], 0, chain, 4, &final), 1);
    assert_true(final);
    assert_same_frame(&chain[0], &want);
    assert_true(mt_symworker_location(w, 2, NULL, 0, &fr)); /* n == 0 */
    assert_int_equal(fr.address, 0);
    assert_int_equal(mt_symworker_pending(w), 0);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* No module yet: no names; once set_modules brings the module, recomputed. */
static void test_unknown_module(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, "sw_plumbing"), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods_fake);
    uint64_t lone = FAKE_START + 0x10, trace[2] = {fn_addr(sw_plumbing), FAKE_START + 0x800};
    mt_frame want_trace, want_lone[MT_MAX_CHAIN];
    mt_trace_location(&loc, trace, 2, &want_trace);
    unsigned k = mt_locate_all(&loc, lone, want_lone, MT_MAX_CHAIN);
    assert_string_equal(want_trace.module, FAKE_PATH);
    assert_int_equal(want_trace.offset, 0x800);
    assert_null(want_trace.function);

    mt_symworker *w = start(true, "sw_plumbing");
    mt_symworker_set_modules(w, &fx->mods);
    mt_frame fr;
    wait_location(w, 1, &lone, 1, &fr);
    assert_int_equal(fr.address, lone);
    assert_null(fr.module);
    assert_null(fr.function);
    wait_location(w, 2, trace, 2, &fr); /* plumbing skipped to a frame with no module */
    assert_int_equal(fr.address, trace[1]);
    assert_null(fr.module);
    mt_frame chain[MT_MAX_CHAIN];
    assert_int_equal(wait_frames(w, lone, chain, MT_MAX_CHAIN), 1);
    assert_null(chain[0].module);

    uint64_t gen = mt_symworker_generation(w);
    mt_symworker_set_modules(w, &fx->mods_fake); /* dlopen */
    assert_true(mt_symworker_generation(w) > gen);
    wait_location(w, 2, trace, 2, &fr);
    assert_same_frame(&fr, &want_trace);
    assert_same_chain(w, lone, want_lone, k);
    gen = mt_symworker_generation(w);
    mt_symworker_set_modules(w, &fx->mods_fake); /* nothing changed: nothing happens */
    assert_int_equal(mt_symworker_generation(w), gen);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

static uint64_t bulk_addr(const fixture *fx, unsigned i)
{
    uint64_t span = fx->exe.text_end - fx->exe.text_start;
    return fx->exe.text_start + span * i / NBULK;
}

/* Far more distinct addresses than the queue holds: the queue stays
 * bounded, dropped requests come back with their next lookup, and every
 * answer equals the synchronous one. */
static void test_queue_overflow(void **state)
{
    fixture *fx = *state;
    assert_true(fx->exe.text_end - fx->exe.text_start >= NBULK);
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, NULL), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    mt_frame *want = calloc(NBULK, sizeof *want);
    assert_non_null(want);
    for (unsigned i = 0; i < NBULK; i++)
        mt_locate(&loc, bulk_addr(fx, i), &want[i]);

    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    bool *done = calloc(NBULK, sizeof *done);
    assert_non_null(done);
    unsigned left = NBULK;
    double end = deadline(60);
    while (left) {
        uint64_t gen = mt_symworker_generation(w);
        for (unsigned i = 0; i < NBULK; i++) {
            if (done[i])
                continue;
            mt_frame fr;
            bool final = false;
            assert_int_equal(mt_symworker_frames(w, bulk_addr(fx, i), 0, &fr, 1, &final), 1);
            assert_true(mt_symworker_pending(w) <= MT_SYMW_QUEUE_CAP + 1);
            if (final) {
                assert_same_frame(&fr, &want[i]);
                done[i] = true;
                left--;
            }
        }
        assert_true(now_s() < end);
        nap(w, gen);
    }
    mt_symworker_stop(w);
    free(done);
    free(want);
    mt_symbols_free(&sync);
}

/* Stop with the queue full and the worker busy: no hang, no leak. */
static void test_stop_pending(void **state)
{
    fixture *fx = *state;
    mt_symworker_stop(NULL);
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    for (unsigned i = 0; i < NBULK; i++) {
        uint64_t a = bulk_addr(fx, i);
        mt_frame fr;
        bool final;
        mt_symworker_frames(w, a, 0, &fr, 1, &final);
        mt_symworker_location(w, i, &a, 1, &fr);
    }
    mt_symworker_set_modules(w, &fx->mods_fake);
    mt_symworker_stop(w);
}

typedef struct shared_run {
    const fixture *fx;
    mt_symworker *w;
    const mt_frame *want; /* NSHARED locations */
    int swap_maps;        /* set_modules back and forth while looking up */
    int failures;
} shared_run;

static uint64_t shared_addr(const fixture *fx, unsigned i)
{
    return bulk_addr(fx, i * (NBULK / NSHARED));
}

/* One thread: every location of the shared set until all are final. */
static void *lookup_all(void *arg)
{
    shared_run *r = arg;
    bool done[NSHARED] = {false};
    unsigned left = NSHARED;
    double end = deadline(30);
    for (unsigned round = 0; left && now_s() < end; round++) {
        uint64_t gen = mt_symworker_generation(r->w);
        if (r->swap_maps)
            mt_symworker_set_modules(r->w, round % 2 ? &r->fx->mods_fake : &r->fx->mods);
        for (unsigned i = 0; i < NSHARED; i++) {
            uint64_t a = shared_addr(r->fx, i);
            mt_frame fr;
            if (done[i] || !mt_symworker_location(r->w, 100 + i, &a, 1, &fr))
                continue;
            const mt_frame *x = &r->want[i];
            bool same = fr.address == x->address && fr.line == x->line && fr.offset == x->offset &&
                        fr.module && x->module && strcmp(fr.module, x->module) == 0 &&
                        (fr.function == x->function ||
                         (fr.function && x->function && !strcmp(fr.function, x->function)));
            r->failures += !same;
            done[i] = true;
            left--;
        }
        (void)mt_symworker_pending(r->w);
        nap(r->w, gen);
    }
    r->failures += (int)left;
    return NULL;
}

/* Two threads look up the same traces while one swaps module maps. */
static void test_two_threads(void **state)
{
    fixture *fx = *state;
    mt_symbols sync;
    assert_int_equal(mt_symbols_init(&sync, true, NULL), 0);
    mt_locator loc = mt_symbols_locator(&sync, &fx->mods);
    mt_frame want[NSHARED];
    for (unsigned i = 0; i < NSHARED; i++) {
        uint64_t a = shared_addr(fx, i);
        mt_trace_location(&loc, &a, 1, &want[i]);
    }
    mt_symworker *w = start(true, NULL);
    mt_symworker_set_modules(w, &fx->mods);
    shared_run runs[2] = {{fx, w, want, 0, 0}, {fx, w, want, 1, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, lookup_all, &runs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(runs[0].failures, 0);
    assert_int_equal(runs[1].failures, 0);
    mt_symworker_stop(w);
    mt_symbols_free(&sync);
}

/* ---- the building blocks, deterministically ---- */

static mt_symw_entry *add_addr(mt_symw_table *t, uint64_t a)
{
    mt_symw_entry *e = mt_symw_table_add(t, MT_SYMW_FRAMES, a, &a, 1);
    assert_non_null(e);
    return e;
}

/* LIFO, de-duplication, the oldest dropped when full, re-requests move up. */
static void test_queue_order(void **state)
{
    (void)state;
    mt_symw_table t;
    mt_symw_table_init(&t);
    mt_symw_entry *e[11];
    for (unsigned i = 1; i <= 10; i++)
        e[i] = add_addr(&t, i);
    mt_symw_queue q;
    assert_true(mt_symw_queue_init(&q, 8)); /* re-pushed once older than 2 pushes */
    for (unsigned i = 1; i <= 10; i++)
        mt_symw_queue_request(&q, e[i]);
    assert_int_equal(q.live, 8);
    assert_int_equal(e[1]->qseq, 0); /* dropped: its next lookup asks again */
    assert_int_equal(e[2]->qseq, 0);
    mt_symw_queue_request(&q, e[10]); /* already among the latest: nothing */
    assert_int_equal(q.live, 8);
    mt_symw_queue_request(&q, e[4]); /* older: moves to the top, the oldest drops */
    assert_int_equal(q.live, 7);
    assert_int_equal(e[3]->qseq, 0);
    assert_ptr_equal(mt_symw_queue_pop(&q), e[4]);
    for (unsigned i = 10; i >= 5; i--)
        assert_ptr_equal(mt_symw_queue_pop(&q), e[i]);
    assert_null(mt_symw_queue_pop(&q)); /* e[4]'s old slot is stale */
    assert_int_equal(q.live, 0);
    mt_symw_queue_request(&q, e[1]);
    mt_symw_queue_request(&q, e[1]);
    assert_int_equal(q.live, 1);
    assert_ptr_equal(mt_symw_queue_pop(&q), e[1]);
    assert_null(mt_symw_queue_pop(&q));
    mt_symw_queue_free(&q);
    mt_symw_table_free(&t);
}

/* Records by (kind, key); a replaced one is kept, marked orphan. */
static void test_table(void **state)
{
    (void)state;
    mt_symw_table t;
    mt_symw_table_init(&t);
    assert_null(mt_symw_table_find(&t, MT_SYMW_FRAMES, 1));
    for (uint64_t a = 0; a < 5000; a++)
        add_addr(&t, a);
    uint64_t fr[3] = {7, 8, 9};
    mt_symw_entry *loc = mt_symw_table_add(&t, MT_SYMW_LOCATION, 7, fr, 3);
    assert_non_null(loc);
    for (uint64_t a = 0; a < 5000; a++)
        assert_int_equal(mt_symw_table_find(&t, MT_SYMW_FRAMES, a)->frames[0], a);
    assert_ptr_equal(mt_symw_table_find(&t, MT_SYMW_LOCATION, 7), loc);
    assert_int_equal(loc->nframes, 3);
    mt_symw_entry *again = mt_symw_table_add(&t, MT_SYMW_LOCATION, 7, fr, 2);
    assert_true(loc->orphan);
    assert_false(again->orphan);
    assert_ptr_equal(mt_symw_table_find(&t, MT_SYMW_LOCATION, 7), again);
    mt_symw_table_free(&t);
}

static void test_intern(void **state)
{
    (void)state;
    mt_interner t;
    mt_intern_init(&t);
    assert_null(mt_intern_get(&t, NULL));
    char buf[32];
    const char *first[1000];
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, "name%d", i);
        first[i] = mt_intern_get(&t, buf);
        assert_string_equal(first[i], buf);
        assert_ptr_not_equal(first[i], buf);
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, "name%d", i);
        assert_ptr_equal(mt_intern_get(&t, buf), first[i]);
    }
    mt_intern_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_location_async),
        cmocka_unit_test(test_plumbing_skip),
        cmocka_unit_test(test_shape_job),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_unknown_module),
        cmocka_unit_test(test_queue_overflow),
        cmocka_unit_test(test_stop_pending),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_queue_order),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_all_plumbing),
        cmocka_unit_test(test_callers),
        cmocka_unit_test(test_frames_at_trace),
        cmocka_unit_test(test_frames_module_replaced),
        cmocka_unit_test(test_frames_at_two_lives),
        cmocka_unit_test(test_frames_same_path_reloaded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
