/* test_unwind_cfi.c -- unit tests of the own unwinder's pieces.
 *
 * The program tests (unw_*.py) compare whole walks with libunwind on real
 * code, which rarely contains the unusual call frame information that must
 * make the walker give up.  Here the CFA interpreter (unwind_cfi.c) runs on
 * hand-written instructions: prologues, remember/restore_state, every
 * advance form, expressions and register rules (unsupported only for rsp,
 * rbp and the return address), an undefined return address (the outermost
 * frame), malformed data; then the bounded reader, the rule packing, the
 * FDE lookup and rules of this program's own code, and the rule cache
 * (fill, two ways, eviction, flush).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unwind_cache.h"
#include "unwind_cfi.h"
#include "unwind_fde.h"
#include "unwind_read.h"
#include "unwind_rule.h"

#define PC0 0x1000u

/* The CIE initial instructions gcc emits for x86-64: CFA = rsp + 8,
 * return address at CFA - 8 (data alignment -8). */
static const uint8_t CIE[] = {0x0c, 0x07, 0x08, 0x90, 0x01};

static uint64_t rule_at(const uint8_t *ins, size_t n, uint64_t off)
{
    mt_fde f = {
        .cie_ins = mt_rd_make(CIE, CIE + sizeof CIE),
        .fde_ins = mt_rd_make(ins, ins + n),
        .pc_begin = PC0,
        .pc_end = PC0 + 0x20000,
        .code_align = 1,
        .data_align = -8,
        .ptr_enc = MT_PE_UDATA8,
    };
    return mt_cfi_eval(&f, PC0 + off);
}

#define RULE(ins, off) rule_at(ins, sizeof ins, off)

static void test_prologue(void **state)
{
    (void)state;
    /* push %rbp; mov %rsp,%rbp; ...; pop %rbp */
    static const uint8_t ins[] = {
        0x41,             /* advance 1 */
        0x0e, 0x10,       /* def_cfa_offset 16 */
        0x86, 0x02,       /* offset rbp at cfa-16 */
        0x43,             /* advance 3 */
        0x0d, 0x06,       /* def_cfa_register rbp */
        0x4a,             /* advance 10 */
        0x0c, 0x07, 0x08, /* def_cfa rsp+8 */
        0xc6,             /* restore rbp */
    };
    assert_int_equal(RULE(ins, 0), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(ins, 1), mt_rule_pack(false, 16, 16));
    assert_int_equal(RULE(ins, 3), mt_rule_pack(false, 16, 16));
    assert_int_equal(RULE(ins, 4), mt_rule_pack(true, 16, 16));
    assert_int_equal(RULE(ins, 13), mt_rule_pack(true, 16, 16));
    assert_int_equal(RULE(ins, 14), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(ins, 0x5000), mt_rule_pack(false, 8, 0));
}

static void test_remember_restore(void **state)
{
    (void)state;
    static const uint8_t ins[] = {
        0x41, 0x0e, 0x20, /* advance 1; def_cfa_offset 32 */
        0x0a,             /* remember_state */
        0x41, 0x0e, 0x08, /* advance 1; def_cfa_offset 8 (an early return) */
        0x41, 0x0b,       /* advance 1; restore_state */
    };
    assert_int_equal(RULE(ins, 1), mt_rule_pack(false, 32, 0));
    assert_int_equal(RULE(ins, 2), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(ins, 3), mt_rule_pack(false, 32, 0));
}

static void test_advance_forms(void **state)
{
    (void)state;
    static const uint8_t ins[] = {
        0x02, 0x05, 0x0e, 0x10,             /* advance_loc1 5; cfa+16 */
        0x03, 0x00, 0x01, 0x0e, 0x18,       /* advance_loc2 256; cfa+24 */
        0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, /* advance_loc4 65536; */
        0x20,                               /* cfa+32 */
    };
    assert_int_equal(RULE(ins, 4), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(ins, 5), mt_rule_pack(false, 16, 0));
    assert_int_equal(RULE(ins, 260), mt_rule_pack(false, 16, 0));
    assert_int_equal(RULE(ins, 261), mt_rule_pack(false, 24, 0));
    assert_int_equal(RULE(ins, 261 + 65535), mt_rule_pack(false, 24, 0));
    assert_int_equal(RULE(ins, 261 + 65536), mt_rule_pack(false, 32, 0));
    static const uint8_t set_loc[] = {0x01, 0x10, 0x10, 0, 0, 0, 0, 0, 0, /* set_loc PC0+16 */
                                      0x0e, 0x30};
    assert_int_equal(RULE(set_loc, 15), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(set_loc, 16), mt_rule_pack(false, 48, 0));
}

static void test_ignored(void **state)
{
    (void)state;
    static const uint8_t ins[] = {
        0x00,                         /* nop */
        0x2e, 0x10,                   /* GNU_args_size 16 */
        0x10, 0x03, 0x02, 0x73, 0x00, /* expression: rbx = *(rbx+0) */
        0x09, 0x0c, 0x0d,             /* register r12 in r13 */
        0x83, 0x03,                   /* offset rbx at cfa-24 */
        0x08, 0x06,                   /* same_value rbp */
    };
    assert_int_equal(RULE(ins, 0), mt_rule_pack(false, 8, 0));
}

static void test_unsupported(void **state)
{
    (void)state;
    static const uint8_t cfa_expr[] = {0x0f, 0x02, 0x77, 0x08};
    static const uint8_t rbp_in_reg[] = {0x09, 0x06, 0x03};
    static const uint8_t rbp_expr[] = {0x10, 0x06, 0x02, 0x76, 0x00};
    static const uint8_t ra_val[] = {0x14, 0x10, 0x01};
    static const uint8_t ra_moved[] = {0x90, 0x02};
    static const uint8_t rsp_rule[] = {0x87, 0x02};
    static const uint8_t cfa_rbx[] = {0x0c, 0x03, 0x08};
    static const uint8_t cfa_odd[] = {0x0e, 0x0c};
    static const uint8_t cfa_max[] = {0x0e, 0x80, 0x80, 0x40};  /* 1 MiB: fits */
    static const uint8_t cfa_huge[] = {0x0e, 0x88, 0x80, 0x40}; /* 1 MiB + 8 */
    static const uint8_t rbp_ra_slot[] = {0x11, 0x06, 0x01};    /* rbp at cfa-8 */
    static const uint8_t rbp_above[] = {0x11, 0x06, 0x7f};      /* rbp at cfa+8 */
    static const uint8_t rbp_undef[] = {0x07, 0x06};
    assert_int_equal(RULE(cfa_expr, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rbp_in_reg, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rbp_expr, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(ra_val, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(ra_moved, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rsp_rule, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(cfa_rbx, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(cfa_odd, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(cfa_max, 0), mt_rule_pack(false, 1 << 20, 0));
    assert_int_equal(RULE(cfa_huge, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rbp_ra_slot, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rbp_above, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(rbp_undef, 0), MT_RULE_UNSUPPORTED);
    /* ... but only from where they apply */
    static const uint8_t later[] = {0x44, 0x0f, 0x02, 0x77, 0x08};
    assert_int_equal(RULE(later, 3), mt_rule_pack(false, 8, 0));
    assert_int_equal(RULE(later, 4), MT_RULE_UNSUPPORTED);
    mt_fde sig = {.cie_ins = mt_rd_make(CIE, CIE + sizeof CIE),
                  .fde_ins = mt_rd_make(CIE, CIE),
                  .pc_begin = PC0,
                  .pc_end = PC0 + 16,
                  .code_align = 1,
                  .data_align = -8,
                  .signal_frame = true};
    assert_int_equal(mt_cfi_eval(&sig, PC0), MT_RULE_UNSUPPORTED);
}

static void test_end(void **state)
{
    (void)state;
    static const uint8_t ins[] = {0x07, 0x10}; /* undefined rip: _start, clone */
    assert_int_equal(RULE(ins, 0), MT_RULE_END);
}

static void test_malformed(void **state)
{
    (void)state;
    static const uint8_t cut_uleb[] = {0x0e, 0x80};
    static const uint8_t cut_block[] = {0x0f, 0x05, 0x77};
    static const uint8_t pop_empty[] = {0x0b};
    static const uint8_t unknown[] = {0x3f};
    static const uint8_t deep[] = {0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a};
    assert_int_equal(RULE(cut_uleb, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(cut_block, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(pop_empty, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(unknown, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(RULE(deep, 0), MT_RULE_UNSUPPORTED);
}

static void test_rule_pack(void **state)
{
    (void)state;
    uint64_t r = mt_rule_pack(true, 4096, 48);
    assert_true(mt_rule_usual(r));
    assert_true(r & MT_RULE_CFA_RBP);
    assert_int_equal(mt_rule_cfa_off(r), 4096);
    assert_int_equal(mt_rule_rbp_below(r), 48);
    assert_true(mt_rule_usual(mt_rule_pack(false, MT_RULE_OFF_MAX, MT_RULE_RBP_MAX)));
    assert_int_equal(mt_rule_pack(false, MT_RULE_OFF_MAX + 8, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(mt_rule_pack(false, 0, 0), MT_RULE_UNSUPPORTED);
    assert_int_equal(mt_rule_pack(false, 16, MT_RULE_RBP_MAX + 8), MT_RULE_UNSUPPORTED);
    assert_int_equal(mt_rule_pack(false, 16, 12), MT_RULE_UNSUPPORTED);
    assert_false(mt_rule_usual(0));
    assert_false(mt_rule_usual(MT_RULE_END));
    assert_false(mt_rule_usual(MT_RULE_UNSUPPORTED));
    assert_true(r < MT_RULE_SPECIAL && MT_RULE_UNSUPPORTED <= MT_RULE_MASK);
}

static void test_reader(void **state)
{
    (void)state;
    static const uint8_t d[] = {0xe5, 0x8e, 0x26, 0x7f, 0x80, 0x7f, 0xfe, 0xff, 0xff, 0xff};
    mt_rd r = mt_rd_make(d, d + sizeof d);
    assert_int_equal(mt_rd_uleb(&r), 624485);
    assert_int_equal(mt_rd_sleb(&r), -1);
    assert_int_equal(mt_rd_sleb(&r), -128);
    assert_int_equal((int64_t)mt_rd_value(&r, MT_PE_SDATA4), -2);
    assert_false(r.bad);
    assert_int_equal(mt_rd_u8(&r), 0);
    assert_true(r.bad);
    static const uint8_t endless[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff, 0x01};
    r = mt_rd_make(endless, endless + sizeof endless);
    mt_rd_uleb(&r);
    assert_true(r.bad);
    static const uint8_t rel[] = {0x10, 0x00, 0x00, 0x00};
    r = mt_rd_make(rel, rel + sizeof rel);
    assert_int_equal(mt_rd_ptr(&r, MT_PE_PCREL | MT_PE_SDATA4, 0), (uint64_t)(uintptr_t)rel + 16);
    r = mt_rd_make(rel, rel + sizeof rel);
    assert_int_equal(mt_rd_ptr(&r, MT_PE_DATAREL | MT_PE_UDATA4, 0x5000), 0x5010);
    r = mt_rd_make(rel, rel + sizeof rel);
    mt_rd_ptr(&r, MT_PE_INDIRECT | MT_PE_PCREL | MT_PE_SDATA4, 0);
    assert_true(r.bad);
}

/* A function of this program: its entry's rule is CFA = rsp + 8. */
__attribute__((noinline)) int probe_function(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

extern char _start[];

static void test_real_code(void **state)
{
    (void)state;
    assert_true(mt_fde_available());
    uint64_t f = (uint64_t)(uintptr_t)&probe_function;
    mt_fde fde;
    assert_true(mt_fde_find(f, &fde));
    assert_true(fde.pc_begin <= f && f < fde.pc_end);
    assert_int_equal(mt_cfi_rule(f, false), mt_rule_pack(false, 8, 0));
    /* _start marks the return address undefined: the outermost frame */
    assert_int_equal(mt_cfi_rule((uint64_t)(uintptr_t)_start + 4, true), MT_RULE_END);
    int local = 0;
    assert_false(mt_fde_find((uint64_t)(uintptr_t)&local, &fde));
    assert_int_equal(mt_cfi_rule((uint64_t)(uintptr_t)&local, true), MT_RULE_UNSUPPORTED);
    assert_int_equal(mt_cfi_rule(0x10, true), MT_RULE_UNSUPPORTED);
}

static uint64_t set_of(uint64_t key)
{
    return key & ((1ull << MT_UCACHE_SET_BITS) - 1);
}

static void test_cache(void **state)
{
    (void)state;
    assert_true(mt_ucache_init());
    const _Atomic uint64_t *t = mt_ucache_table;
    uint64_t f = (uint64_t)(uintptr_t)&probe_function, rule;
    assert_false(mt_ucache_usual(t, f, &rule));
    assert_int_equal(mt_ucache_rule(f, false), mt_rule_pack(false, 8, 0));
    assert_true(mt_ucache_usual(t, f, &rule));
    assert_int_equal(rule, mt_rule_pack(false, 8, 0));
    /* Three addresses (in no object: unsupported) sharing one set: the
     * two newest stay, in way 0 then 1. */
    uint64_t keys[3] = {0x101ff8}, n = 1; /* set bits 3..12: overlap the rule */
    for (uint64_t k = keys[0] + 1; n < 3; k++)
        if (set_of(k) == set_of(keys[0]))
            keys[n++] = k;
    uint64_t s = set_of(keys[0]) * MT_UCACHE_WAYS;
    for (int i = 0; i < 3; i++)
        assert_int_equal(mt_ucache_rule(keys[i], true), MT_RULE_UNSUPPORTED);
    assert_false(mt_ucache_usual(t, keys[2], &rule));
    assert_int_equal(rule, MT_RULE_UNSUPPORTED); /* cached, read back whole */
    uint64_t tag1 = 1ull << 63 | keys[1] << MT_UCACHE_TAG_SHIFT;
    uint64_t tag2 = 1ull << 63 | keys[2] << MT_UCACHE_TAG_SHIFT;
    assert_int_equal(t[s], tag2 ^ MT_RULE_UNSUPPORTED);
    assert_int_equal(t[s + 1], tag1 ^ MT_RULE_UNSUPPORTED);
    /* Same-set addresses never see each other's rules: rules put in by
     * hand, then each address looked up. */
    _Atomic uint64_t *w = mt_ucache_table;
    uint64_t r16 = mt_rule_pack(false, 16, 0), r24 = mt_rule_pack(true, 24, 16);
    w[s] = mt_ucache_tag(keys[2]) ^ r16;
    w[s + 1] = mt_ucache_tag(keys[1]) ^ r24;
    assert_true(mt_ucache_usual(t, keys[2], &rule));
    assert_int_equal(rule, r16);
    assert_true(mt_ucache_usual(t, keys[1], &rule)); /* way 1: the fast path's too */
    assert_int_equal(rule, r24);
    assert_int_equal(mt_ucache_rule(keys[1], true), r24);
    assert_false(mt_ucache_usual(t, keys[0], &rule));
    assert_int_equal(mt_ucache_rule(keys[0], true), MT_RULE_UNSUPPORTED); /* recomputed */
    /* an empty entry is no rule for any address */
    for (uint64_t hi = 1; hi < (1ull << (MT_UCACHE_ADDR_BITS - MT_UCACHE_SET_BITS));
         hi = hi * 5 + 3)
        for (uint64_t lo = 0; lo < (1ull << MT_UCACHE_SET_BITS); lo += 0x3ff)
            assert_false(mt_rule_usual(mt_ucache_tag(hi << MT_UCACHE_SET_BITS | lo)));
    /* an address at or above 2^47 is never cached (it would alias) */
    uint64_t high = (1ull << 47) | f;
    assert_int_equal(mt_ucache_rule(high, false), MT_RULE_UNSUPPORTED);
    assert_true(mt_ucache_usual(t, f, &rule));
    mt_ucache_flush();
    assert_false(mt_ucache_usual(t, f, &rule));
    assert_int_equal(t[s], 0);
    assert_int_equal(t[s + 1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prologue),      cmocka_unit_test(test_remember_restore),
        cmocka_unit_test(test_advance_forms), cmocka_unit_test(test_ignored),
        cmocka_unit_test(test_unsupported),   cmocka_unit_test(test_end),
        cmocka_unit_test(test_malformed),     cmocka_unit_test(test_rule_pack),
        cmocka_unit_test(test_reader),        cmocka_unit_test(test_real_code),
        cmocka_unit_test(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
