/* alloc_elf.h -- the function symbols a module defines, read from its file
 * (for the allocator scan, alloc_scan.c). */
#ifndef MT_ALLOC_ELF_H
#define MT_ALLOC_ELF_H

#include <stdbool.h>
#include <stdint.h>

/* One defined function symbol: its name, its address in the process
 * (bias + st_value), its size, and whether it is exported (.dynsym)
 * rather than only in the static symbol table (.symtab). */
typedef struct mt_elf_sym {
    const char *name;
    uint64_t addr, size;
    bool exported;
    bool global; /* STB_GLOBAL or STB_WEAK (hidden ones are local in a linked file) */
} mt_elf_sym;

typedef void (*mt_elf_sym_fn)(void *arg, const mt_elf_sym *sym);

/* Calls fn for every defined function symbol in the .dynsym and .symtab
 * of the ELF file at path, a module loaded at bias.  The file is mapped
 * read-only and private for the walk (no allocation: this runs inside the
 * target, where malloc may be the allocator being looked for); every
 * offset is checked against the file's size.  False if the file cannot be
 * opened, mapped or is no 64-bit ELF. */
bool mt_elf_each_func(const char *path, uint64_t bias, mt_elf_sym_fn fn, void *arg);

/* The liblzma function memtop calls (MiniDebugInfo), by address: tells
 * the allocator scan which module is memtop's own liblzma. */
const void *mt_elf_lzma_entry(void);

#endif
