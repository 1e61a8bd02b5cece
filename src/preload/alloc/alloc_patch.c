/* alloc_patch.c -- redirecting a function's entry point in memory (x86-64).
 *
 * Calls that reach an allocator without the PLT (a pointer from dlsym, an
 * allocator linked into a module) are seen only if the function itself
 * is changed: its first instructions are replaced by a 5-byte jmp rel32
 * to a stub that jumps to memtop's hook, and the instructions displaced
 * are moved into a trampoline (ending in a jmp back to the rest of the
 * function) that the hook calls as the original.  The displaced
 * instructions are decoded with Zydis (a maintained decoder that does not
 * allocate; dlopened the first time something is to be patched, by the
 * first allocator scan, with the thread marked inside memtop); an instruction that refers to its
 * own address is re-encoded: a RIP-relative operand gets a new disp32, a rel32 branch a new rel32,
 * a short jmp/jcc becomes its rel32 form; anything else relative (loop, jrcxz, a target inside the
 * displaced bytes) is refused.  So is a function whose body (bounded by its symbol's size) branches
 * into bytes 1..N-1 of the patch, or which is shorter than it.  endbr64 at the entry stays (the
 * patch follows it); the trampoline starts with one, since the hook reaches it through a pointer.
 *
 * Memory and W^X: the stubs and trampolines of one module share a page
 * mapped within +-2 GiB of it (so rel32 reaches both ways), written while
 * read-write and made read-execute before any entry points at it; each
 * entry's page is made read-write (not executable) for the write and given
 * back the protection of its segment.  That is safe only while no other
 * thread can run the bytes: alone (the first scan, before the program's
 * threads), or with every other thread stopped (alloc_stop.c) and none of
 * them inside the bytes; signals are blocked meanwhile (a handler could
 * call the allocator).  Everything that takes a lock (the decoder's
 * loading, dl_iterate_phdr) is done before the stop.  Nothing is ever
 * unpatched: a thread may be inside a trampoline at exit.
 */
#define _GNU_SOURCE
#include "alloc_patch.h"

#include "alloc_stop.h"
#include "core_procinfo.h"
#include "core_dlerror.h"
#include "core_loader_gate.h"
#include "hook_nested.h"

#include <Zydis/Zydis.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define JMP_LEN 5   /* e9 rel32 */
#define ENDBR_LEN 4 /* f3 0f 1e fa */
#define SLOT 96     /* per function: stub (14) + trampoline (endbr, moved code, jmp back) */
#define MOVED_MAX (SLOT - 14 - ENDBR_LEN - JMP_LEN)
#define NEAR (1ll << 31)
#define STOP_TRIES 5 /* stops tried while a thread is inside the bytes to rewrite */

static const uint8_t endbr64[ENDBR_LEN] = {0xf3, 0x0f, 0x1e, 0xfa};

/* Zydis, loaded only when there is something to patch: a target with no
 * allocator to redirect does not carry it.  Loaded by the allocator scan
 * outside its lock (mt_patch_load_decoder: dlopen takes the loader's
 * lock), or here under it when the scan took no reference first (the
 * executable's allocator); by two threads at once, maybe: each looks the
 * same functions up and stores them (relaxed atomics: identical values),
 * then zy_state = 2 (release; read with acquire before the functions).
 * No thread ever waits for another's stores, so a fork child whose parent
 * forked in the middle of them does not either: it loads them itself.
 * zy_state 3: the first attempt failed (no such library, or not these
 * functions); none is made after it, so the scan never dlopens it again
 * under its lock. */
static struct {
    ZyanStatus (*init)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
    ZyanStatus (*decode)(const ZydisDecoder *, const void *, ZyanUSize, ZydisDecodedInstruction *,
                         ZydisDecodedOperand *);
    ZyanStatus (*calc_abs)(const ZydisDecodedInstruction *, const ZydisDecodedOperand *, ZyanU64,
                           ZyanU64 *);
    const char *(*mnemonic)(ZydisMnemonic);
} zy;
enum { ZY_UNTRIED = 0, ZY_SET = 2, ZY_ABSENT = 3 };
static int zy_state;

/* One of zy's functions, after zy_load returned true (relaxed: see zy). */
#define ZY(f) __atomic_load_n(&zy.f, __ATOMIC_RELAXED)

static bool zy_load(void)
{
    int state = __atomic_load_n(&zy_state, __ATOMIC_ACQUIRE);
    if (state != ZY_UNTRIED)
        return state == ZY_SET;
    void *h = dlopen(MT_ZYDIS_SONAME, RTLD_NOW | RTLD_LOCAL);
    void *init = h ? dlsym(h, "ZydisDecoderInit") : NULL;
    void *decode = h ? dlsym(h, "ZydisDecoderDecodeFull") : NULL;
    void *calc_abs = h ? dlsym(h, "ZydisCalcAbsoluteAddress") : NULL;
    void *mnemonic = h ? dlsym(h, "ZydisMnemonicGetString") : NULL;
    if (!init || !decode || !calc_abs || !mnemonic) {
        mt_dl_forget_error();
        int untried = ZY_UNTRIED; /* a thread that loaded it meanwhile wins */
        __atomic_compare_exchange_n(&zy_state, &untried, ZY_ABSENT, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        return false;
    }
    __atomic_store_n((void **)&zy.init, init, __ATOMIC_RELAXED);
    __atomic_store_n((void **)&zy.decode, decode, __ATOMIC_RELAXED);
    __atomic_store_n((void **)&zy.calc_abs, calc_abs, __ATOMIC_RELAXED);
    __atomic_store_n((void **)&zy.mnemonic, mnemonic, __ATOMIC_RELAXED);
    __atomic_store_n(&zy_state, ZY_SET, __ATOMIC_RELEASE);
    return true;
}

void mt_patch_load_decoder(void)
{
    (void)zy_load();
}

static bool fits32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *at, int64_t v)
{
    int32_t x = (int32_t)v;
    memcpy(at, &x, 4);
}

static bool decode(const ZydisDecoder *d, uint64_t at, uint64_t end, ZydisDecodedInstruction *in,
                   ZydisDecodedOperand *ops)
{
    return ZYAN_SUCCESS(ZY(decode)(d, (const void *)(uintptr_t)at, end - at, in, ops));
}

/* The target of a relative branch (rel8/rel32 immediate), or 0. */
static uint64_t branch_target(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
                              uint64_t at)
{
    if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
        return 0;
    for (unsigned i = 0; i < in->operand_count_visible; i++) {
        uint64_t t;
        if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative &&
            ZYAN_SUCCESS(ZY(calc_abs)(in, &ops[i], at, &t)))
            return t;
    }
    return 0;
}

/* Does any branch of the function [lo, end) land in (from, to)? */
static bool branches_into(const ZydisDecoder *d, uint64_t lo, uint64_t end, uint64_t from,
                          uint64_t to, char *why, size_t cap)
{
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    for (uint64_t at = lo; at < end; at += in.length) {
        if (!decode(d, at, end, &in, ops)) {
            snprintf(why, cap, "cannot decode its body at +%llu", (unsigned long long)(at - lo));
            return true;
        }
        uint64_t t = branch_target(&in, ops, at);
        if (t > from && t < to) {
            snprintf(why, cap, "a branch at +%llu jumps into the bytes the patch replaces",
                     (unsigned long long)(at - lo));
            return true;
        }
    }
    return false;
}

/* Moves one instruction from at to out (at address dst): false if it
 * cannot be.  *len is the bytes written. */
static bool relocate(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, uint64_t at,
                     uint64_t from, uint64_t to, uint8_t *out, uint64_t dst, size_t *len, char *why,
                     size_t cap)
{
    const uint8_t *src = (const uint8_t *)(uintptr_t)at;
    *len = in->length;
    memcpy(out, src, in->length);
    if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
        return true;
    int64_t moved = (int64_t)(at - dst);
    if (in->raw.disp.size == 32 && !in->raw.imm[0].is_relative) { /* RIP-relative operand */
        int64_t disp = in->raw.disp.value + moved;
        if (!fits32(disp)) {
            snprintf(why, cap, "a RIP-relative operand is out of reach from the trampoline");
            return false;
        }
        put32(out + in->raw.disp.offset, disp);
        return true;
    }
    uint64_t t = branch_target(in, ops, at);
    if (!t || (t >= from && t < to)) {
        snprintf(why, cap, "a displaced relative instruction cannot be moved (%s)",
                 ZY(mnemonic)(in->mnemonic));
        return false;
    }
    uint8_t op = src[0];
    if (in->raw.imm[0].size == 32) {
        int64_t rel = (int64_t)(t - (dst + in->length));
        if (!fits32(rel))
            goto far;
        put32(out + in->raw.imm[0].offset, rel);
        return true;
    }
    if (in->length == 2 && op == 0xeb) { /* jmp rel8 -> jmp rel32 */
        out[0] = 0xe9;
        *len = 5;
    } else if (in->length == 2 && op >= 0x70 && op <= 0x7f) { /* jcc rel8 -> jcc rel32 */
        out[0] = 0x0f;
        out[1] = (uint8_t)(0x80 + (op - 0x70));
        *len = 6;
    } else {
        snprintf(why, cap, "a displaced short branch cannot be moved (%s)",
                 ZY(mnemonic)(in->mnemonic));
        return false;
    }
    int64_t rel = (int64_t)(t - (dst + *len));
    if (!fits32(rel))
        goto far;
    put32(out + *len - 4, rel);
    return true;
far:
    snprintf(why, cap, "a displaced branch target is out of reach from the trampoline");
    return false;
}

/* Builds p's stub and trampoline at slot (address of slot in the final
 * page: the same, it is written in place).  Sets *patch_at, and *moved_end
 * to the end of the instructions displaced. */
static bool build(const ZydisDecoder *d, mt_patch *p, uint8_t *slot, uint64_t *patch_at,
                  uint64_t *moved_end)
{
    uint64_t entry = p->addr, end = p->addr + p->size;
    if (p->size >= ENDBR_LEN && memcmp((const void *)(uintptr_t)entry, endbr64, ENDBR_LEN) == 0)
        entry += ENDBR_LEN; /* CET: the entry keeps its endbr64 */
    if (p->size == 0 || entry + JMP_LEN > end) {
        snprintf(p->why, sizeof p->why, "shorter than the %d-byte jump", JMP_LEN);
        return false;
    }
    /* the stub: jmp *0(%rip); .quad hook */
    slot[0] = 0xff;
    slot[1] = 0x25;
    put32(slot + 2, 0);
    uint64_t hook = (uint64_t)(uintptr_t)p->hook;
    memcpy(slot + 6, &hook, 8);
    uint8_t *tr = slot + 14;
    memcpy(tr, endbr64, ENDBR_LEN);
    size_t used = ENDBR_LEN;
    uint64_t at = entry;
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    while (at < entry + JMP_LEN) {
        if (!decode(d, at, end, &in, ops)) {
            snprintf(p->why, sizeof p->why, "cannot decode its first instructions");
            return false;
        }
        size_t len;
        uint8_t tmp[16];
        if (!relocate(&in, ops, at, entry, entry + JMP_LEN, tmp, (uint64_t)(uintptr_t)(tr + used),
                      &len, p->why, sizeof p->why))
            return false;
        if (used + len > ENDBR_LEN + MOVED_MAX) {
            snprintf(p->why, sizeof p->why, "its first instructions are too long to move");
            return false;
        }
        memcpy(tr + used, tmp, len);
        used += len;
        at += in.length;
    }
    if (branches_into(d, p->addr, end, entry, at, p->why, sizeof p->why))
        return false;
    tr[used] = 0xe9; /* back to the first instruction not moved */
    int64_t back = (int64_t)(at - ((uint64_t)(uintptr_t)(tr + used) + JMP_LEN));
    int64_t there = (int64_t)((uint64_t)(uintptr_t)slot - (entry + JMP_LEN));
    if (!fits32(back) || !fits32(there)) {
        snprintf(p->why, sizeof p->why, "no memory for its trampoline within 2 GiB");
        return false;
    }
    put32(tr + used + 1, back);
    *patch_at = entry;
    *moved_end = at;
    return true;
}

/* A page for the trampolines within +-2 GiB of [lo, hi), or NULL. */
static uint8_t *near_page(uint64_t lo, uint64_t hi, size_t bytes)
{
    const uint64_t step = 1 << 20;
    for (uint64_t off = step; off < (uint64_t)NEAR - step - (hi - lo); off += step) {
        uint64_t tries[2] = {(lo & ~(step - 1)) - off, ((hi + step - 1) & ~(step - 1)) + off};
        for (int i = 0; i < 2; i++) {
            if (tries[i] < (1 << 20) || tries[i] >= (1ull << 47) - step)
                continue;
            void *m = mmap((void *)(uintptr_t)tries[i], bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (m == MAP_FAILED)
                continue;
            if ((uint64_t)(uintptr_t)m == tries[i])
                return m;
            munmap(m, bytes); /* an old kernel took it as a hint only */
        }
    }
    return NULL;
}

typedef struct seg_find {
    uint64_t addr;
    int prot; /* -1: not in an executable segment */
} seg_find;

static int find_seg(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    seg_find *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || f->addr < a || f->addr >= a + ph->p_memsz)
            continue;
        if (ph->p_flags & PF_X)
            f->prot = (ph->p_flags & PF_R ? PROT_READ : 0) | PROT_EXEC;
        return 1;
    }
    return 0;
}

/* The protection of the executable segment holding addr; -1 if none.
 * Before any stop: dl_iterate_phdr takes the loader's lock. */
static int seg_prot(uint64_t addr)
{
    seg_find f = {addr, -1};
    mt_loader_iterate(find_seg, &f); /* a fork waits for it: core_loader_gate.c */
    return f.prot;
}

/* Writes the jmp at entry: its pages read-write for the write, then back
 * to their segment's protection prot (never writable and executable).
 * System calls only: it may run with the other threads stopped. */
static bool write_jump(uint64_t entry, uint64_t stub, int prot, char *why, size_t cap)
{
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t lo = entry & ~(pg - 1), hi = (entry + JMP_LEN + pg - 1) & ~(pg - 1);
    if (mprotect((void *)(uintptr_t)lo, hi - lo, PROT_READ | PROT_WRITE) != 0) {
        snprintf(why, cap, "mprotect refused");
        return false;
    }
    uint8_t jmp[JMP_LEN] = {0xe9};
    put32(jmp + 1, (int64_t)(stub - (entry + JMP_LEN)));
    memcpy((void *)(uintptr_t)entry, jmp, JMP_LEN);
    mprotect((void *)(uintptr_t)lo, hi - lo, prot);
    __builtin___clear_cache((char *)(uintptr_t)entry, (char *)(uintptr_t)(entry + JMP_LEN));
    return true;
}

/* Holds the other threads still (alloc_stop.c) unless there are none,
 * retrying a few times while one is inside the bytes to rewrite.  False
 * with why when they cannot be. */
static bool quiesce(const mt_patch *p, size_t n, const uint64_t *at, const uint64_t *end,
                    bool *stopped, char *why, size_t cap)
{
    *stopped = false;
    if (mt_proc_threads() == 1)
        return true; /* alone: the first scan, before the program's threads */
    mt_stop_range r[n];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].done) {
            r[k].lo = at[i];
            r[k++].hi = end[i];
        }
    for (int tries = 0; tries < STOP_TRIES; tries++) {
        if (mt_world_stop(r, k, why, cap)) {
            *stopped = true;
            return true;
        }
        if (!strstr(why, "inside"))
            return false;
        struct timespec ts = {0, 2000000}; /* 2 ms: let it leave */
        nanosleep(&ts, NULL);
    }
    return false;
}

static void refuse_all(mt_patch *p, size_t n, const char *why)
{
    for (size_t i = 0; i < n; i++) {
        p[i].done = false;
        snprintf(p[i].why, sizeof p[i].why, "%s", why);
    }
}

/* Whether every function (not counting aliases) was built; if not, the
 * others are marked not done, saying which one was refused. */
static bool all_built(mt_patch *p, size_t n, const size_t *alias)
{
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (alias[i] == i && !p[i].done)
            bad = i;
    if (bad == n)
        return true;
    for (size_t i = 0; i < n; i++)
        if (i != bad) {
            p[i].done = false;
            snprintf(p[i].why, sizeof p[i].why, "another entry cannot be redirected");
        }
    return false;
}

bool mt_patch_all(mt_patch *p, size_t n, bool whole)
{
#if !defined(__x86_64__)
    for (size_t i = 0; i < n; i++) {
        p[i].done = false;
        snprintf(p[i].why, sizeof p[i].why, "entry points are redirected on x86-64 only");
    }
    return false;
#else
    if (n == 0)
        return false;
    ZydisDecoder d;
    if (!zy_load() ||
        !ZYAN_SUCCESS(ZY(init)(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64))) {
        char why[sizeof p->why];
        snprintf(why, sizeof why, "cannot load %s", MT_ZYDIS_SONAME);
        refuse_all(p, n, why);
        return false;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = p[i].addr < lo ? p[i].addr : lo;
        hi = p[i].addr + p[i].size > hi ? p[i].addr + p[i].size : hi;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (n * SLOT + pg - 1) & ~(pg - 1);
    uint8_t *page = hi - lo < (uint64_t)NEAR / 2 ? near_page(lo, hi, bytes) : NULL;
    if (!page) {
        refuse_all(p, n, "no memory for its trampoline within 2 GiB");
        return false;
    }
    uint64_t at[n], end[n];
    int prot[n];
    size_t alias[n]; /* i itself, or the first function at the same address */
    for (size_t i = 0; i < n; i++) {
        alias[i] = i;
        for (size_t j = 0; j < i && alias[i] == i; j++)
            if (p[j].addr == p[i].addr)
                alias[i] = j;
        p[i].done = alias[i] == i && build(&d, &p[i], page + i * SLOT, &at[i], &end[i]);
        prot[i] = p[i].done ? seg_prot(at[i]) : -1;
        if (p[i].done && prot[i] < 0) {
            p[i].done = false;
            snprintf(p[i].why, sizeof p[i].why, "not in an executable segment");
        }
    }
    if (whole && !all_built(p, n, alias)) {
        munmap(page, bytes); /* nothing points at it */
        return false;
    }
    if (mprotect(page, bytes, PROT_READ | PROT_EXEC) != 0) {
        munmap(page, bytes);
        refuse_all(p, n, "mprotect refused");
        return false;
    }
    /* No signal handler may run while an entry's page is not executable. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    char why[sizeof p->why];
    bool stopped;
    if (!quiesce(p, n, at, end, &stopped, why, sizeof why)) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        munmap(page, bytes); /* nothing points at it */
        refuse_all(p, n, why);
        return false;
    }
    /* A displaced call (mi_reallocarray's to mi_reallocn) returns into the
     * trampoline: an entry it reaches from inside memtop's real call is
     * the allocator's own (hook_nested.h), known before any call can run
     * it. */
    mt_nested_code_add((uint64_t)(uintptr_t)page, (uint64_t)(uintptr_t)page + bytes);
    for (size_t i = 0; i < n; i++) {
        if (!p[i].done)
            continue;
        /* before any call can reach the hook this way */
        atomic_store_explicit(p[i].orig, (void *)(page + i * SLOT + 14), memory_order_release);
        atomic_thread_fence(memory_order_seq_cst);
        p[i].done = write_jump(at[i], (uint64_t)(uintptr_t)(page + i * SLOT), prot[i], p[i].why,
                               sizeof p[i].why);
    }
    if (stopped)
        mt_world_resume();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (size_t i = 0; i < n; i++) /* an alias reaches the first one's hook */
        if (alias[i] != i && (p[i].done = p[alias[i]].done))
            atomic_store_explicit(p[i].orig,
                                  atomic_load_explicit(p[alias[i]].orig, memory_order_relaxed),
                                  memory_order_release);
        else if (alias[i] != i) /* another entry's reason (memcpy: a Debug build's
                                   -Wrestrict cannot tell alias[i] != i) */
            memcpy(p[i].why, p[alias[i]].why, sizeof p[i].why);
    return true;
#endif
}

int mt_patch_entry_index(const mt_patch_entry *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return i;
    return -1;
}

size_t mt_patch_entries(const mt_patch_entry *t, int n, const uint64_t *addr, const uint64_t *size,
                        mt_patch *out, int *at)
{
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (!addr[i])
            continue;
        memset(&out[k], 0, sizeof out[k]);
        out[k].addr = addr[i];
        out[k].size = size[i];
        out[k].hook = t[i].hook;
        out[k].orig = t[i].orig;
        at[k++] = i;
    }
    return k;
}
