/* core_dynsym.h -- a loaded module's dynamic symbol table, read in memory
 * (core_dynsym.c): no file, no allocation, no dl call that could fail.
 * Used where memtop must find a symbol without dlsym: the next definition
 * of a function outside the global scope (hook_loaded_sym.c) and glibc's
 * dlerror pointer (core_dlerror.c). */
#ifndef MT_CORE_DYNSYM_H
#define MT_CORE_DYNSYM_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* One module's tables, from its PT_DYNAMIC (NULL: absent). */
typedef struct mt_dynsym {
    uint64_t bias, lo, hi; /* the module's load bias and extent */
    const ElfW(Sym) * sym;
    const char *str;
    const uint32_t *gnu, *sysv; /* hash tables */
    const ElfW(Half) * versym;
    const ElfW(Verdef) * verdef;
    uint64_t verdefnum;
} mt_dynsym;

/* A name to look up, its hashes computed once (mt_dynsym_name), and the
 * symbol type wanted (STT_FUNC, STT_TLS, ...). */
typedef struct mt_dynsym_query {
    const char *name;
    uint32_t gnu_h, sysv_h;
    unsigned type;
} mt_dynsym_query;

mt_dynsym_query mt_dynsym_name(const char *name, unsigned type);

/* Reads the tables of a module dl_iterate_phdr lists.  False if it has
 * no symbol table, string table or hash table. */
bool mt_dynsym_read(const struct dl_phdr_info *info, mt_dynsym *t);

/* The index of the exported definition of q (global or weak, default or
 * protected visibility, not a hidden version, of type q->type) in the
 * module; 0: none. */
uint32_t mt_dynsym_find(const mt_dynsym *t, const mt_dynsym_query *q);

/* The name of symbol i's version (its DT_VERDEF entry); NULL: none. */
const char *mt_dynsym_version(const mt_dynsym *t, uint32_t i);

#endif
