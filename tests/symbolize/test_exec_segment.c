/* test_exec_segment.c -- unit tests of mt_exec_segment_of: the executable
 * PT_LOAD of a module's ELF file, and none (never a crash, never a wrong
 * segment) for a file with another build-id, a truncated or malformed one
 * (program headers or a segment outside the file).  argv[1] is a 64-bit
 * ELF file with a GNU build-id and one executable segment. */
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "exec_segment.h"

static const char *elf_path;
static uint8_t build_id[64];
static unsigned build_id_len;
static char *image; /* the file's bytes */
static size_t image_len;
static Elf64_Phdr *exec_ph; /* in image */

static void load(void)
{
    FILE *f = fopen(elf_path, "rb");
    assert_non_null(f);
    struct stat st;
    assert_int_equal(fstat(fileno(f), &st), 0);
    image_len = (size_t)st.st_size;
    image = malloc(image_len);
    assert_int_equal(fread(image, 1, image_len, f), image_len);
    fclose(f);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
    assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr *ph = (Elf64_Phdr *)(image + eh->e_phoff + (size_t)i * eh->e_phentsize);
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
            exec_ph = ph;
    }
    assert_non_null(exec_ph);
    elf_version(EV_CURRENT);
    int fd = open(elf_path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    const void *bits;
    ssize_t n = dwelf_elf_gnu_build_id(e, &bits);
    assert_true(n > 0 && (size_t)n <= sizeof build_id);
    memcpy(build_id, bits, (size_t)n);
    build_id_len = (unsigned)n;
    elf_end(e);
    close(fd);
}

static bool segment_of(const char *path, mt_exec_segment *seg)
{
    mt_sym_module m = {path, build_id, build_id_len, 0, 0, 0};
    return mt_exec_segment_of(&m, seg);
}

/* A copy of the file with size bytes, after fix(image copy) edited it. */
static void write_copy(const char *path, size_t size, void (*fix)(char *img))
{
    char *img = malloc(image_len);
    memcpy(img, image, image_len);
    if (fix)
        fix(img);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(img, 1, size, f), size);
    fclose(f);
    free(img);
}

static Elf64_Phdr *exec_in(char *img)
{
    return (Elf64_Phdr *)(img + ((char *)exec_ph - image));
}

static void segment_beyond_file(char *img)
{
    exec_in(img)->p_offset = image_len - 16;
}

static void phdrs_beyond_file(char *img)
{
    ((Elf64_Ehdr *)img)->e_phoff = (Elf64_Off)image_len + 4096;
}

static void memsz_overflows(char *img)
{
    exec_in(img)->p_memsz = UINT64_MAX - 8;
}

static void test_good(void **state)
{
    (void)state;
    mt_exec_segment seg;
    assert_true(segment_of(elf_path, &seg));
    assert_int_equal(seg.vaddr, exec_ph->p_vaddr);
    assert_int_equal(seg.memsz, exec_ph->p_memsz);
    assert_int_equal(seg.offset, exec_ph->p_offset);
}

static void test_hostile(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_exec_segment.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/elf", dir);
    mt_exec_segment seg;
    void (*fixes[])(char *) = {segment_beyond_file, phdrs_beyond_file, memsz_overflows};
    for (size_t i = 0; i < sizeof fixes / sizeof *fixes; i++) {
        write_copy(path, image_len, fixes[i]);
        assert_false(segment_of(path, &seg));
    }
    write_copy(path, exec_ph->p_offset + exec_ph->p_filesz / 2, NULL); /* code cut */
    assert_false(segment_of(path, &seg));
    write_copy(path, 100, NULL);
    assert_false(segment_of(path, &seg));
    write_copy(path, image_len, NULL);
    assert_true(segment_of(path, &seg));
    build_id[0] ^= 1; /* another build */
    assert_false(segment_of(path, &seg));
    build_id[0] ^= 1;
    mt_sym_module none = {path, build_id, 0, 0, 0, 0}; /* nothing to check it against */
    assert_false(mt_exec_segment_of(&none, &seg));
    unlink(path);
    assert_false(segment_of(path, &seg));
    mt_sym_module vdso = {"[vdso]", build_id, build_id_len, 0, 0, 0};
    assert_false(mt_exec_segment_of(&vdso, &seg));
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ELF\n", argv[0]);
        return 2;
    }
    elf_path = argv[1];
    load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_hostile),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(image);
    return rc;
}
