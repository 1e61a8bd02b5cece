/* hook_real_alloc.c -- find the allocator we interpose on, without recursion.
 *
 * We use dlsym(RTLD_NEXT, ...) rather than glibc's __libc_malloc family so
 * that memtop stacks correctly on top of another interposed allocator
 * (jemalloc or tcmalloc linked as a shared library): blocks then always go
 * back to the allocator that made them.  dlsym itself may call calloc (for
 * its dlerror buffer) before the real functions are known; such calls, and
 * any made by other threads during resolution, are served from a static
 * bootstrap arena whose blocks are recognised by address and never freed.
 */
#define _GNU_SOURCE
#include "hook_real_alloc.h"

#include "core_common.h"
#include "core_thread_state.h"
#include "core_sample.h"
#include "core_dlerror.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

mt_real_fns mt_real;

_Atomic int mt_resolve_state;

#define BOOT_ARENA_BYTES MT_BOOT_ARENA_BYTES
#define BOOT_HEADER 16u
_Alignas(4096) unsigned char mt_boot_arena[BOOT_ARENA_BYTES];
static _Atomic size_t g_boot_used;

void *mt_boot_alloc(size_t size, size_t align)
{
    if (align < BOOT_HEADER)
        align = BOOT_HEADER;
    if (size > BOOT_ARENA_BYTES || (align & (align - 1)) != 0 || align > 4096)
        return NULL;
    size_t need = BOOT_HEADER + size + align;
    /* seq_cst: the bump and the filter's load below pair with
     * mt_sample_init's store and mt_boot_pin_all's load (a Dekker pair):
     * one of them sees the other, so the block's slot is pinned. */
    size_t start = atomic_fetch_add_explicit(&g_boot_used, need, memory_order_seq_cst);
    if (start + need > BOOT_ARENA_BYTES)
        return NULL;
    uintptr_t base = (uintptr_t)mt_boot_arena + start + BOOT_HEADER;
    uintptr_t p = (base + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void *)(p - sizeof(size_t)), &size, sizeof size);
    if (atomic_load_explicit(&mt_sfilter, memory_order_seq_cst))
        mt_sfilter_pin((void *)p); /* allocated while the filter was being set up */
    return (void *)p;              /* the arena is static, hence already zeroed (calloc-safe) */
}

/* Every 16-byte granule handed out so far: block starts are among them
 * (dlsym's few allocations: usually well under a KiB, so a few dozen
 * slots). */
void mt_boot_pin_all(void)
{
    if (!atomic_load_explicit(&mt_sfilter, memory_order_relaxed))
        return;
    size_t used = atomic_load_explicit(&g_boot_used, memory_order_seq_cst);
    if (used > BOOT_ARENA_BYTES)
        used = BOOT_ARENA_BYTES;
    for (size_t off = BOOT_HEADER; off < used; off += BOOT_HEADER)
        mt_sfilter_pin(mt_boot_arena + off);
}

size_t mt_boot_size(const void *p)
{
    size_t size;
    memcpy(&size, (const char *)p - sizeof(size_t), sizeof size);
    return size;
}

/* The next definition of name; glibc's __libc_<name> if there is none
 * (only a broken link order gets there, but a NULL here would crash). */
static void *next_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        char alt[64] = "__libc_";
        strncat(alt, name, sizeof alt - 8);
        f = dlsym(RTLD_DEFAULT, alt);
        mt_dl_forget_error();
    }
    return f;
}

static void fast_fns(mt_real_fns *r);

bool mt_path_is_libc(const char *path)
{
    const char *base = strrchr(path, '/');
    return strcmp(base ? base + 1 : path, "libc.so.6") == 0;
}

/* dl_iterate_phdr callback: whether the module holding *arg is libc.so.6
 * (1), or not (-1); 0 to go on. */
static int module_is_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t a = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
            return info->dlpi_name && mt_path_is_libc(info->dlpi_name) ? 1 : -1;
    }
    return 0;
}

/* Whether the next malloc is glibc's own (see mt_path_is_libc).  By the
 * module's address ranges, not dladdr: dladdr also looks for the nearest
 * symbol, a walk of libc's whole .dynsym (~30 us and several page faults
 * in every preloaded process: docs/performance.md, "Sixth round").
 * Allocates nothing. */
static bool malloc_is_glibc(void *fn)
{
    return fn && dl_iterate_phdr(module_is_libc, fn) == 1;
}

static void resolve_all(void)
{
    mt_real_fns r;
    memset(&r, 0, sizeof r);
    r.malloc = (void *(*)(size_t))next_sym("malloc");
    r.free = (void (*)(void *))next_sym("free");
    r.calloc = (void *(*)(size_t, size_t))next_sym("calloc");
    r.realloc = (void *(*)(void *, size_t))next_sym("realloc");
    r.reallocarray = (void *(*)(void *, size_t, size_t))next_sym("reallocarray");
    r.posix_memalign = (int (*)(void **, size_t, size_t))next_sym("posix_memalign");
    r.memalign = (void *(*)(size_t, size_t))next_sym("memalign");
    r.aligned_alloc = (void *(*)(size_t, size_t))next_sym("aligned_alloc");
    r.valloc = (void *(*)(size_t))next_sym("valloc");
    r.pvalloc = (void *(*)(size_t))next_sym("pvalloc");
    r.malloc_usable_size = (size_t(*)(void *))next_sym("malloc_usable_size");
    r.exit_ = (void (*)(int))next_sym("_exit");
    r.is_glibc = malloc_is_glibc((void *)r.malloc);
    fast_fns(&r);
    mt_real = r;
}

/* The fast paths' functions when the real allocator reports to memtop's
 * hooks: run inside memtop, so that those hooks pass the call through
 * (the fast path counted it already, or counts it after). */
#define INSIDE(name, ret, params, args)                                                            \
    static ret name##_inside params                                                                \
    {                                                                                              \
        mt_gate_saved s = mt_gate_hold();                                                          \
        ret r = mt_real.name args;                                                                 \
        mt_gate_unhold(s);                                                                         \
        return r;                                                                                  \
    }
INSIDE(malloc, void *, (size_t size), (size))
INSIDE(calloc, void *, (size_t n, size_t m), (n, m))
INSIDE(realloc, void *, (void *old, size_t size), (old, size))
#undef INSIDE

static void free_inside(void *p)
{
    mt_gate_saved s = mt_gate_hold();
    mt_real.free(p);
    mt_gate_unhold(s);
}

void mt_real_fast_inside(void)
{
    mt_real.malloc_fast = malloc_inside;
    mt_real.calloc_fast = calloc_inside;
    mt_real.realloc_fast = realloc_inside;
    mt_real.free_fast = free_inside;
}

/* The fast paths' functions at resolution: glibc's are called directly
 * (they call no function memtop interposes on); another allocator's
 * allocating functions inside memtop, as the fast paths always did, in
 * case they call the malloc family by its exported names (a realloc made
 * of malloc and free would otherwise be counted twice); its free
 * directly, as before, until the scan says the allocator is one memtop
 * hooks. */
static void fast_fns(mt_real_fns *r)
{
    r->malloc_fast = r->is_glibc ? r->malloc : malloc_inside;
    r->calloc_fast = r->is_glibc ? r->calloc : calloc_inside;
    r->realloc_fast = r->is_glibc ? r->realloc : realloc_inside;
    r->free_fast = r->free;
}

void mt_real_fast_direct(void *(*malloc_)(size_t), void *(*calloc_)(size_t, size_t),
                         void *(*realloc_)(void *, size_t), void (*free_)(void *))
{
    mt_real.malloc_fast = malloc_;
    mt_real.calloc_fast = calloc_;
    mt_real.realloc_fast = realloc_;
    mt_real.free_fast = free_;
}

bool mt_real_resolve(void)
{
    int st = atomic_load_explicit(&mt_resolve_state, memory_order_acquire);
    if (st == MT_RESOLVE_DONE)
        return true;
    int expected = MT_RESOLVE_NONE;
    if (!atomic_compare_exchange_strong_explicit(&mt_resolve_state, &expected, MT_RESOLVE_BUSY,
                                                 memory_order_acq_rel, memory_order_acquire))
        return false; /* someone (maybe dlsym below us) is resolving: use the arena */
    resolve_all();
    atomic_store_explicit(&mt_resolve_state, MT_RESOLVE_DONE, memory_order_release);
    return true;
}
