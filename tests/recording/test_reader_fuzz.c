/* test_reader_fuzz.c -- libFuzzer harness for the recording reader and
 * replay (clang -fsanitize=fuzzer,address,undefined; CMake option
 * MEMTOP_FUZZ=ON).
 *
 * Input: the first byte picks the mode.  Even: the rest is a record stream
 * (type, length, payload ...), cut into up to four zstd frames at points
 * the next bytes choose, behind a valid file header, so the fuzzer reaches
 * the record checks without having to learn zstd.  Odd: the rest is the
 * file as is.  Seeds (version-1 and EVENTS2 events, in both forms):
 * `test_reader_mutation --seeds DIR`, then `test_reader_fuzz DIR`. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_reader_builder.h"
#include "test_reader_exercise.h"

static void framed(const uint8_t *data, size_t size, db_file *f)
{
    db_file_init(f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    size_t cuts = size >= 3 ? data[0] % 4 : 0, at = 0;
    const uint8_t *p = data + (size >= 3 ? 3 : size);
    size_t n = size >= 3 ? size - 3 : 0;
    for (size_t i = 0; i < cuts; i++) {
        size_t to = n ? (size_t)data[1 + i % 2] * n / 256 : 0;
        if (to > at) {
            db_bytes(&f->frame, p + at, to - at);
            db_flush(f);
            at = to;
        }
    }
    db_bytes(&f->frame, p + at, n - at);
    db_flush(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/memtop-dat-fuzz-%d", (int)getpid());
    if (!size)
        return 0;
    db_file f;
    if (data[0] % 2 == 0) {
        framed(data + 1, size - 1, &f);
        db_write(f.out.p, f.out.n, path);
        db_file_free(&f);
    } else {
        db_write(data + 1, size - 1, path);
    }
    mt_exercise_recording(path, size);
    return 0;
}
