/* core_dynsym.c -- a symbol's definition in one loaded module, found in
 * its dynamic symbol table in memory.
 *
 * A module's PT_DYNAMIC gives its .dynsym, .dynstr, hash table (GNU, else
 * SysV) and version definitions, which the loader has read already: a
 * lookup costs a hash and a short chain, reads no file and allocates
 * nothing (the allocator that malloc would reach may not be set up yet, or
 * be the one being looked for).  glibc stores the tables' addresses
 * relocated on most targets, unrelocated on some, and the vdso's are never
 * relocated: an address is taken as is if it lies in the module, else
 * with the module's bias.
 */
#define _GNU_SOURCE
#include "core_dynsym.h"

#include <string.h>

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

mt_dynsym_query mt_dynsym_name(const char *name, unsigned type)
{
    return (mt_dynsym_query){name, gnu_hash(name), sysv_hash(name), type};
}

/* A table's address from its dynamic entry, relocated or not; NULL if
 * neither lies in the module. */
static const void *dyn_ptr(const mt_dynsym *t, uint64_t p)
{
    if (p >= t->lo && p < t->hi)
        return (const void *)(uintptr_t)p;
    if (p + t->bias >= t->lo && p + t->bias < t->hi)
        return (const void *)(uintptr_t)(p + t->bias);
    return NULL;
}

bool mt_dynsym_read(const struct dl_phdr_info *info, mt_dynsym *t)
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
        if (dyn->d_tag == DT_VERDEFNUM) {
            t->verdefnum = dyn->d_un.d_val;
            continue;
        }
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
        else if (dyn->d_tag == DT_VERDEF)
            t->verdef = p;
    }
    return t->sym && t->str && (t->gnu || t->sysv);
}

/* Symbol i is the exported definition q asks for. */
static bool is_def(const mt_dynsym *t, uint32_t i, const mt_dynsym_query *q)
{
    const ElfW(Sym) *s = &t->sym[i];
    unsigned bind = ELF64_ST_BIND(s->st_info), vis = ELF64_ST_VISIBILITY(s->st_other);
    return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == q->type &&
           (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (vis == STV_DEFAULT || vis == STV_PROTECTED) &&
           !(t->versym && (t->versym[i] & 0x8000)) && strcmp(t->str + s->st_name, q->name) == 0;
}

/* The index of q in a GNU hash table (0: absent). */
static uint32_t gnu_lookup(const mt_dynsym *t, const mt_dynsym_query *q)
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
        if ((h | 1) == (h2 | 1) && is_def(t, i, q))
            return i;
        if (h2 & 1)
            break; /* the end of this bucket's chain */
    }
    return 0;
}

/* The index of q in a SysV hash table (0: absent). */
static uint32_t sysv_lookup(const mt_dynsym *t, const mt_dynsym_query *q)
{
    uint32_t nbucket = t->sysv[0], nchain = t->sysv[1];
    if (!nbucket)
        return 0;
    const uint32_t *bucket = t->sysv + 2, *chain = bucket + nbucket;
    uint32_t i = bucket[q->sysv_h % nbucket];
    for (uint32_t steps = 0; i && i < nchain && steps < nchain; i = chain[i], steps++)
        if (is_def(t, i, q))
            return i;
    return 0;
}

uint32_t mt_dynsym_find(const mt_dynsym *t, const mt_dynsym_query *q)
{
    return t->gnu ? gnu_lookup(t, q) : sysv_lookup(t, q);
}

const char *mt_dynsym_version(const mt_dynsym *t, uint32_t i)
{
    if (!t->versym || !t->verdef)
        return NULL;
    unsigned ndx = t->versym[i] & 0x7fff;
    const ElfW(Verdef) *d = t->verdef;
    for (uint64_t n = 0; n < t->verdefnum; n++) {
        if (d->vd_ndx == ndx && d->vd_cnt > 0) {
            const ElfW(Verdaux) *a = (const void *)((const char *)d + d->vd_aux);
            return t->str + a->vda_name;
        }
        if (!d->vd_next)
            break;
        d = (const void *)((const char *)d + d->vd_next);
    }
    return NULL;
}
