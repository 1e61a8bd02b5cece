/* record_writer.c -- the recording session: file output through zstd and
 * the writer thread (see record_writer.h).
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
#include "record_writer.h"

#include "core_clock.h"
#include "dat_format.h"
#include "core_log.h"
#include "core_os_memory.h"
#include "record.h"
#include "record_blocks.h"
#include "record_buffer.h"
#include "core_state.h"
#include "core_thread_state.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_createCCtx_advanced */
#include <zstd.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_RECW_FLUSH_NS 950000000ull   /* end a frame at least once a second */
#define MT_RECW_TOTALS_NS 1000000000ull /* TOTALS once a second */
#define MT_RECW_TOTALS_DUE UINT64_MAX   /* last_totals_ns: the first TOTALS is still due */
#define MT_RECW_OUT_BYTES (4u << 20)
#define MT_RECW_OUT_FEED (64u << 10) /* give `out` to zstd in small steps: drain often */
#define MT_RECW_PAY_BYTES (1u << 20) /* > MT_RR_EVENTS_MAX EVENTS2 events of 51 bytes at most */
#define MT_RECW_LEVEL 1        /* fast; on EVENTS2's literal-heavy columns also the smallest */
#define MT_RECW_LEVEL_SMALL 19 /* for frames of a slow stream: frames do not share history */
#define MT_RECW_WINDOW_LOG 19  /* MT_RECW_LEVEL's own window, stated (a reader's limit) */
#define MT_RECW_WINDOW_LOG_SMALL 18
#define MT_RECW_SMALL_FRAME (24u << 10)
#define MT_RECW_SPLIT_MIN (4u << 10)      /* records split into zstd blocks from this size */
#define MT_RECW_IDLE_NS 5000000ull        /* writer sleep when there was nothing to do */
#define MT_RECW_GRACE_NS 2000000ull       /* calls already past the recording check finish */
#define MT_RECW_PAUSE_MAX_NS 50000000ull  /* the gate gives up after this */
#define MT_RECW_EXIT_WAIT_NS 200000000ull /* bound on waiting for the writer to exit */
#define MT_RECW_END_RESERVE 4096u         /* room kept for an END frame (< 100 bytes) */
#define MT_RECW_RESERVE_AHEAD (1u << 20)  /* allocated ahead while the disk has room */

_Static_assert(MT_RECW_PAY_BYTES <= MT_DAT_RECORD_MAX, "a record within its limit");
_Static_assert(MT_RECW_WINDOW_LOG <= MT_DAT_WINDOW_LOG_MAX &&
                   MT_RECW_WINDOW_LOG_SMALL <= MT_DAT_WINDOW_LOG_MAX,
               "frames a reader can decompress");

mt_recw mt_w = {.fd = -1};

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

uint64_t mt_recw_now(void)
{
    return mt_now_precise_ns();
}

bool mt_recw_active(void)
{
    return mt_rec_on();
}

bool mt_recw_thread_running(void)
{
    return atomic_load_explicit(&mt_w.thread_running, memory_order_acquire);
}

void mt_recw_note_dropped(uint64_t n)
{
    atomic_fetch_add_explicit(&mt_w.dropped, n, memory_order_relaxed);
}

static void fail(int err)
{
    if (!mt_w.err) {
        mt_w.err = err ? err : EIO;
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
        fail(errno);
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
static void release_reserve(void)
{
    if (!mt_w.reserve || mt_w.reserved_to <= mt_w.bytes)
        return;
    fallocate(mt_w.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)mt_w.bytes,
              (off_t)(mt_w.reserved_to - mt_w.bytes + 4096)); /* + the block it ends in */
    if (ftruncate(mt_w.fd, (off_t)mt_w.bytes) != 0)
        mt_log(MT_LOG_INFO, "recording: the space allocated past the end stays allocated");
    mt_w.reserved_to = mt_w.bytes;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

uint64_t mt_recw_write_since(int *tid)
{
    *tid = atomic_load_explicit(&mt_w.write_tid, memory_order_relaxed);
    return atomic_load_explicit(&mt_w.write_since, memory_order_relaxed);
}

/* One write(2), with the time it began in write_since while it lasts (the
 * hooks' drop policy tells a slow disk from a writer waiting for a core). */
static ssize_t timed_write(const unsigned char *p, size_t n)
{
    atomic_store_explicit(&mt_w.write_tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    atomic_store_explicit(&mt_w.write_since, mt_mono_raw_ns(CLOCK_MONOTONIC), memory_order_relaxed);
    if (MT_UNLIKELY(mt_g.cfg.test_write_delay_us)) /* tests: a slow disk */
        sleep_ns(mt_g.cfg.test_write_delay_us * 1000ull);
    ssize_t k = write(mt_w.fd, p, n);
    atomic_store_explicit(&mt_w.write_since, 0, memory_order_relaxed);
    return k;
}

static void write_all(const unsigned char *p, size_t n)
{
    if (!mt_w.err && !reserve(n))
        return;
    while (n && !mt_w.err) {
        ssize_t k = timed_write(p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fail(k < 0 ? errno : ENOSPC);
            return;
        }
        p += k;
        n -= (size_t)k;
        mt_w.bytes += (uint64_t)k;
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
    ZSTD_inBuffer in = {p, n, 0};
    mt_w.frame_raw += n;
    while (!mt_w.err) {
        ZSTD_outBuffer o = {mt_w.zbuf.p, mt_w.zbuf.cap, mt_w.zbuf.len};
        size_t left = ZSTD_compressStream2(mt_w.cctx, &o, &in, how);
        mt_w.zbuf.len = o.pos;
        if (ZSTD_isError(left)) {
            mt_log(MT_LOG_WARN, "recording: zstd: %s", ZSTD_getErrorName(left));
            fail(EIO);
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

/* Makes room for the payload in the output and opens a frame if none is. */
static void begin_record(void)
{
    if (mt_w.out.len + mt_w.pay.len + 32 > mt_w.out.cap)
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
    if (mt_w.small && mt_w.frame_raw + mt_w.out.len >= MT_RECW_SMALL_FRAME)
        mt_recw_end_frame(); /* the stream got fast: back to the fast level */
    else if (mt_w.out.len >= MT_RECW_OUT_FEED)
        feed(ZSTD_e_continue);
}

void mt_recw_emit_blocks(unsigned type, const size_t *cuts, unsigned ncuts)
{
    if (mt_w.small || mt_w.pay.len < MT_RECW_SPLIT_MIN) {
        mt_recw_emit(type);
        return;
    }
    begin_record();
    mt_put_record(&mt_w.out, type, &mt_w.pay);
    size_t base = mt_w.out.len - mt_w.pay.len, from = 0;
    for (unsigned i = 0; i < ncuts && !mt_w.err; i++) {
        size_t to = base + cuts[i];
        compress(mt_w.out.p + from, to - from, ZSTD_e_flush); /* ends a zstd block */
        from = to;
    }
    memmove(mt_w.out.p, mt_w.out.p + from, mt_w.out.len - from);
    mt_w.out.len -= from;
    mt_w.pay.len = 0;
    mt_w.pay.overflow = false;
}

/* Frames are independent (each decodes alone), so a slow stream's small
 * frames compress poorly at a fast level: they get a strong level with a
 * small window instead (bounded memory, and little CPU at their rate). */
static void set_level(bool small)
{
    ZSTD_CCtx *z = mt_w.cctx;
    mt_w.small = small;
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, small ? MT_RECW_LEVEL_SMALL : MT_RECW_LEVEL);
    ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog,
                           small ? MT_RECW_WINDOW_LOG_SMALL : MT_RECW_WINDOW_LOG);
    ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, small ? 17 : 0);
    ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, small ? 18 : 0);
    ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
}

void mt_recw_end_frame(void)
{
    mt_rr_flush_events(); /* its frame context is this frame's */
    if (!mt_w.frame_open)
        return;
    feed(ZSTD_e_end);
    if (!mt_w.err)
        mt_w.frame_mark = mt_w.bytes;
    mt_w.frame_open = false;
    mt_rb_new_frame(); /* EVENTS2 references stay inside their frame */
    set_level(mt_w.frame_raw < MT_RECW_SMALL_FRAME);
    mt_w.frame_raw = 0;
}

static bool setup_memory(void)
{
    if (!mt_w.out.p && !mt_rbuf_init(&mt_w.out, MT_RECW_OUT_BYTES))
        return false;
    if (!mt_w.pay.p && !mt_rbuf_init(&mt_w.pay, MT_RECW_PAY_BYTES))
        return false;
    if (!mt_w.zbuf.p && !mt_rbuf_init(&mt_w.zbuf, ZSTD_CStreamOutSize()))
        return false;
    for (unsigned c = 0; c < MT_COL_N; c++) /* a tag byte; a varint's lead byte and tail */
        for (unsigned k = 0; k < 2; k++)
            if (!mt_w.cols[c][k].p &&
                !mt_rbuf_init(&mt_w.cols[c][k], MT_RR_EVENTS_MAX * (k ? 9u : 1u)))
                return false;
    if (!mt_w.cctx) {
        ZSTD_customMem mem = {z_alloc, z_free, NULL};
        mt_w.cctx = ZSTD_createCCtx_advanced(mem);
        if (!mt_w.cctx)
            return false;
    }
    ZSTD_CCtx_reset(mt_w.cctx, ZSTD_reset_session_and_parameters);
    set_level(true); /* the first frame is small: header, definitions */
    mt_w.out.len = mt_w.pay.len = mt_w.zbuf.len = 0; /* a fork child's copy holds its parent's */
    mt_w.frame_raw = 0;
    return true;
}

/* One pass: definitions first, then events (of the rings that are due,
 * or all), periodic totals, flush.  Lock held.  True if there were
 * events. */
static bool cycle(bool all)
{
    uint64_t now = mt_recw_now();
    mt_rr_modules(now);
    mt_rr_defs();
    if (mt_w.last_totals_ns == MT_RECW_TOTALS_DUE) {
        /* The session's first pass: a TOTALS right after the definitions,
         * so that RSS and threads are known from the start (a recording
         * from process start would otherwise wait a second for them). */
        mt_rr_totals(now);
        mt_w.last_totals_ns = now;
    }
    bool work = mt_rr_drain_rings(all);
    if (now - mt_w.last_totals_ns >= MT_RECW_TOTALS_NS) {
        mt_rr_totals(now);
        mt_w.last_totals_ns = now;
    }
    now = mt_recw_now(); /* the frame may have begun during this pass */
    if (mt_w.frame_open && now - mt_w.frame_t0 >= MT_RECW_FLUSH_NS)
        mt_recw_end_frame();
    return work;
}

static bool owned(void)
{
    return mt_w.open && !mt_w.err && !mt_w.sealed && mt_w.pid == getpid();
}

bool mt_recw_drain_sync(void)
{
    if (!mt_spin_trylock(&mt_w.lock))
        return false;
    bool ok = owned() && mt_rec_on();
    if (ok) {
        int was = mt_tls_in_hook;
        mt_tls_in_hook = MT_IN_OWN;
        cycle(true); /* the hook needs room in its ring */
        mt_tls_in_hook = was;
    }
    mt_spin_unlock(&mt_w.lock);
    return ok;
}

/* The writer sleeps on a futex when idle; producers wake it when a ring
 * fills up (every quarter ring), so a burst is drained before the ring is
 * full.  A wake-up lost to a race costs at most one idle period. */
static _Atomic uint32_t g_wake_seq;
static _Atomic bool g_sleeping;

void mt_recw_kick(void)
{
    if (!atomic_load_explicit(&g_sleeping, memory_order_relaxed))
        return;
    atomic_store_explicit(&g_sleeping, false, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_wake_seq, 1, memory_order_release);
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wakes the writer whether or not it announced its sleep. */
static void wake_writer(void)
{
    atomic_fetch_add_explicit(&g_wake_seq, 1, memory_order_release);
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits (bounded) until a writer thread told to stop has exited. */
static void wait_writer_exit(void)
{
    for (uint64_t waited = 0; waited < MT_RECW_EXIT_WAIT_NS; waited += 100000) {
        if (!atomic_load_explicit(&mt_w.thread_running, memory_order_acquire))
            return;
        wake_writer();
        sleep_ns(100000);
    }
}

static void idle_wait(void)
{
    uint32_t seq = atomic_load_explicit(&g_wake_seq, memory_order_acquire);
    atomic_store_explicit(&g_sleeping, true, memory_order_seq_cst);
    struct timespec ts = {0, (long)MT_RECW_IDLE_NS};
    syscall(SYS_futex, &g_wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    atomic_store_explicit(&g_sleeping, false, memory_order_relaxed);
}

/* A write error ended the session (mt_w.err): END(ERROR, errno) in a frame
 * of its own at the end of the last complete frame, over a partly written
 * one (in space the file already has, or that reserve() kept), and the
 * rest cut off.  What was not yet written is dropped: the file ends at the
 * last complete frame, then END.  Lock held; once per session. */
static void error_end(void)
{
    int err = mt_w.err;
    uint64_t written = mt_w.bytes;
    if (!err || mt_w.fd < 0 || mt_w.frame_mark < MT_DAT_HEADER_BYTES ||
        lseek(mt_w.fd, (off_t)mt_w.frame_mark, SEEK_SET) != (off_t)mt_w.frame_mark)
        return;
    ZSTD_CCtx_reset(mt_w.cctx, ZSTD_reset_session_only);
    mt_w.out.len = mt_w.pay.len = mt_w.zbuf.len = 0;
    mt_w.pay.overflow = false;
    for (unsigned c = 0; c < MT_COL_N; c++)
        mt_w.cols[c][0].len = mt_w.cols[c][1].len = 0;
    mt_w.open_rec.n = 0;
    mt_w.frame_open = false;
    mt_w.frame_raw = 0;
    mt_rb_new_frame();
    mt_w.bytes = mt_w.frame_mark;
    mt_w.err = 0;
    bool reserving = mt_w.reserve;
    mt_w.reserve = false; /* the room is there, or there is none to get */
    mt_rr_end(MT_DAT_END_ERROR, err, mt_recw_now());
    mt_recw_end_frame();
    bool ok = !mt_w.err;
    if (ok && written > mt_w.bytes && ftruncate(mt_w.fd, (off_t)mt_w.bytes) != 0)
        ok = false;
    mt_w.reserve = reserving;
    if (ok)
        release_reserve(); /* what is left past END */
    mt_log(ok ? MT_LOG_INFO : MT_LOG_WARN, "recording: %s",
           ok ? "finalized after the write error" : "could not finalize the file");
    mt_w.err = err;
}

/* The writer's loop: until told to stop or the session is over. */
static void serve(void)
{
    while (!atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire)) {
        bool work = false;
        mt_spin_lock(&mt_w.lock);
        bool sealed = mt_w.sealed && mt_w.pid == getpid(); /* exec under way: write nothing */
        bool live = sealed || (owned() && mt_rec_on());
        if (live && !sealed)
            work = cycle(false);
        if (mt_w.open && mt_w.err && mt_w.pid == getpid()) {
            error_end(); /* a write error ended the session */
            close(mt_w.fd);
            mt_w.fd = -1;
            mt_w.open = false;
        }
        mt_spin_unlock(&mt_w.lock);
        if (!live)
            break;
        if (!work)
            idle_wait();
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    mt_tls_in_hook = MT_IN_OWN;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        if (!atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire))
            serve();
        atomic_store_explicit(&mt_w.thread_running, false, memory_order_release);
        /* A start may have taken this thread over (cleared thread_stop)
         * while it was leaving: stay, unless a new writer was started. */
        bool expect = false;
        if (atomic_load_explicit(&mt_w.thread_stop, memory_order_acquire) || !mt_w.open ||
            !mt_rec_on() || !atomic_compare_exchange_strong(&mt_w.thread_running, &expect, true))
            break;
    }
    return NULL;
}

bool mt_recw_start_thread(void)
{
    if (!mt_w.open)
        return true;
    if (atomic_load(&mt_w.thread_running) && atomic_load(&mt_w.thread_stop))
        wait_writer_exit(); /* the previous session's writer is on its way out */
    if (atomic_load(&mt_w.thread_running)) {
        /* Still there (or never told to stop): it serves this session. */
        atomic_store(&mt_w.thread_stop, false);
        return true;
    }
    atomic_store(&mt_w.thread_stop, false);
    atomic_store(&mt_w.thread_running, true);
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, writer_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        pthread_setname_np(th, "memtop-record");
    else
        atomic_store(&mt_w.thread_running, false);
    mt_tls_in_hook = was;
    if (rc != 0)
        mt_log(MT_LOG_WARN, "recording: cannot start the writer thread: %s", strerror(rc));
    return rc == 0;
}

static void write_file_header(void)
{
    mt_dat_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MT_DAT_MAGIC, MT_DAT_MAGIC_BYTES);
    h.version = MT_DAT_VERSION;
    h.header_bytes = MT_DAT_HEADER_BYTES;
    h.endian_mark = MT_DAT_ENDIAN_MARK;
    h.flags = MT_DAT_FILE_ZSTD;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h.created_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    write_all((const unsigned char *)&h, sizeof h);
    mt_w.frame_mark = mt_w.bytes;
}

static void reset_session(int fd)
{
    mt_w.fd = fd;
    mt_w.pid = getpid();
    mt_w.err = 0;
    mt_w.bytes = 0;
    mt_w.frame_mark = 0;
    mt_w.reserve = true;
    mt_w.reserved_to = 0;
    mt_w.defs = 0;
    mt_w.frame_open = false;
    mt_w.last_totals_ns = MT_RECW_TOTALS_DUE;
    memset(mt_w.sum_initial, 0, sizeof mt_w.sum_initial);
    memset(mt_w.sum_events, 0, sizeof mt_w.sum_events);
    memset(mt_w.sum_lost, 0, sizeof mt_w.sum_lost);
    memset(&mt_w.modscan, 0, sizeof mt_w.modscan);
    mt_w.nmodules = 0;
    mt_w.approx = 0;
    mt_w.sealed = false;
    for (unsigned c = 0; c < MT_COL_N; c++)
        mt_w.cols[c][0].len = mt_w.cols[c][1].len = 0;
    mt_w.open_rec.n = 0;
    mt_rb_new_frame();
    mt_rb_reset_stats();
    atomic_store(&mt_w.events, 0);
    atomic_store(&mt_w.dropped, 0);
}

/* Capture the initial state of a mid-run start.  The module map and the
 * definitions are written before the pause (dl_iterate_phdr takes the
 * loader lock, which a thread held at the gate may hold; a module loaded
 * meanwhile is picked up by the next cycle).  During the pause: copy only
 * (record_initial.c).  The gate gives up after MT_RECW_PAUSE_MAX_NS; events
 * that reached the rings during the pause (calls that were already past
 * the check, or gave up waiting) may or may not be in the copy, so they
 * are counted as dropped (LOST records): the recording says "inexact". */
/* Starts a pause: calls that would record wait at their gate (at most
 * MT_RECW_PAUSE_MAX_NS), calls already past it get MT_RECW_GRACE_NS. */
static void pause_hooks(void)
{
    atomic_store_explicit(&mt_w.gate_giveups, 0, memory_order_relaxed);
    atomic_store_explicit(&mt_w.pause_until, mt_now_ns() + MT_RECW_PAUSE_MAX_NS,
                          memory_order_relaxed);
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_PAUSE, memory_order_seq_cst);
    sleep_ns(MT_RECW_GRACE_NS);
}

static void initial_state(void)
{
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    if (!mt_rr_capture_prepare(true)) {
        fail(ENOMEM);
        return;
    }
    uint64_t now = mt_recw_now();
    pause_hooks();
    mt_rings_discard();
    mt_rr_capture_take();
    uint64_t late = mt_rings_discard_as_lost();
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_ON, memory_order_seq_cst);
    uint64_t paused = mt_recw_now() - now;
    mt_w.approx = late;
    uint64_t giveups = atomic_load_explicit(&mt_w.gate_giveups, memory_order_relaxed);
    if (late || giveups || mt_rr_capture_skipped())
        mt_log(MT_LOG_WARN,
               "recording: initial state approximate: %llu events during its capture counted as "
               "dropped (%llu calls stopped waiting, %llu live blocks left out)",
               (unsigned long long)late, (unsigned long long)giveups,
               (unsigned long long)mt_rr_capture_skipped());
    mt_log(MT_LOG_INFO, "recording: initial state copied in a %.1f ms pause", (double)paused / 1e6);
    mt_rr_modules(mt_recw_now()); /* recording is on: the loader lock is fine again */
    mt_rr_defs();
    mt_rr_capture_sums(mt_w.sum_initial);
    mt_rr_capture_write(MT_DAT_STATE_INITIAL);
    mt_rr_capture_release();
}

/* The final state (stop, exit, exec), consistent with the events: after
 * the events drained so far, a pause as for the initial state; in it,
 * each ring's head and lost counts are noted (the cut), then the trace
 * counters are copied.  Every event before a cut was accounted before the
 * copy, so the events up to the cuts are written and the rest is left
 * (exec: resume must find them) or discarded (end: accounted after the
 * copy, or by a call caught past the gate -- see final_excess).  Then the
 * recording switches off (or back on, resume).  Returns whether the copy
 * was made (else the caller writes the counters read live).  Lock held. */
static bool final_capture(bool resume)
{
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    mt_rr_drain_rings(true);
    bool copied = mt_rr_capture_prepare(false);
    if (copied) {
        pause_hooks();
        mt_rings_mark_cut();
        mt_rr_capture_take();
    } else {
        mt_log(MT_LOG_WARN, "recording: no memory to copy the final state: read live");
        mt_rings_mark_cut();
    }
    atomic_store_explicit(&mt_rec_mode, resume ? MT_RECMODE_ON : MT_RECMODE_OFF,
                          memory_order_seq_cst);
    mt_rr_modules(mt_recw_now());
    mt_rr_defs();
    mt_rr_drain_cut(!resume);
    mt_recw_end_frame();
    return copied;
}

/* What the final state counts beyond the initial state + events + LOST
 * records: calls that were past the gate when the pause began and still
 * had not appended their event at the cut (preempted, or a full ring), or
 * whose event had no ring.  Written as a LOST record of no thread (tid 0)
 * and counted as dropped, so the file says it is inexact and by how much.
 * Returns the events so counted. */
static uint64_t final_excess(void)
{
    uint64_t fin[MT_LOST_N], ex[MT_LOST_N];
    mt_rr_capture_sums(fin);
    bool under = false;
    for (unsigned i = 0; i < MT_LOST_N; i++) {
        uint64_t have = mt_w.sum_initial[i] + mt_w.sum_events[i] + mt_w.sum_lost[i];
        ex[i] = fin[i] > have ? fin[i] - have : 0;
        under |= fin[i] < have;
    }
    uint64_t n = ex[MT_LOST_AC] + ex[MT_LOST_FC];
    mt_rr_lost(0, ex);
    mt_recw_note_dropped(n);
    if (n)
        mt_log(MT_LOG_INFO,
               "recording: %llu events in the final state were not recorded: "
               "counted as dropped",
               (unsigned long long)n);
    if (under)
        mt_log(MT_LOG_INFO, "recording: the events exceed the final state (an approximate "
                            "initial state counted some twice)");
    return n;
}

static void log_block_stats(void)
{
    const mt_rb_stats *st = mt_rb_get_stats();
    mt_log(MT_LOG_INFO,
           "recording: %llu frees named their block, %llu written in full (%llu: no block of "
           "their frame at the address, %llu: another block there); %llu bytes of block map",
           (unsigned long long)st->refs, (unsigned long long)(st->not_found + st->mismatched),
           (unsigned long long)st->not_found, (unsigned long long)st->mismatched,
           (unsigned long long)mt_rb_bytes());
}

/* After final_capture: the excess, the FINAL set, END.  Lock held. */
static uint64_t final_write(bool copied, unsigned reason)
{
    uint64_t excess = 0;
    log_block_stats();
    if (copied) {
        excess = final_excess();
        mt_rr_capture_write(MT_DAT_STATE_FINAL);
        mt_rr_capture_release();
    } else {
        mt_rr_state(MT_DAT_STATE_FINAL, mt_recw_now());
    }
    mt_rr_end(reason, 0, mt_recw_now());
    mt_recw_end_frame();
    return excess;
}

bool mt_recw_begin(int fd, bool mid_run, bool fork_child, int *err)
{
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    mt_spin_lock(&mt_w.lock);
    bool ok = setup_memory();
    if (ok) {
        reset_session(fd);
        mt_w.open = true;
        write_file_header();
        uint64_t now = mt_recw_now();
        mt_rr_process(mid_run, fork_child, now);
        if (mid_run) {
            initial_state();
        } else {
            mt_rings_discard();
        }
        mt_recw_end_frame();
        ok = !mt_w.err;
        atomic_store_explicit(&mt_rec_mode, ok ? MT_RECMODE_ON : MT_RECMODE_OFF,
                              memory_order_seq_cst);
        *err = mt_w.err;
        if (!ok) {
            mt_w.open = false;
            close(fd);
            mt_w.fd = -1;
        }
    } else {
        *err = ENOMEM;
        close(fd);
    }
    mt_spin_unlock(&mt_w.lock);
    mt_tls_in_hook = was;
    return ok;
}

uint64_t mt_recw_end(unsigned reason)
{
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    atomic_store_explicit(&mt_w.thread_stop, true, memory_order_release);
    wake_writer();
    mt_spin_lock(&mt_w.lock);
    uint64_t bytes = mt_w.bytes;
    mt_w.sealed = false;
    if (mt_w.open && mt_w.pid == getpid()) {
        if (!mt_w.err) {
            bool copied = final_capture(false);
            /* Drops after the cuts belong to no recording: END's dropped
             * is what the LOST records say. */
            atomic_store_explicit(&mt_w.dropped,
                                  mt_w.sum_lost[MT_LOST_AC] + mt_w.sum_lost[MT_LOST_FC],
                                  memory_order_relaxed);
            final_write(copied, reason);
        } else {
            error_end();
        }
        atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_seq_cst);
        release_reserve();
        close(mt_w.fd);
        mt_w.fd = -1;
        mt_w.open = false;
        bytes = mt_w.bytes;
    }
    mt_spin_unlock(&mt_w.lock);
    if (atomic_load(&mt_w.thread_running))
        wait_writer_exit(); /* a start right after this one gets a writer of its own */
    mt_tls_in_hook = was;
    return bytes;
}

bool mt_recw_seal(unsigned reason)
{
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    mt_spin_lock(&mt_w.lock);
    bool ok = owned();
    if (ok) {
        bool copied = final_capture(true);
        mt_w.seal_mark = mt_w.bytes; /* the final state and END in frames of their own */
        memcpy(mt_w.seal_lost, mt_w.sum_lost, sizeof mt_w.seal_lost);
        mt_w.sealed = true;
        mt_w.seal_excess = final_write(copied, reason);
        ok = !mt_w.err;
        release_reserve();
        if (!ok)
            mt_w.sealed = false;
    }
    mt_spin_unlock(&mt_w.lock);
    mt_tls_in_hook = was;
    return ok;
}

bool mt_recw_unseal(void)
{
    int was = mt_tls_in_hook;
    mt_tls_in_hook = MT_IN_OWN;
    mt_spin_lock(&mt_w.lock);
    bool ok = mt_w.sealed && mt_w.open && !mt_w.err && mt_w.pid == getpid();
    if (ok)
        ok = ftruncate(mt_w.fd, (off_t)mt_w.seal_mark) == 0 &&
             lseek(mt_w.fd, (off_t)mt_w.seal_mark, SEEK_SET) == (off_t)mt_w.seal_mark;
    mt_w.sealed = false;
    if (ok) {
        mt_w.bytes = mt_w.seal_mark;
        mt_w.reserved_to = mt_w.seal_mark;        /* the cut freed what lay past it */
        mt_w.last_totals_ns = MT_RECW_TOTALS_DUE; /* the final state's TOTALS were cut off */
        /* So was its excess LOST record: those events are still to come. */
        memcpy(mt_w.sum_lost, mt_w.seal_lost, sizeof mt_w.sum_lost);
        atomic_fetch_sub_explicit(&mt_w.dropped, mt_w.seal_excess, memory_order_relaxed);
    } else if (mt_w.open && mt_w.pid == getpid()) {
        atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_seq_cst);
        close(mt_w.fd);
        mt_w.fd = -1;
        mt_w.open = false;
    }
    mt_spin_unlock(&mt_w.lock);
    mt_tls_in_hook = was;
    return ok;
}

void mt_recw_child_reset(void)
{
    /* The file, the writer thread and the rings are the parent's. */
    atomic_store_explicit(&mt_rec_mode, MT_RECMODE_OFF, memory_order_relaxed);
    atomic_store_explicit(&mt_w.lock.held, 0, memory_order_relaxed);
    if (mt_w.open && mt_w.fd >= 0)
        close(mt_w.fd);
    mt_w.open = false;
    mt_w.fd = -1;
    mt_w.frame_open = false;
    mt_w.sealed = false;
    atomic_store(&mt_w.thread_running, false);
    atomic_store(&mt_w.thread_stop, false);
    /* The parent's writer may have been resizing its zstd workspace or the
     * frame context's tables when another thread forked: forget them (the
     * child's copies leak, copy-on-write) rather than reuse them. */
    mt_w.cctx = NULL;
    mt_rb_child_reset();
    mt_rings_child_reset();
}
