/* reader_mutation.c -- deterministic mutation test of the reader: N random
 * byte/word mutations and truncations of a valid segment, each run through
 * the whole reader (built with ASan/UBSan when available); in 1 of 8 runs
 * the file shrinks after the reader mapped it (a SIGBUS without the guard
 * of shm_guard.h).  Passes if nothing crashes, every accepted result is
 * consistent (reader_exercise.c), and both outcomes occur (so the
 * mutations really reach the checks). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader_exercise.h"
#include "seg_builder.h"
#include "test_xorshift.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    return test_xorshift(&r->s);
}

static const uint64_t specials[] = {0,           1,
                                    7,           8,
                                    0xff,        0x7fffffff,
                                    0x80000000u, 0xffffffffu,
                                    UINT64_MAX,  UINT64_MAX - 7,
                                    1ull << 63,  MT_HEADER_BYTES};

/* An offset where mutations matter most: the header's fixed part, a
 * region's first records, or anywhere. */
static size_t pick_offset(rng *r, const sb_seg *seg)
{
    const mt_shm_header *h = sb_header(seg);
    switch (next(r) % 4) {
    case 0:
        return next(r) % offsetof(mt_shm_header, control);
    case 1:
        return h->defs_off + next(r) % 512;
    case 2:
        return h->modules_off + next(r) % (2 * sizeof(mt_shm_module));
    default:
        return h->slots[next(r) % MT_SLOTS].off + next(r) % 1024;
    }
}

static void mutate(rng *r, unsigned char *buf, const sb_seg *seg, uint64_t pristine_size)
{
    size_t off = pick_offset(r, seg);
    uint64_t v = next(r) % 3 ? specials[next(r) % (sizeof specials / sizeof specials[0])] : next(r);
    if (next(r) % 3 == 0)
        v = pristine_size + (next(r) % 64) - 32; /* near the file size */
    switch (next(r) % 4) {
    case 0:
        buf[off] = (unsigned char)v;
        break;
    case 1:
        buf[off] ^= (unsigned char)(1u << (next(r) % 8));
        break;
    default:
        off &= ~(size_t)7;
        if (off + 8 <= pristine_size)
            memcpy(buf + off, &v, 8);
    }
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 20000;
    sb_spec spec;
    sb_seg seg;
    sb_default_spec(&spec);
    spec.defs_cap = spec.slot_cap = 4096;
    if (sb_build(&seg, &spec) != 0)
        return 1;
    char path[] = "/tmp/memtop-mutation-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, (off_t)seg.size) != 0)
        return 1;
    unsigned char *map = mmap(NULL, seg.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return 1;
    rng r = {0x9e3779b97f4a7c15ull};
    long counts[MT_E_GONE + 1] = {0};
    for (long i = 0; i < iterations; i++) {
        if (ftruncate(fd, (off_t)seg.size) != 0)
            return 1;
        memcpy(map, seg.buf, seg.size);
        unsigned k = 1 + next(&r) % 3;
        for (unsigned j = 0; j < k; j++)
            mutate(&r, map, &seg, seg.size);
        uint64_t shrink_to = UINT64_MAX;
        switch (next(&r) % 16) {
        case 0: { /* truncate, often to a page boundary */
            uint64_t to = next(&r) % seg.size;
            if (ftruncate(fd, (off_t)(next(&r) % 2 ? to & ~4095ull : to)) != 0)
                return 1;
            break;
        }
        case 1:
        case 2: /* the owner shrinks the file under the open reader */
            shrink_to = next(&r) % seg.size;
            shrink_to = next(&r) % 2 ? shrink_to & ~4095ull : shrink_to;
            break;
        }
        counts[mt_exercise_shrunk(-1, path, shrink_to)]++;
    }
    munmap(map, seg.size);
    close(fd);
    unlink(path);
    sb_free(&seg);
    long errors = iterations - counts[MT_OK];
    for (int c = 0; c <= MT_E_GONE; c++)
        if (counts[c])
            printf("%-10s %ld\n", mt_errc_name((mt_errc)c), counts[c]);
    if (iterations >= 100 && (counts[MT_OK] == 0 || errors == 0)) {
        fprintf(stderr, "mutations never reached the checks (ok %ld, errors %ld)\n", counts[MT_OK],
                errors);
        return 1;
    }
    printf("%ld mutated segments: %ld accepted, %ld rejected, no crash\n", iterations,
           counts[MT_OK], errors);
    return 0;
}
