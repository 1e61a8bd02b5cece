/* test_dl_gone.c -- unit tests of which modules a dlclose unloaded
 * (src/preload/hook/hook_dl_gone.c), compiled on its own against a made-up
 * loader: mt_loader_iterate lists an array of module ranges, with load
 * and unload counts (dlpi_adds, dlpi_subs) kept as glibc keeps them, and
 * mt_traces_retire notes what it was given.
 *
 * What is checked: a dlclose retires the modules it unloaded, and only
 * them, each with the `since` it has (the trace count of the last listing
 * for a module loaded after it); that holds beyond 1,024 modules; a
 * listing is whole when the loader's count of modules is off; a dlclose
 * that unloads nothing walks the loader's list once.  The hook's listing
 * state is process-global: each test starts with a dlclose that unloads
 * nothing (settle), whose listing the next one compares with.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <link.h>

#include "core_loader_gate.h"
#include "hook_dl_gone.h"
#include "publish_modules.h"
#include "table_trace.h"

#define MODS_MAX 4096u

/* The made-up loader: its modules in load order, and its counts. */
static struct {
    uint64_t lo[MODS_MAX];
    uint32_t n;
    unsigned long long adds, subs;
    unsigned long long adds_off; /* reported adds short by this much */
    uint64_t calls;              /* callbacks made */
    uint64_t peeks;              /* of which peeks at the counts */
} g_ld;

static uint32_t g_count; /* mt_trace_count */
static mt_code_range g_gone[MODS_MAX];
static uint32_t g_ngone, g_retires;

int mt_loader_iterate(mt_dl_iter_cb cb, void *data)
{
    for (uint32_t i = 0; i < g_ld.n; i++) {
        struct dl_phdr_info info = {
            .dlpi_addr = i, .dlpi_adds = g_ld.adds - g_ld.adds_off, .dlpi_subs = g_ld.subs};
        g_ld.calls++;
        int rc = cb(&info, sizeof info, data);
        if (rc)
            return rc;
    }
    return 0;
}

void mt_module_span(const struct dl_phdr_info *info, uint64_t *start, uint64_t *end)
{
    *start = g_ld.lo[info->dlpi_addr];
    *end = *start + 0x1000;
}

/* The made-up loader's counts (publish_modules.c reads them from its
 * first module's info), each peek counted. */
int mt_module_peek_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size;
    unsigned long long *counts = arg;
    counts[0] = g_ld.adds - g_ld.adds_off;
    counts[1] = g_ld.subs;
    g_ld.peeks++;
    return 1;
}

const uint8_t *mt_module_build_id(const struct dl_phdr_info *info, uint32_t *len)
{
    (void)info;
    *len = 0;
    return NULL;
}

uint32_t mt_trace_count(void)
{
    return g_count;
}

void mt_traces_retire(const mt_code_range *gone, uint32_t n)
{
    assert_true(n <= MODS_MAX);
    memcpy(g_gone, gone, n * sizeof *gone);
    g_ngone = n;
    g_retires++;
}

static void load(uint64_t lo)
{
    assert_true(g_ld.n < MODS_MAX);
    g_ld.lo[g_ld.n++] = lo;
    g_ld.adds++;
}

static void unload(uint64_t lo)
{
    for (uint32_t i = 0; i < g_ld.n; i++)
        if (g_ld.lo[i] == lo) {
            memmove(&g_ld.lo[i], &g_ld.lo[i + 1], (g_ld.n - i - 1) * sizeof *g_ld.lo);
            g_ld.n--;
            g_ld.subs++;
            return;
        }
    fail_msg("no module at %#llx", (unsigned long long)lo);
}

/* A dlclose that unloads nothing. */
static void dlclose_keeping(void)
{
    mt_dl_listing l;
    mt_dl_list(&l);
    mt_dl_retire_gone(&l);
}

/* A fresh loader of n modules from base, loaded after a listing of none
 * at trace count 0 (their since: 0), and a dlclose that unloads nothing,
 * at trace count `count`: the listing the next dlclose compares with. */
static void settle(uint32_t n, uint64_t base, uint32_t count)
{
    memset(&g_ld, 0, sizeof g_ld);
    g_count = 0;
    dlclose_keeping();
    for (uint32_t i = 0; i < n; i++)
        load(base + (uint64_t)i * 0x10000);
    g_count = count;
    dlclose_keeping();
    g_retires = 0;
}

/* A dlclose that unloads the module at lo. */
static void dlclose_unloading(uint64_t lo)
{
    mt_dl_listing l;
    mt_dl_list(&l);
    unload(lo);
    mt_dl_retire_gone(&l);
}

static void retires_only_the_gone(void **state)
{
    (void)state;
    settle(20, 0x10000000, 50);
    load(0x70000000);
    load(0x71000000);
    g_count = 70;
    dlclose_unloading(0x70000000);
    assert_int_equal(g_retires, 1);
    assert_int_equal(g_ngone, 1);
    assert_int_equal(g_gone[0].lo, 0x70000000);
    assert_int_equal(g_gone[0].since, 50); /* loaded after the listing at 50 */
    /* a module there at the last listing keeps its since */
    g_count = 90;
    dlclose_unloading(0x10000000 + 3 * 0x10000);
    assert_int_equal(g_ngone, 1);
    assert_int_equal(g_gone[0].lo, 0x10030000);
    assert_int_equal(g_gone[0].since, 0); /* as settled */
    dlclose_unloading(0x71000000);
    assert_int_equal(g_gone[0].lo, 0x71000000);
    assert_int_equal(g_gone[0].since, 50); /* kept across the listings since */
}

static void beyond_1024_modules(void **state)
{
    (void)state;
    settle(1100, 0x20000000, 100);
    load(0x7f000000);
    g_count = 500;
    dlclose_unloading(0x7f000000);
    assert_int_equal(g_ngone, 1);
    assert_int_equal(g_gone[0].lo, 0x7f000000);
    /* not 0 (every trace scanned): the listing of 1,100 modules was kept */
    assert_int_equal(g_gone[0].since, 100);
}

static void whole_when_the_loader_count_is_off(void **state)
{
    (void)state;
    settle(100, 0x30000000, 10);
    g_ld.adds_off = 90; /* the loader's count says 10 modules */
    dlclose_unloading(0x30000000 + 99 * 0x10000);
    assert_int_equal(g_ngone, 1);
    assert_int_equal(g_gone[0].lo, 0x30000000 + 99 * 0x10000);
    g_ld.adds_off = 0;
}

static void one_walk_when_nothing_unloads(void **state)
{
    (void)state;
    settle(1000, 0x40000000, 10);
    g_ld.calls = g_ld.peeks = 0;
    dlclose_keeping();
    assert_int_equal(g_retires, 0);
    /* one listing and two peeks at the counts, not a count, a listing
     * and a count (3,000) */
    assert_int_equal(g_ld.peeks, 2);
    assert_true(g_ld.calls <= 1000 + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retires_only_the_gone),
        cmocka_unit_test(beyond_1024_modules),
        cmocka_unit_test(whole_when_the_loader_count_is_off),
        cmocka_unit_test(one_walk_when_nothing_unloads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
