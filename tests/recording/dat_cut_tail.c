/* dat_cut_tail.c -- a large recording cut at every byte of its last frames
 * (issue 12; the hand-built files of test_reader_unit's cut_everywhere are
 * a few hundred bytes).
 *
 * Why in C, and how it stays fast: the file is read once to note where its
 * frames end, where each zstd block of the region starts (walked here from
 * the zstd format, independently of the reader's own walk) and how many
 * events precede each frame's end (mt_dat_tell).  The region is the last
 * TAIL_FRAMES frames (default 3: the last frame of events, the final
 * state, END).  A cut in the middle of a block's bytes is the same to the
 * reader wherever it falls (the block ends past the end of the file), so
 * the cuts are: every byte of every frame smaller than ALL_BYTES, and in
 * larger ones every byte within NEAR of a block or frame boundary plus
 * every STRIDE-th byte.  For each cut the frame scan runs from the start
 * of the frame the cut falls in (the frames before it are the same for
 * every cut in it; the full reads below check them) and must report that
 * frame complete if the cut is its end, else a truncated tail.
 * Near frame boundaries and every READ_STRIDE-th cut the file, cut there,
 * is also opened whole (mt_dat_open_fd) and read from the region's start
 * (mt_dat_seek to the noted position) to its end: the info must say
 * truncated and how many bytes were dropped, and the events read must be
 * exactly those of the complete frames.  Nothing may crash.
 *
 * Usage: dat_cut_tail FILE.dat [TAIL_FRAMES]   exit 0 ok, 1 failed, 2 usage/io */
#include "dat_reader.h"
#include "dat_zframes.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_frameHeaderSize */
#include <zstd.h>

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FRAMES 65536
#define NEAR 8
#define STRIDE 1021
#define READ_STRIDE 4099
#define ALL_BYTES (256u << 10)

typedef struct {
    uint64_t end[MAX_FRAMES];    /* file offset where frame i ends */
    uint64_t events[MAX_FRAMES]; /* events read up to the end of frame i */
    mt_dat_pos pos[MAX_FRAMES];  /* the position at the end of frame i, if tellable */
    bool has_pos[MAX_FRAMES];
    uint64_t nframes;
} frames;

static int failed(const char *what, uint64_t len, const char *msg)
{
    fprintf(stderr, "dat_cut_tail: cut at %llu: %s%s%s\n", (unsigned long long)len, what,
            msg ? ": " : "", msg ? msg : "");
    return 1;
}

/* Reads the whole file once: each frame's end and the events before it. */
static int survey(int fd, uint64_t size, frames *f)
{
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = mt_dat_open_fd(dup(fd), "survey", &err);
    if (!r)
        return failed("the whole file opens", size, err.msg);
    const mt_dat_info *in = mt_dat_get_info(r);
    if (in->truncated || in->data_end != size || in->frames > MAX_FRAMES)
        return failed("the whole file is complete", size, NULL);
    mt_fbuf b;
    if (mt_fbuf_init(&b, fd, size, &err))
        return failed("memory", size, err.msg);
    uint64_t off = MT_DAT_HEADER_BYTES, len;
    for (f->nframes = 0; off < size; f->nframes++) {
        if (mt_zframe_measure(&b, off, &len, &err) != MT_ZF_COMPLETE)
            return failed("a frame measures", off, err.msg);
        off += len;
        f->end[f->nframes] = off;
    }
    mt_fbuf_free(&b);
    mt_dat_event ev;
    uint64_t n = 0, k = 0;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK) {
        n++;
        mt_dat_pos p;
        while (k < f->nframes && mt_dat_tell(r, &p) && p.offset == f->end[k]) {
            f->pos[k] = p;
            f->has_pos[k] = true;
            f->events[k++] = n;
        }
    }
    for (; k < f->nframes; k++) /* frames whose last record is not an event */
        f->events[k] = n;
    mt_dat_close(r);
    return rc == MT_E_EMPTY ? 0 : failed("the whole file reads", size, err.msg);
}

/* The scan from the start of the frame the cut falls in (or ends): that
 * frame complete if the cut is its end, else truncated. */
static int check_scan(int fd, const frames *f, uint64_t first, uint64_t len)
{
    uint64_t k = first - 1;
    while (f->end[k] < len)
        k++;
    uint64_t start = f->end[k - 1];
    bool whole = len == f->end[k];
    mt_zscan s;
    mt_err err = {MT_OK, ""};
    if (mt_zscan_frames(fd, start, len, &s, &err) != MT_OK)
        return failed("the tail scans", len, err.msg);
    if (s.nframes != whole || s.end != (whole ? len : start) || s.truncated != !whole ||
        s.invalid_tail)
        return failed("the scan finds exactly the complete frames", len, NULL);
    return 0;
}

/* The file opened whole and read from the region's start. */
static int check_read(int fd, const frames *f, uint64_t first, uint64_t len)
{
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = mt_dat_open_fd(dup(fd), "cut", &err);
    if (!r)
        return failed("the cut file opens", len, err.msg);
    uint64_t k = first;
    while (k < f->nframes && f->end[k] <= len)
        k++;
    const mt_dat_info *in = mt_dat_get_info(r);
    int bad = in->frames != k || in->data_end != f->end[k - 1] ||
              in->truncated != (len != f->end[k - 1]) || in->dropped_bytes != len - in->data_end;
    bad = bad || mt_dat_seek(r, &f->pos[first - 1], &err) != MT_OK;
    mt_dat_event ev;
    uint64_t n = f->events[first - 1];
    mt_errc rc = MT_OK;
    while (!bad && (rc = mt_dat_next(r, &ev, &err)) == MT_OK)
        n++;
    mt_dat_close(r);
    if (bad || rc != MT_E_EMPTY)
        return failed("the cut file reads its complete frames, said truncated", len, err.msg);
    if (n != f->events[k - 1])
        return failed("the events read are those of the complete frames", len, NULL);
    return 0;
}

static bool near_boundary(const frames *f, uint64_t first, uint64_t len, uint64_t near)
{
    for (uint64_t k = first - 1; k < f->nframes; k++)
        if (len + near >= f->end[k] && len <= f->end[k] + near)
            return true;
    return false;
}

/* Marks the cuts to make in want[] (offset from `from`): see the top of
 * the file.  Blocks are walked from the zstd format: the frame header, then
 * blocks of a 3-byte header each (bit 0: the last block; bits 1-2: the
 * type, 1 = RLE with one byte of content; the rest: the size). */
static void plan_cuts(const frames *f, uint64_t first, const unsigned char *mem, bool *want)
{
    uint64_t from = f->end[first - 1], size = f->end[f->nframes - 1];
    for (uint64_t k = first; k < f->nframes; k++) {
        uint64_t start = f->end[k - 1], end = f->end[k];
        bool all = end - start < ALL_BYTES;
        for (uint64_t len = start; len <= end; len++)
            want[len - from] = all || len % STRIDE == 0 || len < start + NEAR || len + NEAR > end;
        size_t h = ZSTD_frameHeaderSize(mem + start, (size_t)(end - start));
        for (uint64_t off = start + (ZSTD_isError(h) ? 0 : h); off + 3 <= end;) {
            for (uint64_t len = off > NEAR ? off - NEAR : 0; len <= off + NEAR && len <= size;
                 len++)
                if (len >= from)
                    want[len - from] = true;
            uint32_t bh = mem[off] | (uint32_t)mem[off + 1] << 8 | (uint32_t)mem[off + 2] << 16;
            off += 3 + (((bh >> 1) & 3) == 1 ? 1 : bh >> 3);
            if (bh & 1)
                break;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        return fprintf(stderr, "usage: dat_cut_tail FILE.dat [TAIL_FRAMES]\n"), 2;
    unsigned tail = argc == 3 ? (unsigned)atoi(argv[2]) : 3;
    int in = open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0)
        return perror(argv[1]), 2;
    int fd = memfd_create("cut", MFD_CLOEXEC);
    uint64_t size = (uint64_t)st.st_size;
    static unsigned char chunk[1 << 16];
    for (uint64_t at = 0; fd >= 0 && at < size;) {
        ssize_t n = read(in, chunk, sizeof chunk);
        if (n <= 0 || write(fd, chunk, (size_t)n) != n)
            return perror("copy"), 2;
        at += (uint64_t)n;
    }
    close(in);
    static frames f;
    if (fd < 0 || survey(fd, size, &f))
        return 1;
    if (f.nframes < tail + 2 || !f.has_pos[f.nframes - tail - 1])
        return fprintf(stderr, "dat_cut_tail: %llu frames: too few for the tail\n",
                       (unsigned long long)f.nframes),
               1;
    uint64_t first = f.nframes - tail, from = f.end[first - 1], reads = 0, cuts = 0;
    unsigned char *mem = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    bool *want = calloc(size - from + 1, sizeof *want);
    if (mem == MAP_FAILED || !want)
        return perror("memory"), 2;
    plan_cuts(&f, first, mem, want);
    munmap(mem, size);                  /* before the cuts shrink the file */
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* the scan's read buffer: no mmap per cut */
    for (uint64_t len = size; len >= from; len--) {
        if (!want[len - from])
            continue;
        cuts++;
        if (check_scan(fd, &f, first, len)) /* the scan reads no byte at or past len */
            return 1;
        if (!near_boundary(&f, first, len, NEAR * 4) && len % READ_STRIDE)
            continue;
        reads++;
        if (ftruncate(fd, (off_t)len) != 0)
            return perror("ftruncate"), 2;
        if (check_read(fd, &f, first, len))
            return 1;
    }
    printf("cuts %llu of %llu bytes (%llu to %llu: the last %u of %llu frames), full reads %llu\n",
           (unsigned long long)cuts, (unsigned long long)(size - from + 1),
           (unsigned long long)from, (unsigned long long)size, tail, (unsigned long long)f.nframes,
           (unsigned long long)reads);
    return 0;
}
