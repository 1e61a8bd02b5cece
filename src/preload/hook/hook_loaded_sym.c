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
 * How: dl_iterate_phdr lists the modules; each one's dynamic symbol table
 * is read in memory (core_dynsym.c: no file, no allocation: the allocator
 * looked for may be the one malloc would reach).  Only exported functions
 * count (global or weak, default or protected visibility, not a hidden
 * version); an IFUNC is skipped (its resolver would have to run).
 */
#define _GNU_SOURCE
#include "hook_loaded_sym.h"

#include "core_dynsym.h"
#include "core_loader_gate.h"

#include <stddef.h>
#include <stdint.h>

typedef struct query {
    mt_dynsym_query q;
    uint64_t self; /* an address inside libmemtop.so */
    void *found;
} query;

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    query *q = arg;
    mt_dynsym t;
    if (!mt_dynsym_read(info, &t) || (q->self >= t.lo && q->self < t.hi))
        return 0;
    uint32_t i = mt_dynsym_find(&t, &q->q);
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
    mt_loader_iterate(peek_adds, &adds); /* a fork waits for it: core_loader_gate.c */
    return adds;
}

void *mt_loaded_sym(const char *name)
{
    query q = {mt_dynsym_name(name, STT_FUNC), (uint64_t)(uintptr_t)&mt_loaded_sym, NULL};
    mt_loader_iterate(visit, &q);
    return q.found;
}
