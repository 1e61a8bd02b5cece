/* record_zstd.c -- a recording's file output: records through zstd into
 * frames, and the file's bytes (the session: record_session.c, the
 * writer thread: record_thread.c; all three share record_writer.h).
 *
 * Records are collected whole in `out` and handed to zstd between records,
 * so a record never spans two frames.  A frame is ended at least every
 * MT_RECW_FLUSH_NS while data flows (the crash-safety promise: a file cut
 * by SIGKILL or a full disk is readable up to its last complete frame),
 * and at every state set and at the end.  A write error ends the session:
 * recording stops at once and the error is kept for the status.
 *
 * A full disk must not leave a file that reads as "killed": every write
 * first makes sure (fallocate, FALLOC_FL_KEEP_SIZE) that its own bytes
 * plus MT_RECW_END_RESERVE past them are allocated.  When the reservation fails for lack of
 * space, nothing more is written and the session ends with an END record
 * of reason ERROR (errno ENOSPC) written over the partly written frame, if
 * any, at the end of the last complete frame, into space that was already
 * the file's; the rest is cut off.  Where fallocate is not supported, the
 * END is still attempted the same way (it may then fail: the file reads as
 * not finalized and the segment's status says why).
 */
#define _GNU_SOURCE
#include "record_cull.h"
#include "record_writer.h"
#include "record_writer_parts.h"

#include "core_clock.h"
#include "core_log.h"
#include "core_os_memory.h"
#include "core_state.h"
#include "dat_format.h"
#include "record.h"
#include "record_blocks.h"
#include "record_buffer.h"
#include "record_tag_pairs.h"
#include "record_tick.h"

#include "record_zstd_lib.h"
#include "record_zstd_params.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_RECW_OUT_BYTES (4u << 20)
#define MT_RECW_OUT_FEED (64u << 10) /* give `out` to zstd in small steps: drain often */
#define MT_RECW_PAY_BYTES (1u << 20) /* > MT_RR_EVENTS_MAX EVENTS2 events of 51 bytes at most */
#define MT_RECW_SMALL_FRAME (24u << 10)
#define MT_RECW_SPLIT_MIN (4u << 10)     /* records split into zstd blocks from this size */
#define MT_RECW_END_RESERVE 4096u        /* room kept for an END frame (< 100 bytes) */
#define MT_RECW_RESERVE_AHEAD (1u << 20) /* allocated ahead while the disk has room */

_Static_assert(MT_RECW_PAY_BYTES <= MT_DAT_RECORD_MAX, "a record within its limit");
_Static_assert(MT_RECW_WINDOW_LOG_FAST <= MT_DAT_WINDOW_LOG_MAX &&
                   MT_RECW_WINDOW_LOG_SMALL <= MT_DAT_WINDOW_LOG_MAX,
               "frames a reader can decompress");

/* zstd's memory: mmap, with the size in a 16-byte prefix for munmap. */
static void *z_alloc(void *opaque, size_t n)
{
    (void)opaque;
    size_t total = n + 16;
    unsigned char *p = mt_os_alloc(total);
    if (!p)
        return NULL;
    memcpy(p, &total, sizeof total);
    return p + 16;
}

static void z_free(void *opaque, void *addr)
{
    (void)opaque;
    if (!addr)
        return;
    unsigned char *p = (unsigned char *)addr - 16;
    size_t total;
    memcpy(&total, p, sizeof total);
    mt_os_free(p, total);
}

void mt_recw_fail(int err)
{
    if (!mt_w.err) {
        MT_HINT_SET(mt_w.err, err ? err : EIO); /* the status reads it unlocked */
        bool full = mt_w.err == ENOSPC || mt_w.err == EDQUOT;
        mt_log(MT_LOG_WARN, "recording stopped: %s: %s", full ? "disk full" : "write error",
               strerror(mt_w.err));
    }
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_release);
}

/* Allocates the n bytes about to be written and MT_RECW_END_RESERVE past
 * them, when that is not allocated yet: MT_RECW_RESERVE_AHEAD more at a time
 * (few calls, and large extents on file systems that allocate at
 * fallocate), or only what is needed when the disk has no more.  False
 * (and the session failed) if even that is not there: the bytes reserved
 * before are still there for END. */
static bool reserve(size_t n)
{
    uint64_t need = mt_w.bytes + n + MT_RECW_END_RESERVE;
    if (!mt_w.reserve || need <= mt_w.reserved_to)
        return true;
    off_t at = (off_t)mt_w.bytes, len = (off_t)(need - mt_w.bytes);
    if (fallocate(mt_w.fd, FALLOC_FL_KEEP_SIZE, at, len + MT_RECW_RESERVE_AHEAD) == 0) {
        mt_w.reserved_to = need + MT_RECW_RESERVE_AHEAD;
        return true;
    }
    if ((errno == ENOSPC || errno == EDQUOT) &&
        fallocate(mt_w.fd, FALLOC_FL_KEEP_SIZE, at, len) == 0) {
        mt_w.reserved_to = need;
        return true;
    }
    if (errno == ENOSPC || errno == EDQUOT) {
        mt_recw_fail(errno);
        return false;
    }
    if (errno != EINTR)
        mt_w.reserve = false; /* not supported here: the write says whether it fits */
    return true;
}

/* Gives the reserved bytes past the end back (the file is complete, or
 * sealed for an exec: a write after this reserves again).  Both ways: a
 * hole punched past the end frees them on tmpfs, a truncation to the size
 * the file has on ext4 and XFS (which clamp a hole to the size). */
void mt_recw_release_reserve(void)
{
    if (!mt_w.reserve || mt_w.reserved_to <= mt_w.bytes || mt_w.err == MT_RECW_ERR_CUT)
        return; /* a cut file keeps the size it was cut to */
    fallocate(mt_w.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)mt_w.bytes,
              (off_t)(mt_w.reserved_to - mt_w.bytes + 4096)); /* + the block it ends in */
    if (ftruncate(mt_w.fd, (off_t)mt_w.bytes) != 0)
        mt_log(MT_LOG_INFO, "recording: the space allocated past the end stays allocated");
    mt_w.reserved_to = mt_w.bytes;
}

/* One write(2), timed for the hooks' drop policy (record_disk.c: a slow
 * disk, or a writer waiting for a core). */
static ssize_t timed_write(const unsigned char *p, size_t n)
{
    mt_recw_wtime w;
    mt_recw_write_begin(&w);
    if (MT_UNLIKELY(mt_g.cfg.test_write_delay_us)) /* tests: a slow disk */
        mt_recw_sleep_ns(mt_g.cfg.test_write_delay_us * 1000ull);
    ssize_t k = write(mt_w.fd, p, n);
    mt_recw_write_end(&w);
    return k;
}

/* Whether the file was cut under the writer since its last write (`: >
 * f.dat`, truncate -s 0): it is smaller than what was written.  Writing on
 * at the old offset would leave a sparse file whose head is zeros, no
 * recording: the recording stops instead and says why.  (A cut the same
 * microsecond as a write, that the write grows back, goes unseen; the
 * reader then says the head is zeros.) */
static bool file_cut(void)
{
    struct stat st;
    if (fstat(mt_w.fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= mt_w.bytes)
        return false;
    mt_log(MT_LOG_WARN,
           "recording stopped: its file was truncated while being written (%llu bytes, %llu "
           "written): nothing more is written to it",
           (unsigned long long)st.st_size, (unsigned long long)mt_w.bytes);
    MT_HINT_SET(mt_w.err, MT_RECW_ERR_CUT);
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_release);
    return true;
}

static void write_all(const unsigned char *p, size_t n)
{
    if (!mt_w.err && (file_cut() || !reserve(n)))
        return;
    while (n && !mt_w.err) {
        ssize_t k = timed_write(p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            mt_recw_fail(k < 0 ? errno : ENOSPC);
            return;
        }
        p += k;
        n -= (size_t)k;
        MT_HINT_SET(mt_w.bytes, mt_w.bytes + (uint64_t)k); /* the status reads it unlocked */
    }
}

/* Writes the compressed bytes collected so far. */
static void write_z(void)
{
    write_all(mt_w.zbuf.p, mt_w.zbuf.len);
    mt_w.zbuf.len = 0;
}

/* Compresses n bytes at p into the open frame with the given directive;
 * the compressed bytes are written when half a buffer has collected, and
 * at the end of the frame. */
static void compress(const unsigned char *p, size_t n, ZSTD_EndDirective how)
{
    MT_ASSERT(!mt_w.no_io);
    ZSTD_inBuffer in = {p, n, 0};
    mt_w.frame_raw += n;
    while (!mt_w.err) {
        ZSTD_outBuffer o = {mt_w.zbuf.p, mt_w.zbuf.cap, mt_w.zbuf.len};
        size_t left = mt_zstd.compress_stream2(mt_w.cctx, &o, &in, how);
        mt_w.zbuf.len = o.pos;
        if (mt_zstd.is_error(left)) {
            mt_log(MT_LOG_WARN, "recording: zstd: %s", mt_zstd.error_name(left));
            mt_recw_fail(EIO);
            return;
        }
        bool done = how == ZSTD_e_continue ? in.pos == in.size : left == 0;
        if (!done || how == ZSTD_e_end || mt_w.zbuf.len >= mt_w.zbuf.cap / 2)
            write_z();
        if (done)
            return;
    }
}

/* Compresses `out` (whole records) with the given directive. */
static void feed(ZSTD_EndDirective how)
{
    if (mt_w.err)
        return;
    compress(mt_w.out.p, mt_w.out.len, how);
    mt_w.out.len = 0;
}

static void set_level(bool small);

bool mt_recw_room(size_t payload)
{
    return mt_w.out.len + payload + 32 <= mt_w.out.cap;
}

/* Makes room for the payload in the output and opens a frame if none is.
 * Under no_io the caller made sure of the room (mt_recw_room). */
static void begin_record(void)
{
    MT_ASSERT(!mt_w.no_io || mt_recw_room(mt_w.pay.len));
    if (!mt_recw_room(mt_w.pay.len))
        feed(ZSTD_e_continue);
    if (!mt_w.frame_open) {
        mt_w.frame_open = true;
        mt_w.frame_t0 = mt_recw_now();
    }
}

void mt_recw_emit(unsigned type)
{
    begin_record();
    mt_put_record(&mt_w.out, type, &mt_w.pay);
    mt_w.pay.len = 0;
    mt_w.pay.overflow = false;
    if (mt_w.no_io) /* the next record or pass ends the frame or feeds it */
        return;
    if (mt_w.small && mt_w.frame_raw + mt_w.out.len >= MT_RECW_SMALL_FRAME) {
        /* The stream got fast: back to the fast level -- for this frame
         * too when zstd has none of it yet (its parameters are then still
         * free): the strong level on these 24 KiB cost ~80 M instructions
         * at the start of every recording, the definitions of its traces. */
        if (!mt_w.frame_raw)
            set_level(false);
        mt_recw_end_frame();
    } else if (mt_w.out.len >= MT_RECW_OUT_FEED)
        feed(ZSTD_e_continue);
}

void mt_recw_emit_parts(unsigned type, const mt_recw_part *parts, unsigned n)
{
    size_t len = mt_w.pay.len;
    for (unsigned i = 0; i < n; i++)
        len += parts[i].len;
    if (mt_w.small || len < MT_RECW_SPLIT_MIN) { /* small: one piece, through `out` */
        for (unsigned i = 0; i < n; i++)
            mt_put_bytes(&mt_w.pay, parts[i].p, parts[i].len);
        mt_recw_emit(type);
        return;
    }
    /* The envelope and the head of the payload go through `out` (after
     * the records waiting there), the parts to zstd from where they are:
     * no copy of the columns (zstd reads the same bytes in the same order
     * with the same block ends). */
    begin_record();
    mt_put_v(&mt_w.out, type);
    mt_put_v(&mt_w.out, len);
    mt_put_bytes(&mt_w.out, mt_w.pay.p, mt_w.pay.len);
    compress(mt_w.out.p, mt_w.out.len, ZSTD_e_continue);
    mt_w.out.len = 0;
    for (unsigned i = 0; i < n && !mt_w.err; i++)
        compress(parts[i].p, parts[i].len, parts[i].cut ? ZSTD_e_flush : ZSTD_e_continue);
    mt_w.pay.len = 0;
    mt_w.pay.overflow = false;
}

/* Frames are independent (each decodes alone), so a slow stream's small
 * frames compress poorly at a fast level: they get a strong level with a
 * small window instead (bounded memory, and little CPU at their rate).
 *
 * A fast stream's frames are EVENTS2 columns, mostly literals: a match
 * pays only where it is long enough.  zstd's fast matcher (level 1) takes
 * the first match of 6 bytes it finds, and many cost more than the
 * literals they replace; the lazy matcher (level 6's strategy) with
 * matches of 6 bytes at least (its largest) weighs the next position
 * first.  On the same events (docs/performance.md "zstd's lazy matcher
 * for EVENTS2"): the bench's recordings -2.6 % at 4 threads, -2.9 % at 1,
 * -1.6 % at 16, a redis-server recording -10.8 %, for 2.9x zstd's CPU in
 * the writer.  (A 4 KiB window gave the bench 1 % more and redis +7 %:
 * real programs' columns repeat from far back.)  Each parameter is set,
 * none left to the level's table: 0 gives a parameter back to the level. */
static void set_level(bool small)
{
    const mt_recw_zparams *p = small ? &mt_recw_zsmall : &mt_recw_zfast;
    ZSTD_CCtx *z = mt_w.cctx;
    mt_w.small = small;
    mt_zstd.set_parameter(z, ZSTD_c_compressionLevel, p->level);
    mt_zstd.set_parameter(z, ZSTD_c_windowLog, p->window_log);
    mt_zstd.set_parameter(z, ZSTD_c_hashLog, p->hash_log);
    mt_zstd.set_parameter(z, ZSTD_c_chainLog, p->chain_log);
    mt_zstd.set_parameter(z, ZSTD_c_searchLog, p->search_log);
    mt_zstd.set_parameter(z, ZSTD_c_minMatch, p->min_match);
    mt_zstd.set_parameter(z, ZSTD_c_targetLength, 0);
    mt_zstd.set_parameter(z, ZSTD_c_strategy, p->strategy);
    mt_zstd.set_parameter(z, ZSTD_c_checksumFlag, 1);
}

void mt_recw_end_frame(void)
{
    mt_rr_flush_events(); /* its frame context is this frame's */
    if (!mt_w.frame_open)
        return;
    feed(ZSTD_e_end);
    if (!mt_w.err) {
        mt_w.prev_mark = mt_w.frame_mark;
        mt_w.frame_mark = mt_w.bytes;
    }
    mt_w.frame_open = false;
    mt_rb_new_frame(); /* EVENTS2 references reach this frame and the next */
    mt_tp_new_frame(); /* a frame starts with no TAG_PAIRS */
    set_level(mt_w.frame_raw < MT_RECW_SMALL_FRAME);
    mt_w.frame_raw = 0;
}

bool mt_recw_setup_memory(void)
{
    if (!mt_w.out.p && !mt_rbuf_init(&mt_w.out, MT_RECW_OUT_BYTES))
        return false;
    if (!mt_w.pay.p && !mt_rbuf_init(&mt_w.pay, MT_RECW_PAY_BYTES))
        return false;
    if (!mt_w.zbuf.p && !mt_rbuf_init(&mt_w.zbuf, mt_zstd.out_size()))
        return false;
    for (unsigned c = 0; c < MT_COL_N; c++) /* a tag byte; a varint's lead byte and tail */
        for (unsigned k = 0; k < 2; k++)
            if (!mt_w.cols[c][k].p &&
                !mt_rbuf_init(&mt_w.cols[c][k], MT_RR_EVENTS_MAX * (k ? 9u : 1u)))
                return false;
    if (!mt_w.cctx) {
        ZSTD_customMem mem = {z_alloc, z_free, NULL};
        mt_w.cctx = mt_zstd.create_cctx(mem);
        if (!mt_w.cctx)
            return false;
    }
    mt_zstd.cctx_reset(mt_w.cctx, ZSTD_reset_session_and_parameters);
    set_level(true); /* the first frame is small: header, definitions */
    mt_w.out.len = mt_w.pay.len = mt_w.zbuf.len = 0; /* a fork child's copy holds its parent's */
    mt_w.frame_raw = 0;
    return true;
}

void mt_recw_free_memory(void)
{
    MT_ASSERT(!mt_w.open);
    mt_rbuf_free(&mt_w.out); /* each: nothing when it holds nothing */
    mt_rbuf_free(&mt_w.pay);
    mt_rbuf_free(&mt_w.zbuf);
    for (unsigned c = 0; c < MT_COL_N; c++)
        for (unsigned k = 0; k < 2; k++)
            mt_rbuf_free(&mt_w.cols[c][k]);
    ZSTD_CCtx *cctx = mt_w.cctx;
    mt_w.cctx = NULL; /* first, as mt_rbuf_free */
    if (cctx)         /* its memory is z_alloc's: mmap */
        mt_zstd.free_cctx(cctx);
    mt_rb_release();
    mt_tp_release();
    mt_rt_release();
    mt_cull_release();
    mt_rr_state_release();
    /* Events still in the rings belong to no recording (a write error
     * stopped the draining; a stop's came after its cut): their chunks
     * back, then the spares. */
    mt_rings_discard();
    mt_rings_free_spares();
    mt_rings_trim();
}

void mt_recw_write_file_header(void)
{
    mt_dat_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MT_DAT_MAGIC, MT_DAT_MAGIC_BYTES);
    /* full, culled or sampled, tick or thread order: PROCESS says which;
     * any of them may hold FREE_PREV; version 8's rules (7's and paired
     * tags) in tick order only (the encoder follows mt_w.runs, set with it) */
    h.version = mt_w.runs ? MT_DAT_VERSION_PAIRS : MT_DAT_VERSION_PREV;
    h.header_bytes = MT_DAT_HEADER_BYTES;
    h.endian_mark = MT_DAT_ENDIAN_MARK;
    h.flags = MT_DAT_FILE_ZSTD;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h.created_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    write_all((const unsigned char *)&h, sizeof h);
    mt_w.frame_mark = mt_w.prev_mark = mt_w.bytes;
}

/* Forgets everything not yet in the file and puts the file position at
 * `mark` (the end of a complete frame): the next frame is written there. */
static bool rewind_to(uint64_t mark)
{
    if (lseek(mt_w.fd, (off_t)mark, SEEK_SET) != (off_t)mark)
        return false;
    mt_zstd.cctx_reset(mt_w.cctx, ZSTD_reset_session_only);
    mt_w.out.len = mt_w.pay.len = mt_w.zbuf.len = 0;
    mt_w.pay.overflow = false;
    for (unsigned c = 0; c < MT_COL_N; c++)
        mt_w.cols[c][0].len = mt_w.cols[c][1].len = 0;
    mt_w.open_rec.n = 0;
    mt_w.frame_open = false;
    mt_w.frame_raw = 0;
    mt_rb_new_file(); /* the frame before `mark` is not the one the context holds */
    mt_tp_new_file();
    MT_HINT_SET(mt_w.bytes, mark);
    MT_HINT_SET(mt_w.err, 0);
    return true;
}

/* END(ERROR, err) in a frame of its own at `mark`, and the file cut right
 * after it.  False if it did not fit (a file size limit just past `mark`:
 * EFBIG) or the cut failed. */
static bool end_at(uint64_t mark, int err, uint64_t written)
{
    if (!rewind_to(mark))
        return false;
    mt_rr_end(MT_DAT_END_ERROR, err, mt_recw_now());
    mt_recw_end_frame();
    return !mt_w.err && (written <= mt_w.bytes || ftruncate(mt_w.fd, (off_t)mt_w.bytes) == 0);
}

/* A write error ended the session (mt_w.err): END(ERROR, errno) in a frame
 * of its own at the end of the last complete frame, over a partly written
 * one (in space the file already has, or that reserve() kept), and the
 * rest cut off.  What was not yet written is dropped: the file ends at the
 * last complete frame, then END.  When END does not fit there (a file size
 * limit: reserve() cannot keep room under it), the last complete frame
 * makes room for it; when it fits nowhere, the file is cut at the last
 * complete frame (not finalized, but no partial frame).  Lock held; once
 * per session. */
void mt_recw_error_end(void)
{
    int err = mt_w.err;
    uint64_t written = mt_w.bytes, mark = mt_w.frame_mark, prev = mt_w.prev_mark;
    if (!err || err == MT_RECW_ERR_CUT || mt_w.fd < 0 || mark < MT_DAT_HEADER_BYTES)
        return;
    bool reserving = mt_w.reserve;
    mt_w.reserve = false; /* the room is there, or there is none to get */
    bool ok = end_at(mark, err, written);
    if (!ok && prev > MT_DAT_HEADER_BYTES && prev < mark) { /* never the definitions' frame */
        mark = prev; /* a partial END there overwrote the frame after it */
        ok = end_at(mark, err, written);
    }
    if (!ok && ftruncate(mt_w.fd, (off_t)mark) == 0)
        MT_HINT_SET(mt_w.bytes, mark); /* no partial frame left behind */
    mt_w.reserve = reserving;
    if (ok)
        mt_recw_release_reserve(); /* what is left past END */
    mt_log(ok ? MT_LOG_INFO : MT_LOG_WARN, "recording: %s",
           ok ? "finalized after the write error" : "could not finalize the file");
    MT_HINT_SET(mt_w.err, err);
}
