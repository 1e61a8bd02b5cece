/* preload_never.c -- will a launched PROG ever run libmemtop.so? (see
 * preload_never.h).  The executable's ELF program headers say whether it
 * has a dynamic loader at all (PT_INTERP); its maps say whether the loader
 * has gone past the preloaded libraries without libmemtop.so. */
#include "preload_never.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "shm_maps.h"

#define MAX_PHDRS 4096

/* The p_type, p_offset and p_filesz of program header i of fd. */
static int read_phdr(int fd, bool is64, uint64_t off, uint32_t *type, uint64_t *at, uint64_t *size)
{
    Elf64_Phdr p64;
    Elf32_Phdr p32;
    if (is64 ? pread(fd, &p64, sizeof p64, (off_t)off) != (ssize_t)sizeof p64
             : pread(fd, &p32, sizeof p32, (off_t)off) != (ssize_t)sizeof p32)
        return -1;
    *type = is64 ? p64.p_type : p32.p_type;
    *at = is64 ? p64.p_offset : p32.p_offset;
    *size = is64 ? p64.p_filesz : p32.p_filesz;
    return 0;
}

/* The interpreter fd's ELF program headers name (PT_INTERP) into buf: 1;
 * 0: none (statically linked); -1: not known (not ELF, unreadable). */
static int elf_interp(int fd, char *buf, size_t n)
{
    Elf64_Ehdr e64;
    Elf32_Ehdr e32;
    if (pread(fd, &e64, sizeof e64, 0) < (ssize_t)sizeof e32 ||
        memcmp(e64.e_ident, ELFMAG, SELFMAG) != 0)
        return -1;
    bool is64 = e64.e_ident[EI_CLASS] == ELFCLASS64;
    memcpy(&e32, &e64, sizeof e32);
    uint64_t phoff = is64 ? e64.e_phoff : e32.e_phoff;
    unsigned num = is64 ? e64.e_phnum : e32.e_phnum,
             size = is64 ? e64.e_phentsize : e32.e_phentsize;
    if (num > MAX_PHDRS || size < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
        return -1;
    for (unsigned i = 0; i < num; i++) {
        uint32_t type;
        uint64_t at, len;
        if (read_phdr(fd, is64, phoff + (uint64_t)i * size, &type, &at, &len) != 0)
            return -1;
        if (type != PT_INTERP)
            continue;
        if (len == 0 || len >= n || pread(fd, buf, len, (off_t)at) != (ssize_t)len)
            return -1;
        buf[len] = '\0';
        return 1;
    }
    return 0;
}

/* What the maps of a dynamically linked program show. */
typedef struct seen {
    const char *exe, *interp; /* base names, skipped */
    bool preload, other;      /* libmemtop.so; another library */
} seen;

static int visit(int pid, const mt_map_entry *m, void *ctx)
{
    (void)pid;
    seen *s = ctx;
    const char *b = mt_path_base(m->path);
    if (mt_maps_is_preload(m->path))
        s->preload = true;
    else if (m->path[0] == '/' && strcmp(b, s->exe) != 0 && strcmp(b, s->interp) != 0)
        s->other = true;
    return s->preload;
}

/* pid's loader has mapped a library other than libmemtop.so, and not
 * libmemtop.so: it went past the preloaded ones without it. */
static bool loaded_without(int pid, const char *interp)
{
    char link[64], exe[4096];
    snprintf(link, sizeof link, "/proc/%d/exe", pid);
    ssize_t len = readlink(link, exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    seen s = {mt_path_base(exe), mt_path_base(interp), false, false};
    return mt_maps_scan(pid, visit, &s) == 0 && s.other && !s.preload;
}

bool mt_preload_never(int pid, char *why, size_t n)
{
    char path[64], interp[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    int rc = elf_interp(fd, interp, sizeof interp);
    close(fd);
    if (rc == 0)
        snprintf(why, n, "it is statically linked (LD_PRELOAD needs the dynamic loader)");
    else if (rc == 1 && loaded_without(pid, interp))
        snprintf(why, n,
                 "its dynamic loader did not load libmemtop.so (a setuid or setgid "
                 "program ignores LD_PRELOAD; or the library is of another architecture)");
    else
        return false;
    return true;
}
