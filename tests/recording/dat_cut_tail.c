/* dat_cut_tail.c -- a large recording cut at every byte of its last frames
 * (issue 12; the hand-built files of test_reader_unit's cut_everywhere are
 * a few hundred bytes).
 *
 * Why in C, and how it stays fast: the file is read once to note where its
 * frames end, where each zstd block of the region starts (walked here from
 * the zstd format, independently of the reader's own walk), and the last
 * position before the region where reading can start again (mt_dat_tell);
 * a copy of the file cut at each frame end of the region says how many
 * events a cut in the frame after it must read.  The region is the last
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
 * exactly those of the file cut at the end of its last complete frame.  Nothing may crash.
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
    uint64_t end[MAX_FRAMES]; /* file offset where frame i ends */
    uint64_t nframes;
    mt_dat_pos base;             /* where reads start: a frame end at or before the region */
    uint64_t base_events;        /* events before base */
    uint64_t expect[MAX_FRAMES]; /* events of a file cut at end[i] (region frames only) */
} frames;

static int failed(const char *what, uint64_t len, const char *msg)
{
    fprintf(stderr, "dat_cut_tail: cut at %llu: %s%s%s\n", (unsigned long long)len, what,
            msg ? ": " : "", msg ? msg : "");
    return 1;
}

/* Reads the whole file once: each frame's end, and the last position
 * before the region's start (first) where reading can start again. */
static int survey(int fd, uint64_t size, frames *f, unsigned tail)
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
    if (f->nframes < tail + 2)
        return failed("enough frames for the tail", size, NULL);
    uint64_t from = f->end[f->nframes - tail - 1], n = 0;
    mt_dat_event ev;
    mt_dat_pos p;
    mt_errc rc;
    if (!mt_dat_tell(r, &f->base))
        return failed("the start is a position", size, NULL);
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK) {
        n++;
        if (mt_dat_tell(r, &p) && p.offset <= from) { /* the last such before the region */
            f->base = p;
            f->base_events = n;
        }
    }
    mt_dat_close(r);
    return rc == MT_E_EMPTY ? 0 : failed("the whole file reads", size, err.msg);
}

/* Opens the file (cut at len) whole, checks what it says about its
 * frames, and counts the events from the base position to the end. */
static int read_cut(int fd, const frames *f, uint64_t len, uint64_t *n)
{
    mt_err err = {MT_OK, ""};
    mt_dat_reader *r = mt_dat_open_fd(dup(fd), "cut", &err);
    if (!r)
        return failed("the cut file opens", len, err.msg);
    uint64_t k = 0;
    while (k < f->nframes && f->end[k] <= len)
        k++;
    uint64_t end = k ? f->end[k - 1] : MT_DAT_HEADER_BYTES;
    const mt_dat_info *in = mt_dat_get_info(r);
    int bad = in->frames != k || in->data_end != end || in->truncated != (len != end) ||
              in->dropped_bytes != len - end;
    bad = bad || mt_dat_seek(r, &f->base, &err) != MT_OK;
    mt_dat_event ev;
    mt_errc rc = MT_OK;
    for (*n = f->base_events; !bad && (rc = mt_dat_next(r, &ev, &err)) == MT_OK;)
        ++*n;
    mt_dat_close(r);
    if (bad || rc != MT_E_EMPTY)
        return failed("the cut file reads its complete frames, said truncated", len, err.msg);
    return 0;
}

/* The events of the file cut at the end of each frame of the region, each
 * from a copy of that prefix. */
static int expectations(const unsigned char *mem, frames *f, uint64_t first)
{
    for (uint64_t k = first - 1; k < f->nframes; k++) {
        int fd = memfd_create("prefix", MFD_CLOEXEC);
        int bad = fd < 0 || write(fd, mem, f->end[k]) != (ssize_t)f->end[k] ||
                  read_cut(fd, f, f->end[k], &f->expect[k]);
        if (fd >= 0)
            close(fd);
        if (bad)
            return 1;
    }
    return 0;
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

/* The file cut at len reads exactly the events of its complete frames. */
static int check_read(int fd, const frames *f, uint64_t first, uint64_t len)
{
    uint64_t k = first, n;
    while (k < f->nframes && f->end[k] <= len)
        k++;
    if (read_cut(fd, f, len, &n))
        return 1;
    return n == f->expect[k - 1]
               ? 0
               : failed("the events read are those of the complete frames", len, NULL);
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
    if (fd < 0 || survey(fd, size, &f, tail))
        return 1;
    uint64_t first = f.nframes - tail, from = f.end[first - 1], reads = 0, cuts = 0;
    unsigned char *mem = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    bool *want = calloc(size - from + 1, sizeof *want);
    if (mem == MAP_FAILED || !want)
        return perror("memory"), 2;
    plan_cuts(&f, first, mem, want);
    if (expectations(mem, &f, first))
        return 1;
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
