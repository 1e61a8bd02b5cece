/* test_reader_mutation.c -- deterministic mutation test of the recording
 * reader and replay: N mutations of a valid recording, each run through
 * open, every seek and every view (built with ASan/UBSan when available).
 * Half mutate the decompressed records (then recompress them, so the
 * record checks are reached), half the file's bytes (zstd and framing),
 * some truncate.  Passes if nothing crashes, every accepted result is
 * consistent, and both outcomes occur.
 *
 * The pairs of mutations start in turn from the standard recording, a
 * culled one (the newest version, CULLED records) and one of long EVENTS2
 * records (db_long: hundreds of events each, frees naming old blocks,
 * blocks live at each TOTALS and frame end), which reaches the run
 * decoder (dat_reader_batch2.c) and the block table; the exercise's batch
 * pass defers the frames' blocks every other time; and the same in tick
 * order (version 5: the traces column's steps, PROCESS's order field);
 * and the standard one with an ALLOCATORS record after each round; and
 * random version-7 files, and version-8 ones (TAG_PAIRS tables, coded
 * tags: the table's checks and the codes' expansion).
 *
 * `test_reader_mutation --seeds DIR` instead writes the standard recording
 * (version 1 and EVENTS2 events), the culled one and the long ones into DIR as seeds for
 * the libFuzzer harness (test_reader_fuzz.c): as a file, and as a record
 * stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "test_reader_builder.h"
#include "test_reader_exercise.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    return test_xorshift(&r->s);
}

/* The decompressed records of each frame of f. */
typedef struct raw_frames {
    db_buf fr[DB_MAX_FRAMES];
    size_t n;
} raw_frames;

static void unpack(const db_file *f, raw_frames *out)
{
    size_t start = MT_DAT_HEADER_BYTES;
    out->n = f->nframes;
    for (size_t i = 0; i < f->nframes; i++) {
        memset(&out->fr[i], 0, sizeof out->fr[i]);
        size_t len = f->frame_end[i] - start;
        unsigned long long size = ZSTD_getFrameContentSize(f->out.p + start, len);
        unsigned char *tmp = malloc(size ? size : 1);
        size_t got = ZSTD_decompress(tmp, size, f->out.p + start, len);
        if (ZSTD_isError(got))
            abort();
        db_bytes(&out->fr[i], tmp, got);
        free(tmp);
        start = f->frame_end[i];
    }
}

static const uint64_t specials[] = {0, 1, 2, 3, 0x7f, 0x80, 0xff, 65536, 65537, UINT64_MAX};

static void mutate_bytes(rng *r, unsigned char *p, size_t n)
{
    if (!n)
        return;
    size_t off = next(r) % n;
    switch (next(r) % 4) {
    case 0:
        p[off] ^= (unsigned char)(1u << (next(r) % 8));
        break;
    case 1:
        p[off] = (unsigned char)specials[next(r) % (sizeof specials / sizeof specials[0])];
        break;
    case 2:
        p[off] = (unsigned char)next(r);
        break;
    default: /* a run of 0xff: long varints */
        for (size_t k = off; k < n && k < off + 1 + next(r) % 11; k++)
            p[k] = 0xff;
    }
}

/* Records mutated, recompressed into frames, in a file of the given
 * version (the culled recording's is the newest: its EVENTS2 decoding,
 * NEXT_TRACE included, is reached too). */
static void build_mutated_records(rng *r, const raw_frames *raw, uint32_t version, db_file *out)
{
    db_file_init(out, version, MT_DAT_ENDIAN_MARK);
    size_t victim = next(r) % raw->n;
    for (size_t i = 0; i < raw->n; i++) {
        db_bytes(&out->frame, raw->fr[i].p, raw->fr[i].n);
        if (i == victim || next(r) % 8 == 0) {
            unsigned k = 1 + next(r) % 3;
            for (unsigned j = 0; j < k; j++)
                mutate_bytes(r, out->frame.p, out->frame.n);
        }
        db_flush(out);
    }
}

static int write_seeds(const char *dir, const char *name, const db_file *f, const raw_frames *raw)
{
    char path[4096];
    db_buf b = {0};
    db_bytes(&b, "\x01", 1); /* odd: the file as is */
    db_bytes(&b, f->out.p, f->out.n);
    snprintf(path, sizeof path, "%s/%s-file", dir, name);
    int rc = db_write(b.p, b.n, path);
    b.n = 0;
    db_bytes(&b, "\x00\x00\x00\x00", 4); /* even, one frame: the records */
    for (size_t i = 0; i < raw->n; i++)
        db_bytes(&b, raw->fr[i].p, raw->fr[i].n);
    snprintf(path, sizeof path, "%s/%s-records", dir, name);
    rc |= db_write(b.p, b.n, path);
    db_buf_free(&b);
    return rc ? 1 : 0;
}

/* The recordings mutated: k = 0 standard, 1 culled, 2 long records, 3
 * long records in tick order, 4 standard with ALLOCATORS records (their
 * counts, kinds, flags and strings; their times against the cursor), 5
 * version 7 (db_v7_random: runs of references, rising sizes), 6 version
 * 8 (db_v8_random: the same with paired tags), `frames` rounds or frames
 * each. */
#define NPRISTINE 7

static void pristine(db_file *f, int k, unsigned frames)
{
    if (k == 0)
        db_standard(f, frames, 1);
    else if (k == 1)
        db_culled(f, frames, 1);
    else if (k == 2)
        db_long(f, frames, 400);
    else if (k == 3)
        db_long_ticks(f, frames, 400);
    else if (k == 4)
        db_allocators(f, frames);
    else { /* version 7: runs of references, rising sizes; 8: paired tags */
        static db_v7_sizes sizes;
        (k == 5 ? db_v7_random : db_v8_random)(f, frames, 0x9e3779b97f4a7c15ull, &sizes);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--seeds") == 0) {
        int rc = 0;
        static const char *const names[NPRISTINE] = {"standard",   "culled", "long", "long-tick",
                                                     "allocators", "v7",     "v8"};
        for (int k = 0; k < NPRISTINE; k++) {
            db_file f;
            pristine(&f, k, 3);
            raw_frames raw;
            unpack(&f, &raw);
            rc |= write_seeds(argv[2], names[k], &f, &raw);
            for (size_t i = 0; i < raw.n; i++)
                db_buf_free(&raw.fr[i]);
            db_file_free(&f);
        }
        return rc;
    }
    long iterations = argc > 1 ? atol(argv[1]) : 5000;
    char path[] = "/tmp/memtop-dat-mutation-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    db_file pristines[NPRISTINE];
    raw_frames raws[NPRISTINE];
    for (int k = 0; k < NPRISTINE; k++) {
        pristine(&pristines[k], k, 6);
        unpack(&pristines[k], &raws[k]);
        if (db_write(pristines[k].out.p, pristines[k].out.n, path) != 0 ||
            mt_exercise_recording(path, 0) != MT_OK || mt_exercise_recording(path, 256) != MT_OK) {
            fprintf(stderr, "pristine recording %d not read cleanly\n", k);
            return 1;
        }
    }
    rng r = {0x9e3779b97f4a7c15ull};
    long counts[MT_E_GONE + 1] = {0};
    for (long i = 0; i < iterations; i++) {
        db_file f;
        const db_file pristine = pristines[(i / 2) % NPRISTINE];
        const raw_frames *raw = &raws[(i / 2) % NPRISTINE];
        if (i % 2 == 0) {
            uint32_t version;
            memcpy(&version, pristine.out.p + MT_DAT_MAGIC_BYTES, sizeof version);
            build_mutated_records(&r, raw, version, &f);
        } else {
            db_file_init(&f, 1, 1);
            f.out.n = 0;
            db_bytes(&f.out, pristine.out.p, pristine.out.n);
            unsigned k = 1 + next(&r) % 3;
            for (unsigned j = 0; j < k; j++)
                mutate_bytes(&r, f.out.p, f.out.n);
        }
        size_t n = f.out.n;
        if (next(&r) % 8 == 0)
            n = next(&r) % (n + 1);
        if (db_write(f.out.p, n, path) != 0)
            return 1;
        counts[mt_exercise_recording(path, (unsigned long)next(&r))]++;
        db_file_free(&f);
    }
    unlink(path);
    for (int k = 0; k < NPRISTINE; k++) {
        for (size_t i = 0; i < raws[k].n; i++)
            db_buf_free(&raws[k].fr[i]);
        db_file_free(&pristines[k]);
    }
    long errors = iterations - counts[MT_OK];
    for (int c = 0; c <= MT_E_GONE; c++)
        if (counts[c])
            printf("%-10s %ld\n", mt_errc_name((mt_errc)c), counts[c]);
    if (iterations >= 100 && (counts[MT_OK] == 0 || errors == 0)) {
        fprintf(stderr, "mutations never reached the checks (ok %ld, errors %ld)\n", counts[MT_OK],
                errors);
        return 1;
    }
    printf("%ld mutated recordings: %ld accepted, %ld rejected, no crash\n", iterations,
           counts[MT_OK], errors);
    return 0;
}
