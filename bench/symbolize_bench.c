/* symbolize_bench.c -- time to symbolize N distinct addresses of one
 * binary with memtop's symbolizer (src/symbolize), cold (a new symbolizer:
 * open the file, read DWARF, fill the cache) and warm (the same addresses
 * again: cache hits, what a refresh costs).  Addresses are spread evenly
 * over the file's .text.  A benchmark, not a test: it prints figures.
 *
 *   memtop-symbolize-bench FILE [N]        (N default 10000) */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* .text's address range; 0 on success. */
static int text_range(const char *path, uint64_t *lo, uint64_t *size)
{
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    size_t shstrndx;
    int rc = -1;
    if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
        for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
            GElf_Shdr sh;
            const char *name = gelf_getshdr(s, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
            if (name && strcmp(name, ".text") == 0) {
                *lo = sh.sh_addr;
                *size = sh.sh_size;
                rc = 0;
            }
        }
    }
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    return rc;
}

typedef struct pass {
    double seconds;
    unsigned named, with_line, frames;
} pass;

static pass run(mt_symbolizer *s, const mt_sym_module *m, const uint64_t *addr, unsigned n)
{
    pass p = {0, 0, 0, 0};
    double t0 = now_s();
    for (unsigned i = 0; i < n; i++) {
        const mt_sym_result *r = mt_symbolize(s, m, addr[i]);
        p.named += r->frames[0].function != NULL;
        p.with_line += r->frames[0].line != 0;
        p.frames += r->nframes;
    }
    p.seconds = now_s() - t0;
    return p;
}

static void report(const char *what, pass p, unsigned n)
{
    printf("%-5s %10.1f ms  %8.2f us/address  (%u named, %u with file:line, %u source frames)\n",
           what, p.seconds * 1e3, p.seconds * 1e6 / n, p.named, p.with_line, p.frames);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [N]\n", argv[0]);
        return 2;
    }
    unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 10000;
    uint64_t lo, size;
    if (n == 0 || text_range(argv[1], &lo, &size) != 0 || size < n) {
        fprintf(stderr, "%s: no .text of at least %u bytes\n", argv[1], n);
        return 1;
    }
    uint64_t *addr = malloc(n * sizeof *addr);
    for (unsigned i = 0; i < n; i++)
        addr[i] = lo + size / n * i + (size / n) / 2;
    mt_sym_module m = {.path = argv[1]};
    mt_symbolizer *s = mt_symbolizer_new();
    printf("%s: %u distinct addresses over .text (0x%" PRIx64 ", %" PRIu64 " bytes)\n", argv[1], n,
           lo, size);
    report("cold", run(s, &m, addr, n), n);
    report("warm", run(s, &m, addr, n), n);
    mt_symbolizer_free(s);
    free(addr);
    return 0;
}
