/* fuzz_reader.c -- libFuzzer harness for the reader (clang
 * -fsanitize=fuzzer,address; CMake option MEMTOP_FUZZ=ON).
 *
 * Input: 12-byte records {u32 where, u64 value} patch a valid synthetic
 * segment (the top two bits of `where` pick a 1/2/4/8-byte write).  A
 * trailing partial record of one byte truncates the file to the fraction
 * data[0]/256 of its size; of two bytes or more, it leaves the file whole
 * until the reader mapped it, then shrinks it to data[1]/256 (the owner
 * truncating it under the reader). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader_exercise.h"
#include "seg_builder.h"

static sb_seg pristine; /* built once per fuzzing process */

static void patch(unsigned char *buf, size_t size, const uint8_t *rec)
{
    uint32_t where;
    uint64_t value;
    memcpy(&where, rec, 4);
    memcpy(&value, rec + 4, 8);
    size_t width = (size_t)1 << (where >> 30);
    size_t off = (where & 0x3fffffffu) % size;
    if (off + width <= size)
        memcpy(buf + off, &value, width);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!pristine.buf) {
        sb_spec spec;
        sb_default_spec(&spec);
        spec.defs_cap = spec.slot_cap = 4096;
        if (sb_build(&pristine, &spec) != 0)
            abort();
    }
    unsigned char *buf = malloc(pristine.size);
    memcpy(buf, pristine.buf, pristine.size);
    size_t n = pristine.size;
    uint64_t shrink_to = UINT64_MAX;
    for (; size >= 12; data += 12, size -= 12)
        patch(buf, n, data);
    if (size == 1)
        n = n * data[0] / 256;
    else if (size >= 2)
        shrink_to = (uint64_t)n * data[1] / 256;
    int fd = memfd_create("memtop-fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
        abort();
    free(buf);
    mt_exercise_shrunk(fd, NULL, shrink_to);
    return 0;
}
