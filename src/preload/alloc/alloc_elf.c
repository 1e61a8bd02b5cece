/* alloc_elf.c -- walk the function symbols of a module's file.
 *
 * The allocator scan (alloc_scan.c) needs every function a module defines,
 * hidden ones included: a statically linked jemalloc's entry points are
 * often only in .symtab.  So the file itself is read, not just the loaded
 * image's dynamic section: mapped read-only and private, walked, unmapped.
 * No malloc anywhere (the scan runs inside the target, possibly before
 * the allocator it looks for could be called safely); every offset and
 * size taken from the file is checked against the mapping first.
 *
 * MiniDebugInfo: a stripped file may carry an xz-compressed ELF with a
 * .symtab in its .gnu_debugdata section (Fedora and others ship them; a
 * Debian user can add one with objcopy).  It is decompressed with liblzma
 * into mmap'd memory (liblzma is given an allocator that uses mmap only),
 * and that inner .symtab is walked too.
 */
#define _GNU_SOURCE
#include "alloc_elf.h"

#include "core_common.h"

#include <elf.h>
#include <fcntl.h>
#include <lzma.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUGDATA_OUT_MAX (256ull << 20) /* a larger MiniDebugInfo is skipped */

typedef struct elf_image {
    const unsigned char *base;
    uint64_t size;
} elf_image;

/* The section headers of img, or NULL if they do not fit. */
static const Elf64_Shdr *sections(const elf_image *img, unsigned *n)
{
    if (img->size < sizeof(Elf64_Ehdr) || memcmp(img->base, ELFMAG, SELFMAG) != 0 ||
        img->base[EI_CLASS] != ELFCLASS64)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->base;
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > img->size ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > img->size - eh->e_shoff)
        return NULL;
    *n = eh->e_shnum;
    return (const Elf64_Shdr *)(img->base + eh->e_shoff);
}

static bool in_file(const elf_image *img, uint64_t off, uint64_t len)
{
    return off <= img->size && len <= img->size - off;
}

/* The symbols of one symbol table section (and its string table). */
static void walk_symtab(const elf_image *img, const Elf64_Shdr *sh, unsigned nsh, unsigned i,
                        uint64_t bias, mt_elf_sym_fn fn, void *arg)
{
    const Elf64_Shdr *s = &sh[i];
    if (s->sh_type == SHT_NOBITS || s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= nsh ||
        !in_file(img, s->sh_offset, s->sh_size))
        return;
    const Elf64_Shdr *str = &sh[s->sh_link];
    if (str->sh_type == SHT_NOBITS || !in_file(img, str->sh_offset, str->sh_size) ||
        str->sh_size == 0)
        return;
    const char *strs = (const char *)img->base + str->sh_offset;
    if (strs[str->sh_size - 1] != '\0')
        return; /* a name could run off the end */
    const Elf64_Sym *syms = (const Elf64_Sym *)(img->base + s->sh_offset);
    uint64_t n = s->sh_size / sizeof(Elf64_Sym);
    bool exported = s->sh_type == SHT_DYNSYM;
    for (uint64_t k = 1; k < n; k++) {
        const Elf64_Sym *y = &syms[k];
        unsigned type = ELF64_ST_TYPE(y->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || y->st_shndx == SHN_UNDEF ||
            y->st_name >= str->sh_size || y->st_value == 0)
            continue;
        unsigned bind = ELF64_ST_BIND(y->st_info);
        mt_elf_sym sym = {strs + y->st_name, bias + y->st_value, y->st_size, exported,
                          bind == STB_GLOBAL || bind == STB_WEAK};
        fn(arg, &sym);
    }
}

static void *lz_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n) || n > SIZE_MAX - 64)
        return NULL;
    n += 16;
    unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, &n, sizeof n);
    return p + 16;
}

static void lz_free(void *opaque, void *ptr)
{
    (void)opaque;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - 16;
    size_t n;
    memcpy(&n, p, sizeof n);
    munmap(p, n);
}

static void walk_image(const elf_image *img, uint64_t bias, mt_elf_sym_fn fn, void *arg,
                       bool outer);

/* The .symtab of a MiniDebugInfo section's inner ELF. */
static void walk_debugdata(const elf_image *img, const Elf64_Shdr *s, uint64_t bias,
                           mt_elf_sym_fn fn, void *arg)
{
    if (s->sh_type == SHT_NOBITS || !in_file(img, s->sh_offset, s->sh_size) || s->sh_size == 0)
        return;
    uint64_t cap = s->sh_size * 16 + (1u << 20);
    cap = cap < DEBUGDATA_OUT_MAX ? cap : DEBUGDATA_OUT_MAX;
    unsigned char *out =
        mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (out == MAP_FAILED)
        return;
    lzma_allocator la = {lz_alloc, lz_free, NULL};
    uint64_t memlimit = 64u << 20;
    size_t in_pos = 0, out_pos = 0;
    if (lzma_stream_buffer_decode(&memlimit, 0, &la, img->base + s->sh_offset, &in_pos, s->sh_size,
                                  out, &out_pos, cap) == LZMA_OK) {
        elf_image inner = {out, out_pos};
        walk_image(&inner, bias, fn, arg, false);
    }
    munmap(out, cap);
}

static void walk_image(const elf_image *img, uint64_t bias, mt_elf_sym_fn fn, void *arg, bool outer)
{
    unsigned nsh;
    const Elf64_Shdr *sh = sections(img, &nsh);
    if (!sh)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->base;
    const Elf64_Shdr *names = eh->e_shstrndx < nsh ? &sh[eh->e_shstrndx] : NULL;
    bool names_ok = names && names->sh_type != SHT_NOBITS &&
                    in_file(img, names->sh_offset, names->sh_size) && names->sh_size > 0 &&
                    img->base[names->sh_offset + names->sh_size - 1] == '\0';
    for (unsigned i = 0; i < nsh; i++) {
        if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM)
            walk_symtab(img, sh, nsh, i, bias, fn, arg);
        else if (outer && names_ok && sh[i].sh_name < names->sh_size &&
                 strcmp((const char *)img->base + names->sh_offset + sh[i].sh_name,
                        ".gnu_debugdata") == 0)
            walk_debugdata(img, &sh[i], bias, fn, arg);
    }
}

bool mt_elf_each_func(const char *path, uint64_t bias, mt_elf_sym_fn fn, void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return false;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return false;
    elf_image img = {map, (uint64_t)st.st_size};
    unsigned nsh;
    bool ok = sections(&img, &nsh) != NULL;
    if (ok)
        walk_image(&img, bias, fn, arg, true);
    munmap(map, (size_t)st.st_size);
    return ok;
}

const void *mt_elf_lzma_entry(void)
{
    return (const void *)(uintptr_t)lzma_stream_buffer_decode;
}
