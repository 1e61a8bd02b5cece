/* exec_segment.c -- a module's executable segment from its ELF file (see
 * exec_segment.h). */
#include "exec_segment.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwfl_session.h"
#include "proc_file.h"

static bool same_build_id(Elf *e, const mt_sym_module *m)
{
    const void *bits;
    ssize_t n = dwelf_elf_gnu_build_id(e, &bits);
    return n > 0 && (size_t)n == m->build_id_len && memcmp(bits, m->build_id, (size_t)n) == 0;
}

/* Whether program header ph is a loadable segment that fits in a file of
 * size bytes and in the address space. */
static bool sane_load(const GElf_Phdr *ph, uint64_t size)
{
    return ph->p_filesz <= ph->p_memsz && ph->p_memsz > 0 && ph->p_offset <= size &&
           ph->p_filesz <= size - ph->p_offset && ph->p_vaddr <= UINT64_MAX - ph->p_memsz;
}

/* e's one executable PT_LOAD (of a file of size bytes) into *out. */
static bool exec_phdr(Elf *e, uint64_t size, mt_exec_segment *out)
{
    size_t n;
    if (elf_getphdrnum(e, &n) != 0)
        return false;
    unsigned found = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            return false;
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
        if (!sane_load(&ph, size) || found++)
            return false;
        *out = (mt_exec_segment){ph.p_vaddr, ph.p_memsz, ph.p_offset};
    }
    return found == 1;
}

/* The segment from fd (consumed), if its build-id is m's. */
static bool read_segment(int fd, const mt_sym_module *m, mt_exec_segment *out)
{
    struct stat st;
    Elf *e = fstat(fd, &st) == 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    bool ok = e && elf_kind(e) == ELF_K_ELF && same_build_id(e, m) &&
              exec_phdr(e, (uint64_t)st.st_size, out);
    elf_end(e);
    close(fd);
    return ok;
}

/* The segment from the file at name (resolve: a path the target named,
 * else one of its /proc/PID names). */
static bool from_file(const char *name, bool resolve, const mt_sym_module *m, mt_exec_segment *out)
{
    char canon[PATH_MAX];
    bool trusted;
    const char *why;
    int fd = mt_dwfl_open_file(name, resolve, canon, &trusted, &why);
    return fd >= 0 && read_segment(fd, m, out);
}

bool mt_exec_segment_of(const mt_sym_module *m, mt_exec_segment *out)
{
    if (m->path[0] != '/' || !m->build_id_len || elf_version(EV_CURRENT) == EV_NONE)
        return false;
    if (from_file(m->path, true, m, out))
        return true;
    char alts[MT_PROC_ALT_MAX][PATH_MAX];
    int n = mt_proc_module_alts(m->pid, m->path, m->start, m->end, alts);
    for (int i = 0; i < n; i++)
        if (from_file(alts[i], false, m, out))
            return true;
    return false;
}
