/* test_module_holders.c -- unit tests of the modules' address lookups
 * through their index (src/ipc/shm_modules_holders.c): mt_modules_find and
 * mt_modules_find_at give what a walk of every module gives (the rule of
 * shm_modules.h, written again here), on maps of many lives of plugins of
 * a few sizes at a few places (loaded, unloaded with a stamp, unloaded
 * with none), at every bound and between; and the index follows a change
 * of the unload marks (mt_modules_changed, mt_modules_update).
 *
 * The walk is what main had; the index must give the same, ties included
 * (equal stamps: the latest module; no loaded one: the latest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm_modules.h"
#include "test_xorshift.h"

static uint64_t gone_at(const mt_module_info *m)
{
    return m->unload_seq == 0 ? UINT64_MAX : m->unload_trace;
}

static const mt_module_info *walk_find(const mt_modules *m, uint64_t addr)
{
    const mt_module_info *best = NULL;
    for (size_t i = 0; i < m->count; i++) {
        const mt_module_info *c = &m->items[i];
        if (addr < c->start || addr >= c->end)
            continue;
        bool loaded = c->unload_seq == 0, best_loaded = best && best->unload_seq == 0;
        if (!best || (loaded != best_loaded ? loaded : c > best))
            best = c;
    }
    return best;
}

static const mt_module_info *walk_find_at(const mt_modules *m, uint64_t addr, uint32_t trace)
{
    const mt_module_info *best = NULL;
    for (size_t i = 0; trace && i < m->count; i++) {
        const mt_module_info *c = &m->items[i];
        if (addr < c->start || addr >= c->end || gone_at(c) <= trace)
            continue;
        if (!best || gone_at(c) < gone_at(best) || (gone_at(c) == gone_at(best) && c > best))
            best = c;
    }
    return best ? best : walk_find(m, addr);
}

/* n lives of plugins of 3 sizes at 4 places, one after the other at each
 * place, unload stamps growing (some equal, some not known), the last
 * life at some places still loaded. */
static void make_lives(mt_modules *m, size_t n, uint64_t seed)
{
    mt_modules_init(m);
    m->items = calloc(n, sizeof *m->items);
    assert_non_null(m->items);
    m->cap = n;
    uint32_t stamp[4] = {1, 1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_xorshift(&seed);
        unsigned place = (unsigned)(r % 4);
        mt_module_info *o = &m->items[m->count++];
        o->start = o->bias = 0x10000000ull * (place + 1) + (r >> 8) % 3 * 0x1000;
        o->end = o->start + 0x4000 * (1 + (r >> 16) % 3);
        o->load_seq = i + 1;
        stamp[place] += (uint32_t)((r >> 24) % 3); /* 0: equal stamps */
        o->unload_seq = i + 1 + n;
        o->unload_trace = (r >> 32) % 10 == 0 ? 0 : stamp[place]; /* 0: not known */
    }
    for (unsigned p = 0; p < 4; p++) /* the last life at places 0 and 2 still loaded */
        for (size_t i = m->count; p % 2 == 0 && i-- > 0;)
            if (m->items[i].start / 0x10000000ull == p + 1) {
                m->items[i].unload_seq = m->items[i].unload_trace = 0;
                break;
            }
    mt_err err;
    assert_int_equal(mt_modules_reindex(m, &err), MT_OK);
}

/* Every address at a bound, beside it and between, at every trace. */
static void check_all(const mt_modules *m, uint32_t max_trace)
{
    for (size_t i = 0; i < m->count; i++) {
        const uint64_t at[] = {m->items[i].start - 1, m->items[i].start, m->items[i].start + 1,
                               m->items[i].end - 1,   m->items[i].end,   m->items[i].end + 1};
        for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
            assert_ptr_equal(mt_modules_find(m, at[a]), walk_find(m, at[a]));
            for (uint32_t t = 0; t <= max_trace; t += 1 + t / 8)
                assert_ptr_equal(mt_modules_find_at(m, at[a], t), walk_find_at(m, at[a], t));
        }
    }
    assert_null(mt_modules_find(m, 0));
    assert_null(mt_modules_find_at(m, UINT64_MAX, 5));
}

static void same_as_the_walk(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        mt_modules m;
        make_lives(&m, 1 + (size_t)(seed * 37 % 300), seed * 0x9e3779b97f4a7c15ull);
        check_all(&m, 700);
        mt_modules_free(&m);
    }
}

static void follows_changed_marks(void **state)
{
    (void)state;
    mt_modules m;
    make_lives(&m, 200, 7);
    check_all(&m, 300);
    for (size_t i = 0; i < m.count; i += 3) { /* revived, or unloaded later */
        m.items[i].unload_seq = i % 2 ? 0 : m.items[i].unload_seq + 1;
        m.items[i].unload_trace = i % 2 ? 0 : m.items[i].unload_trace + 5;
    }
    mt_modules_changed(&m);
    check_all(&m, 300);
    mt_modules_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_as_the_walk),
        cmocka_unit_test(follows_changed_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
