/* hook_loaded_sym.c -- the definition of a function in the loaded modules,
 * found in their dynamic symbol tables in memory.
 *
 * Why: libmemtop.so defines mimalloc's mi_* names (alloc_mimalloc.c) and
 * calls the next definition, found with dlsym(RTLD_NEXT).  A libmimalloc
 * loaded RTLD_LOCAL, as the dependency of a library opened with dlopen, is
 * not in the global scope, so dlsym(RTLD_NEXT) does not find it, while
 * that library's own mi_* references bind to memtop's definitions (the
 * global scope comes first).  Until the scan redirects libmimalloc's entry
 * points (the next dlsym, dlclose or publisher poll), memtop's mi_malloc
 * would return NULL where the program's call would succeed: the calls
 * made by the library's constructors, inside dlopen, hit that.  So the
 * next definition is then looked up here, in every loaded module but
 * libmemtop.so, in load order.
 *
 * How: dl_iterate_phdr lists the modules; each one's PT_DYNAMIC gives its
 * .dynsym, .dynstr and hash table (GNU, else SysV), which the loader has
 * read already: a lookup costs a hash and a short chain, reads no file and
 * allocates nothing (the allocator looked for may be the one malloc would
 * reach).  glibc stores the tables' addresses relocated on most targets,
 * unrelocated on some, and the vdso's are never relocated: an address
 * is taken as is if it lies in the module, else with the module's bias.
 * Only exported functions count (global or weak, default or protected
 * visibility, not a hidden version); an IFUNC is skipped (its resolver
 * would have to run).
 */
#define _GNU_SOURCE
#include "hook_loaded_sym.h"

#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct dyn_tabs {
    uint64_t bias, lo, hi; /* the module's load bias and extent */
    const ElfW(Sym) * sym;
    const char *str;
    const uint32_t *gnu, *sysv; /* hash tables (NULL: absent) */
    const ElfW(Half) * versym;
} dyn_tabs;

typedef struct query {
    const char *name;
    uint32_t gnu_h, sysv_h;
    uint64_t self; /* an address inside libmemtop.so */
    void *found;
} query;

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        h ^= (h >> 24) & 0xf0;
    }
    return h & 0x0fffffff;
}

/* A table's address from its dynamic entry, relocated or not; NULL if
 * neither lies in the module. */
static const void *dyn_ptr(const dyn_tabs *t, uint64_t p)
{
    if (p >= t->lo && p < t->hi)
        return (const void *)(uintptr_t)p;
    if (p + t->bias >= t->lo && p + t->bias < t->hi)
        return (const void *)(uintptr_t)(p + t->bias);
    return NULL;
}

static bool read_dynamic(const struct dl_phdr_info *info, dyn_tabs *t)
{
    const ElfW(Dyn) *dyn = NULL;
    memset(t, 0, sizeof *t);
    t->bias = info->dlpi_addr;
    t->lo = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(uintptr_t)a;
        if (ph->p_type != PT_LOAD)
            continue;
        t->lo = a < t->lo ? a : t->lo;
        t->hi = a + ph->p_memsz > t->hi ? a + ph->p_memsz : t->hi;
    }
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        const void *p = dyn_ptr(t, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_SYMTAB)
            t->sym = p;
        else if (dyn->d_tag == DT_STRTAB)
            t->str = p;
        else if (dyn->d_tag == DT_GNU_HASH)
            t->gnu = p;
        else if (dyn->d_tag == DT_HASH)
            t->sysv = p;
        else if (dyn->d_tag == DT_VERSYM)
            t->versym = p;
    }
    return t->sym && t->str && (t->gnu || t->sysv);
}

/* Symbol i is an exported function named name. */
static bool is_def(const dyn_tabs *t, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &t->sym[i];
    unsigned bind = ELF64_ST_BIND(s->st_info), vis = ELF64_ST_VISIBILITY(s->st_other);
    return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
           (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (vis == STV_DEFAULT || vis == STV_PROTECTED) &&
           !(t->versym && (t->versym[i] & 0x8000)) && strcmp(t->str + s->st_name, name) == 0;
}

/* The index of name in a GNU hash table (0: absent). */
static uint32_t gnu_lookup(const dyn_tabs *t, const query *q)
{
    const uint32_t *g = t->gnu;
    uint32_t nbucket = g[0], symoff = g[1], nbloom = g[2], shift = g[3];
    if (!nbucket || !nbloom)
        return 0;
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(g + 4);
    const uint32_t *bucket = (const uint32_t *)(bloom + nbloom);
    const uint32_t *chain = bucket + nbucket;
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    uint32_t h = q->gnu_h;
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
    if ((bloom[(h / bits) % nbloom] & mask) != mask)
        return 0;
    for (uint32_t i = bucket[h % nbucket]; i >= symoff; i++) {
        uint32_t h2 = chain[i - symoff];
        if ((h | 1) == (h2 | 1) && is_def(t, i, q->name))
            return i;
        if (h2 & 1)
            break; /* the end of this bucket's chain */
    }
    return 0;
}

/* The index of name in a SysV hash table (0: absent). */
static uint32_t sysv_lookup(const dyn_tabs *t, const query *q)
{
    uint32_t nbucket = t->sysv[0], nchain = t->sysv[1];
    if (!nbucket)
        return 0;
    const uint32_t *bucket = t->sysv + 2, *chain = bucket + nbucket;
    uint32_t i = bucket[q->sysv_h % nbucket];
    for (uint32_t steps = 0; i && i < nchain && steps < nchain; i = chain[i], steps++)
        if (is_def(t, i, q->name))
            return i;
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    query *q = arg;
    dyn_tabs t;
    if (!read_dynamic(info, &t) || (q->self >= t.lo && q->self < t.hi))
        return 0;
    uint32_t i = t.gnu ? gnu_lookup(&t, q) : sysv_lookup(&t, q);
    if (!i)
        return 0;
    q->found = (void *)(uintptr_t)(t.bias + t.sym[i].st_value);
    return 1;
}

static int peek_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

unsigned long long mt_loaded_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(peek_adds, &adds);
    return adds;
}

void *mt_loaded_sym(const char *name)
{
    query q = {name, gnu_hash(name), sysv_hash(name), (uint64_t)(uintptr_t)&mt_loaded_sym, NULL};
    dl_iterate_phdr(visit, &q);
    return q.found;
}
