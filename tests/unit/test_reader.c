/* test_reader.c -- unit tests of the segment reader (src/ipc): a valid
 * synthetic segment reads back exactly, and every kind of corruption is
 * rejected with the right error instead of a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memtop_ipc.h"
#include "seg_builder.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    sb_spec spec;
    sb_seg seg;
    mt_segment rd;
    mt_err err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/memtop-unit-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    sb_default_spec(&f->spec);
    mt_shm_path(f->dir, f->spec.pid, f->path, sizeof f->path);
    f->rd.fd = -1;
    *state = f;
    return sb_build(&f->seg, &f->spec);
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->rd.base)
        mt_segment_close(&f->rd);
    unlink(f->path);
    rmdir(f->dir);
    sb_free(&f->seg);
    free(f);
    return 0;
}

/* Write the (possibly corrupted) segment and open it. */
static mt_errc reopen(fixture *f)
{
    if (f->rd.base)
        mt_segment_close(&f->rd);
    assert_int_equal(sb_write(&f->seg, f->path), 0);
    memset(&f->err, 0, sizeof f->err);
    return mt_segment_open_pid(&f->rd, f->dir, f->spec.pid, &f->err);
}

static mt_errc read_snap(fixture *f, mt_snapshot *s)
{
    assert_int_equal(reopen(f), MT_OK);
    return mt_snapshot_read(&f->rd, 0, s, &f->err);
}

static mt_errc read_defs(fixture *f)
{
    assert_int_equal(reopen(f), MT_OK);
    mt_defs d;
    mt_defs_init(&d);
    mt_errc rc = mt_defs_update(&d, &f->rd, &f->err);
    mt_defs_free(&d);
    return rc;
}

static mt_errc read_modules(fixture *f)
{
    assert_int_equal(reopen(f), MT_OK);
    mt_modules m;
    mt_modules_init(&m);
    mt_errc rc = mt_modules_update(&m, &f->rd, &f->err);
    mt_modules_free(&m);
    return rc;
}

#define H(f) sb_header(&(f)->seg)

/* ---- the valid segment ---- */

static void test_valid_identity(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(f->rd.id.pid, f->spec.pid);
    assert_string_equal(f->rd.id.exe, "/usr/bin/test-prog");
    assert_int_equal(f->rd.id.max_depth, 32);
    assert_true(f->rd.writable);
    assert_int_equal(mt_segment_state(&f->rd), MT_STATE_RUNNING);
}

static void test_valid_snapshot(void **state)
{
    fixture *f = *state;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_OK);
    assert_int_equal(s.slot.publish_seq, 2);
    assert_int_equal(s.slot_index, 1);
    assert_int_equal(s.slot.ntraces, f->spec.ntraces);
    assert_int_equal(s.slot.ntimeline, f->spec.ntimeline);
    for (uint32_t i = 0; i < f->spec.ntraces; i++) {
        assert_int_equal(s.traces[i].id, i);
        assert_int_equal(s.traces[i].live_bytes, 200 * (i + 1));
    }
    assert_int_equal(s.timeline[3].alloc_count, 30);
    mt_snapshot_free(&s);
}

static void test_totals_only(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    mt_snapshot s;
    assert_int_equal(mt_snapshot_read(&f->rd, MT_SNAP_TOTALS_ONLY, &s, &f->err), MT_OK);
    assert_null(s.traces);
    assert_int_equal(s.slot.totals.trace_count, f->spec.ntraces);
    mt_snapshot_free(&s);
}

static void test_valid_defs_and_modules(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    mt_defs d;
    mt_modules m;
    mt_defs_init(&d);
    mt_modules_init(&m);
    assert_int_equal(mt_defs_update(&d, &f->rd, &f->err), MT_OK);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    assert_int_equal(d.count, f->spec.ntraces);
    unsigned n;
    const uint64_t *fr = mt_defs_frames(&d, 5, &n);
    assert_int_equal(n, f->spec.nframes);
    assert_int_equal(fr[1], sb_module_start((5 + 1) % 3) + 0x100 + 5);
    assert_null(mt_defs_frames(&d, 99, &n));
    const mt_module_info *mod = mt_modules_find(&m, fr[1]);
    assert_non_null(mod);
    assert_string_equal(mod->path, "/lib/mod0.so");
    assert_int_equal(fr[1] - mod->bias, 0x1000 + 0x100 + 5);
    assert_null(mt_modules_find(&m, 0x10));
    assert_null(mt_modules_find(&m, sb_module_start(0) + 0x80000));
    mt_defs_free(&d);
    mt_modules_free(&m);
}

/* Records appended after the first parse are picked up incrementally. */
static void test_defs_incremental(void **state)
{
    fixture *f = *state;
    mt_shm_header *h = H(f);
    uint64_t full = h->defs_used;
    h->defs_used = mt_def_bytes(f->spec.nframes) * 3;
    h->defs_count = 3;
    assert_int_equal(reopen(f), MT_OK);
    mt_defs d;
    mt_defs_init(&d);
    assert_int_equal(mt_defs_update(&d, &f->rd, &f->err), MT_OK);
    assert_int_equal(d.count, 3);
    mt_shm_header *live = (mt_shm_header *)f->rd.base;
    live->defs_count = f->spec.ntraces;
    live->defs_used = full;
    assert_int_equal(mt_defs_update(&d, &f->rd, &f->err), MT_OK);
    assert_int_equal(d.count, f->spec.ntraces);
    live->defs_used = 8; /* going backwards */
    assert_int_equal(mt_defs_update(&d, &f->rd, &f->err), MT_E_CORRUPT);
    mt_defs_free(&d);
}

/* ---- identity ---- */

static void test_bad_magic(void **state)
{
    fixture *f = *state;
    H(f)->magic ^= 1;
    assert_int_equal(reopen(f), MT_E_NOTMEMTOP);
}

static void test_unwritten_header(void **state)
{
    fixture *f = *state;
    memset(f->seg.buf, 0, 64);
    assert_int_equal(reopen(f), MT_E_NOTREADY);
}

static void test_foreign_version(void **state)
{
    fixture *f = *state;
    H(f)->version = 7;
    assert_int_equal(reopen(f), MT_E_FOREIGN);
    assert_string_equal(f->err.msg, "foreign version 7 (this memtop reads versions 1 and 2)");
}

static void test_wrong_endian_mark(void **state)
{
    fixture *f = *state;
    H(f)->endian_mark = 0x04030201;
    assert_int_equal(reopen(f), MT_E_FOREIGN);
}

static void test_swapped_magic(void **state)
{
    fixture *f = *state;
    H(f)->magic = __builtin_bswap64(MT_SHM_MAGIC);
    assert_int_equal(reopen(f), MT_E_FOREIGN);
}

static void test_word_bits(void **state)
{
    fixture *f = *state;
    H(f)->word_bits = 32;
    assert_int_equal(reopen(f), MT_E_FOREIGN);
}

static void test_header_bytes(void **state)
{
    fixture *f = *state;
    H(f)->header_bytes = 4096;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_pid_mismatch(void **state)
{
    fixture *f = *state;
    H(f)->pid = f->spec.pid + 1;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_max_depth(void **state)
{
    fixture *f = *state;
    H(f)->max_depth = MT_MAX_DEPTH + 1;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

/* ---- sizes and regions ---- */

static void test_truncated_file(void **state)
{
    fixture *f = *state;
    f->seg.size -= 4096; /* the header still claims the full size */
    assert_int_equal(reopen(f), MT_E_TRUNCATED);
}

static void test_truncated_header(void **state)
{
    fixture *f = *state;
    f->seg.size = 1000;
    assert_int_equal(reopen(f), MT_E_TRUNCATED);
}

static void test_tiny_and_empty_file(void **state)
{
    fixture *f = *state;
    f->seg.size = 4;
    assert_int_equal(reopen(f), MT_E_NOTMEMTOP);
    f->seg.size = 0;
    assert_int_equal(reopen(f), MT_E_NOTREADY);
}

static void test_shrunk_after_open(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(truncate(f->path, MT_HEADER_BYTES), 0);
    mt_snapshot s;
    assert_int_equal(mt_snapshot_read(&f->rd, 0, &s, &f->err), MT_E_TRUNCATED);
}

/* Every reader, the control channel included, after the file shrank under
 * the mapping: MT_E_TRUNCATED, not a SIGBUS. */
static void test_every_read_after_shrink(void **state)
{
    fixture *f = *state;
    mt_guard_install(); /* on top of the SIGBUS handler cmocka sets per test */
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(truncate(f->path, 0), 0);
    mt_defs d;
    mt_modules m;
    mt_defs_init(&d);
    mt_modules_init(&m);
    assert_int_equal(mt_defs_update(&d, &f->rd, &f->err), MT_E_TRUNCATED);
    assert_non_null(strstr(f->err.msg, "shrank while being read"));
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_E_TRUNCATED);
    mt_shm_recording rec;
    assert_int_equal(mt_segment_recording(&f->rd, &rec, &f->err), MT_E_TRUNCATED);
    mt_ctrl_reply reply;
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, "x", 50, &reply, &f->err),
                     MT_E_TRUNCATED);
    assert_int_equal(mt_segment_flags(&f->rd), 0);
    assert_int_equal(mt_segment_state(&f->rd), MT_STATE_RUNNING);
    mt_defs_free(&d);
    mt_modules_free(&m);
}

/* A fault the guard does not own, in a child: how did the child end? */
static int child_status(void (*fn)(fixture *), fixture *f)
{
    pid_t pid = fork();
    if (pid == 0) {
        fn(f);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void fault(fixture *f)
{
    mt_guard_install();
    if (truncate(f->path, 0) != 0)
        _exit(3);
    volatile unsigned char c = f->rd.base[0]; /* outside any guard: SIGBUS */
    (void)c;
}

/* Not cmocka's handler: the one a program without cmocka has. */
static void fault_unguarded(fixture *f)
{
    signal(SIGBUS, SIG_DFL);
    fault(f);
}

static void on_bus_exit(int sig)
{
    (void)sig;
    _exit(42);
}

static void fault_with_earlier_handler(fixture *f)
{
    signal(SIGBUS, on_bus_exit);
    fault(f);
}

static void bus_by_kill(fixture *f)
{
    (void)f;
    signal(SIGBUS, SIG_DFL);
    mt_guard_install();
    kill(getpid(), SIGBUS);
}

static void *guarded_read(void *arg)
{
    fixture *f = arg;
    mt_defs d;
    mt_defs_init(&d);
    mt_errc rc = mt_defs_update(&d, &f->rd, &f->err);
    mt_defs_free(&d);
    return (void *)(intptr_t)rc;
}

/* Faults outside a guard die as without it (or go to the handler that was
 * there before); a guard catches only its own thread's fault. */
static void test_guard_passes_other_faults_on(void **state)
{
    fixture *f = *state;
    mt_guard_install(); /* on top of the SIGBUS handler cmocka sets per test */
    assert_int_equal(reopen(f), MT_OK);
    int st = child_status(fault_unguarded, f);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
    assert_int_equal(reopen(f), MT_OK);
    st = child_status(fault_with_earlier_handler, f);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
    st = child_status(bus_by_kill, f);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(truncate(f->path, 0), 0);
    pthread_t t;
    void *rc;
    assert_int_equal(pthread_create(&t, NULL, guarded_read, f), 0);
    assert_int_equal(pthread_join(t, &rc), 0);
    assert_int_equal((intptr_t)rc, MT_E_TRUNCATED);
    /* A helper thread started with the viewer's mask (control_job.c,
     * sym_worker.c): a blocked SIGBUS would kill the process instead. */
    sigset_t mask, old;
    mt_guard_thread_mask(&mask);
    pthread_sigmask(SIG_SETMASK, &mask, &old);
    assert_int_equal(pthread_create(&t, NULL, guarded_read, f), 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_int_equal(pthread_join(t, &rc), 0);
    assert_int_equal((intptr_t)rc, MT_E_TRUNCATED);
}

static void test_segment_bytes_too_small(void **state)
{
    fixture *f = *state;
    H(f)->segment_bytes = 100;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_region_outside_file(void **state)
{
    fixture *f = *state;
    H(f)->slots[2].off = f->seg.size - 8;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_region_inside_header(void **state)
{
    fixture *f = *state;
    H(f)->defs_off = 64;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_region_unaligned(void **state)
{
    fixture *f = *state;
    H(f)->modules_off += 4;
    H(f)->modules_cap -= 8;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_cap_overflow(void **state)
{
    fixture *f = *state;
    H(f)->defs_cap = UINT64_MAX - 100; /* off + cap wraps around */
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_regions_overlap(void **state)
{
    fixture *f = *state;
    H(f)->slots[1].off = H(f)->slots[0].off + 8;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_slot_cap_too_small(void **state)
{
    fixture *f = *state;
    H(f)->slots[2].cap = 16;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_defs_used_over_cap(void **state)
{
    fixture *f = *state;
    H(f)->defs_used = H(f)->defs_cap + 8;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_modules_used_over_cap(void **state)
{
    fixture *f = *state;
    H(f)->modules_used = H(f)->modules_cap + sizeof(mt_shm_module);
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_modules_used_ragged(void **state)
{
    fixture *f = *state;
    H(f)->modules_used -= 8;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_counts_implausible(void **state)
{
    fixture *f = *state;
    H(f)->defs_count = H(f)->defs_used; /* far more records than bytes */
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

static void test_latest_slot_range(void **state)
{
    fixture *f = *state;
    H(f)->latest_slot = MT_SLOTS;
    assert_int_equal(reopen(f), MT_E_CORRUPT);
}

/* ---- snapshots ---- */

static void test_slot_stuck_odd_falls_back(void **state)
{
    fixture *f = *state;
    H(f)->slots[1].seq = 5; /* writer killed mid-write */
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_OK);
    assert_int_equal(s.slot.publish_seq, 1);
    assert_int_equal(s.slot_index, 0);
    mt_snapshot_free(&s);
}

static void test_all_slots_odd_is_busy(void **state)
{
    fixture *f = *state;
    H(f)->slots[0].seq = 3;
    H(f)->slots[1].seq = 5;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_BUSY);
}

/* A publish that lands while the reader copies slot 1 (deterministic: the
 * page of the slot's traces is made unreadable, and the fault's handler
 * plays the publisher: it bumps the slot's seq by two and writes trace ids
 * no definition has, then lets the copy go on).  The copy is torn: seq
 * differs, so slot 1 is "busy" and the reader takes slot 0; without the
 * seq check it would keep the torn copy (and report it corrupt). */
static struct {
    unsigned char *page;
    mt_shm_header *h;
    mt_shm_trace *traces;
    uint64_t ntraces;
    int faults;
} tear;

static void tear_on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    unsigned char *at = si->si_addr;
    if (tear.faults++ || at < tear.page || at >= tear.page + 4096)
        abort(); /* not the fault this test planted */
    mprotect(tear.page, 4096, PROT_READ | PROT_WRITE);
    __atomic_store_n(&tear.h->slots[1].seq, tear.h->slots[1].seq + 2, __ATOMIC_RELEASE);
    for (uint64_t i = 0; i < tear.ntraces; i++)
        tear.traces[i].id = 1000000u;
}

static void test_publish_during_copy_is_retried(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    if (sysconf(_SC_PAGESIZE) != 4096)
        skip(); /* the page arithmetic below is for 4 KiB pages */
    const mt_shm_slot *slot = (const mt_shm_slot *)(f->rd.base + f->rd.lay.slot_off[1]);
    unsigned char *traces =
        (unsigned char *)slot + sizeof *slot + (size_t)slot->ntimeline * sizeof(mt_shm_point);
    tear = (typeof(tear)){.page = (unsigned char *)((uintptr_t)traces & ~(uintptr_t)4095),
                          .h = (mt_shm_header *)f->rd.base,
                          .traces = (mt_shm_trace *)traces,
                          .ntraces = slot->ntraces};
    assert_true(tear.page > (unsigned char *)&tear.h->slots[1].seq); /* seq stays readable */
    struct sigaction sa = {.sa_sigaction = tear_on_fault, .sa_flags = SA_SIGINFO}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
    assert_int_equal(mprotect(tear.page, 4096, PROT_NONE), 0);
    mt_snapshot s;
    mt_errc rc = mt_snapshot_read(&f->rd, 0, &s, &f->err);
    sigaction(SIGSEGV, &old, NULL);
    assert_int_equal(tear.faults, 1); /* the publish did land during the copy */
    assert_int_equal(rc, MT_OK);
    assert_int_equal(s.slot_index, 0);
    assert_int_equal(s.slot.publish_seq, 1);
    mt_snapshot_free(&s);
}

static void test_no_snapshot_yet(void **state)
{
    fixture *f = *state;
    H(f)->slots[0].seq = 0;
    H(f)->slots[1].seq = 0;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_EMPTY);
}

static void test_ntraces_too_big(void **state)
{
    fixture *f = *state;
    sb_slot(&f->seg, 1)->ntraces = 1000;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_CORRUPT);
    sb_slot(&f->seg, 1)->ntraces = UINT64_MAX / 8;
    assert_int_equal(read_snap(f, &s), MT_E_CORRUPT);
}

static void test_ntimeline_too_big(void **state)
{
    fixture *f = *state;
    sb_slot(&f->seg, 1)->ntimeline = MT_TIMELINE_POINTS + 1;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_CORRUPT);
}

static void test_trace_id_out_of_range(void **state)
{
    fixture *f = *state;
    sb_traces(&f->seg, 1)[2].id = f->spec.ntraces;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_CORRUPT);
}

static void test_slot_defs_count_too_big(void **state)
{
    fixture *f = *state;
    sb_slot(&f->seg, 1)->defs_count = f->spec.ntraces + 5;
    mt_snapshot s;
    assert_int_equal(read_snap(f, &s), MT_E_CORRUPT);
}

/* ---- definitions and modules ---- */

static void test_def_too_deep(void **state)
{
    fixture *f = *state;
    sb_def(&f->seg, 3)->nframes = MT_MAX_DEPTH + 1;
    assert_int_equal(read_defs(f), MT_E_CORRUPT);
}

static void test_def_id_out_of_order(void **state)
{
    fixture *f = *state;
    sb_def(&f->seg, 4)->id = 6;
    assert_int_equal(read_defs(f), MT_E_CORRUPT);
}

static void test_def_cut_short(void **state)
{
    fixture *f = *state;
    H(f)->defs_used -= 8; /* the last record loses its last frame */
    assert_int_equal(read_defs(f), MT_E_CORRUPT);
}

static void test_def_frames_past_used(void **state)
{
    fixture *f = *state;
    sb_def(&f->seg, f->spec.ntraces - 1)->nframes = 100;
    assert_int_equal(read_defs(f), MT_E_CORRUPT);
}

static void test_module_path_unterminated(void **state)
{
    fixture *f = *state;
    memset(sb_module(&f->seg, 1)->path, 'a', MT_PATH_MAX);
    assert_int_equal(read_modules(f), MT_E_CORRUPT);
}

static void test_module_bad_range(void **state)
{
    fixture *f = *state;
    sb_module(&f->seg, 2)->end = sb_module(&f->seg, 2)->start;
    assert_int_equal(read_modules(f), MT_E_CORRUPT);
}

static void test_module_build_id_len(void **state)
{
    fixture *f = *state;
    sb_module(&f->seg, 0)->build_id_len = MT_BUILD_ID_MAX + 1;
    assert_int_equal(read_modules(f), MT_E_CORRUPT);
}

static void test_module_prefers_loaded(void **state)
{
    fixture *f = *state;
    mt_shm_module *a = sb_module(&f->seg, 0), *b = sb_module(&f->seg, 1);
    *b = *a; /* same range: a was unloaded, b loaded there later */
    snprintf(b->path, sizeof b->path, "/lib/again.so");
    a->unload_seq = 2;
    assert_int_equal(reopen(f), MT_OK);
    mt_modules m;
    mt_modules_init(&m);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    assert_string_equal(mt_modules_find(&m, a->start + 5)->path, "/lib/again.so");
    mt_modules_free(&m);
}

/* A plugin unloaded, another loaded at its place, unloaded, a third one
 * there: each trace's frame is named from the module that held it when
 * the trace was taken (unload_trace: the next trace id at the unload);
 * without stamps (older targets), "loaded, else the newest" as before. */
static void test_module_at_trace(void **state)
{
    fixture *f = *state;
    mt_shm_module *a = sb_module(&f->seg, 0), *b = sb_module(&f->seg, 1),
                  *c = sb_module(&f->seg, 2);
    *b = *a;
    *c = *a;
    snprintf(b->path, sizeof b->path, "/lib/b.so");
    snprintf(c->path, sizeof c->path, "/lib/c.so");
    a->unload_seq = 2, a->unload_trace = 10; /* traces 1..9 may be a's */
    b->unload_seq = 3, b->unload_trace = 20; /* 10..19 b's */
    c->unload_trace = 7;                     /* loaded: a stale value is no stamp */
    assert_int_equal(reopen(f), MT_OK);
    mt_modules m;
    mt_modules_init(&m);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    uint64_t addr = a->start + 5;
    assert_string_equal(mt_modules_find_at(&m, addr, 5)->path, a->path);
    assert_string_equal(mt_modules_find_at(&m, addr, 9)->path, a->path);
    assert_string_equal(mt_modules_find_at(&m, addr, 10)->path, "/lib/b.so");
    assert_string_equal(mt_modules_find_at(&m, addr, 19)->path, "/lib/b.so");
    assert_string_equal(mt_modules_find_at(&m, addr, 20)->path, "/lib/c.so");
    assert_string_equal(mt_modules_find_at(&m, addr, 0)->path, "/lib/c.so"); /* any */
    assert_string_equal(mt_modules_find(&m, addr)->path, "/lib/c.so");
    assert_null(mt_modules_find_at(&m, 0x10, 5));
    mt_modules_free(&m);
    a->unload_trace = b->unload_trace = 0; /* an older target: not known */
    assert_int_equal(reopen(f), MT_OK);
    mt_modules_init(&m);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    assert_string_equal(mt_modules_find_at(&m, addr, 5)->path, "/lib/c.so");
    mt_modules_free(&m);
}

/* A plugin unloaded, another one loaded at its place and unloaded, then
 * the first one's build loaded there again (its record revived: its marks
 * cleared, publish_shm.c mt_shm_revive_module): a map updated from the
 * segment, with no module added, names the address from the revived one
 * (the lookups' index is built again when a mark moves). */
static void test_module_revived_seen(void **state)
{
    fixture *f = *state;
    mt_shm_module *a = sb_module(&f->seg, 0), *b = sb_module(&f->seg, 1);
    *b = *a;
    snprintf(b->path, sizeof b->path, "/lib/b.so");
    a->unload_seq = 2, a->unload_trace = 10;
    b->unload_seq = 3, b->unload_trace = 20;
    assert_int_equal(reopen(f), MT_OK);
    mt_modules m;
    mt_modules_init(&m);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    uint64_t addr = a->start + 5;
    assert_string_equal(mt_modules_find(&m, addr)->path, "/lib/b.so");
    assert_string_equal(mt_modules_find_at(&m, addr, 25)->path, "/lib/b.so");
    a->unload_seq = 0, a->unload_trace = 0; /* revived */
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(mt_modules_update(&m, &f->rd, &f->err), MT_OK);
    assert_string_equal(mt_modules_find(&m, addr)->path, a->path);
    assert_string_equal(mt_modules_find_at(&m, addr, 25)->path, a->path);
    mt_modules_free(&m);
}

/* ---- liveness ---- */

static void test_state_exited(void **state)
{
    fixture *f = *state;
    H(f)->flags = MT_FLAG_EXITED;
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(mt_segment_state(&f->rd), MT_STATE_EXITED);
}

static void test_state_pid_reused(void **state)
{
    fixture *f = *state;
    H(f)->proc_start_ticks += 12345;
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(mt_segment_state(&f->rd), MT_STATE_STALE);
}

static int dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return (int)pid;
}

static void test_state_dead(void **state)
{
    fixture *f = *state;
    unlink(f->path);
    f->spec.pid = dead_pid();
    H(f)->pid = f->spec.pid;
    mt_shm_path(f->dir, f->spec.pid, f->path, sizeof f->path);
    assert_int_equal(reopen(f), MT_OK);
    assert_int_equal(mt_segment_state(&f->rd), MT_STATE_STALE);
}

/* ---- control channel ---- */

typedef struct responder {
    mt_shm_control *c;
    int rounds;
} responder;

/* Plays the target's publisher: answers each request once. */
static void *respond(void *arg)
{
    responder *r = arg;
    for (int i = 0; i < 2000 && r->rounds > 0; i++) {
        uint64_t req = __atomic_load_n(&r->c->req_seq, __ATOMIC_ACQUIRE);
        if (req != __atomic_load_n(&r->c->resp_seq, __ATOMIC_RELAXED)) {
            r->c->status = r->c->cmd == MT_CMD_PING ? MT_CTRL_OK : MT_CTRL_UNKNOWN_CMD;
            snprintf(r->c->msg, sizeof r->c->msg, "%s", r->c->cmd == MT_CMD_PING ? "pong" : "no");
            __atomic_store_n(&r->c->resp_seq, req, __ATOMIC_RELEASE);
            r->rounds--;
        }
        usleep(1000);
    }
    return NULL;
}

static void test_control_roundtrip(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    mt_shm_control *c = &((mt_shm_header *)f->rd.base)->control;
    c->lock = (uint32_t)dead_pid(); /* left by a viewer that died */
    responder r = {c, 2};
    pthread_t th;
    pthread_create(&th, NULL, respond, &r);
    mt_ctrl_reply reply;
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, "x", 2000, &reply, &f->err), MT_OK);
    assert_string_equal(reply.msg, "pong");
    assert_int_equal(c->lock, 0);
    assert_int_equal(mt_control_send(&f->rd, 99, NULL, 2000, &reply, &f->err), MT_E_TARGET);
    assert_int_equal(reply.status, MT_CTRL_UNKNOWN_CMD);
    pthread_join(th, NULL);
}

static void test_control_timeout(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    mt_ctrl_reply reply;
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, NULL, 50, &reply, &f->err), MT_E_TIMEOUT);
    mt_shm_control *c = &((mt_shm_header *)f->rd.base)->control;
    assert_int_equal(c->lock, 0);
    c->lock = 1; /* held by a live process (init) */
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, NULL, 50, &reply, &f->err), MT_E_TIMEOUT);
    assert_non_null(strstr(f->err.msg, "busy"));
}

static void test_control_gone(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    __atomic_store_n(&((mt_shm_header *)f->rd.base)->flags, MT_FLAG_EXITED, __ATOMIC_RELEASE);
    mt_ctrl_reply reply;
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, NULL, 2000, &reply, &f->err), MT_E_GONE);
}

static void test_control_readonly(void **state)
{
    fixture *f = *state;
    assert_int_equal(reopen(f), MT_OK);
    f->rd.writable = false;
    mt_ctrl_reply reply;
    assert_int_equal(mt_control_send(&f->rd, MT_CMD_PING, NULL, 50, &reply, &f->err),
                     MT_E_READONLY);
}

/* ---- paths ---- */

/* A target whose memtop-<pid> is held by another user publishes as
 * memtop-<pid>-<hex>: the reader finds it by its owner, prefers the exact
 * name when both are trusted, and refuses a file whose owner is not the
 * process's user (only root can make one here: chown). */
static void test_locate_aside(void **state)
{
    fixture *f = *state;
    char aside[160], got[160];
    snprintf(aside, sizeof aside, "%s/memtop-%d-00ff", f->dir, f->spec.pid);
    assert_int_equal(sb_write(&f->seg, aside), 0);
    assert_int_equal(mt_shm_locate(f->dir, f->spec.pid, got, sizeof got), 0);
    assert_string_equal(got, aside);
    assert_int_equal(mt_segment_open_pid(&f->rd, f->dir, f->spec.pid, &f->err), MT_OK);
    mt_segment_close(&f->rd);
    assert_int_equal(sb_write(&f->seg, f->path), 0);
    assert_int_equal(mt_shm_locate(f->dir, f->spec.pid, got, sizeof got), 0);
    assert_string_equal(got, f->path);
    if (geteuid() == 0) {
        assert_int_equal(chown(f->path, 54321, 54321), 0); /* planted by another user */
        assert_int_equal(mt_shm_locate(f->dir, f->spec.pid, got, sizeof got), 0);
        assert_string_equal(got, aside);
        assert_int_equal(unlink(aside), 0);
        assert_int_equal(mt_segment_open_pid(&f->rd, f->dir, f->spec.pid, &f->err), MT_E_UNTRUSTED);
        assert_non_null(strstr(f->err.msg, "foreign owner"));
    }
    unlink(aside);
}

static void test_parse_name(void **state)
{
    (void)state;
    assert_int_equal(mt_shm_parse_name("memtop-123"), 123);
    assert_int_equal(mt_shm_parse_name("memtop-0123"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-12x"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-99999999999"), -1);
    assert_int_equal(mt_shm_parse_name("other-12"), -1);
    /* The name a target takes when another user's file holds memtop-<pid>. */
    assert_int_equal(mt_shm_parse_name("memtop-123-0123456789abcdef"), 123);
    assert_int_equal(mt_shm_parse_name("memtop-123-"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-123-xyz"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-123-ABCD"), -1);
    assert_int_equal(mt_shm_parse_name("memtop-123-12-34"), -1);
    assert_int_equal(mt_shm_parse_name(".memtop-123.0123456789abcdef"), -1);
}

static void test_list_dir(void **state)
{
    fixture *f = *state;
    assert_int_equal(sb_write(&f->seg, f->path), 0);
    char junk[160];
    snprintf(junk, sizeof junk, "%s/memtop-7.tmp", f->dir);
    assert_int_equal(sb_write(&f->seg, junk), 0);
    char aside[160]; /* the same pid under a suffixed name: listed once */
    snprintf(aside, sizeof aside, "%s/memtop-%d-00ff", f->dir, f->spec.pid);
    assert_int_equal(sb_write(&f->seg, aside), 0);
    mt_pid_list l;
    assert_int_equal(mt_shm_list(f->dir, &l, &f->err), MT_OK);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.pids[0], f->spec.pid);
    mt_pid_list_free(&l);
    unlink(junk);
    unlink(aside);
    assert_int_equal(mt_shm_list("/nonexistent/dir", &l, &f->err), MT_E_NOENT);
    assert_int_equal(mt_segment_open_path(&f->rd, "/nonexistent/x", &f->err), MT_E_NOENT);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_valid_identity),
        T(test_valid_snapshot),
        T(test_totals_only),
        T(test_valid_defs_and_modules),
        T(test_defs_incremental),
        T(test_bad_magic),
        T(test_unwritten_header),
        T(test_foreign_version),
        T(test_wrong_endian_mark),
        T(test_swapped_magic),
        T(test_word_bits),
        T(test_header_bytes),
        T(test_pid_mismatch),
        T(test_max_depth),
        T(test_truncated_file),
        T(test_truncated_header),
        T(test_tiny_and_empty_file),
        T(test_shrunk_after_open),
        T(test_every_read_after_shrink),
        T(test_guard_passes_other_faults_on),
        T(test_segment_bytes_too_small),
        T(test_region_outside_file),
        T(test_region_inside_header),
        T(test_region_unaligned),
        T(test_cap_overflow),
        T(test_regions_overlap),
        T(test_slot_cap_too_small),
        T(test_defs_used_over_cap),
        T(test_modules_used_over_cap),
        T(test_modules_used_ragged),
        T(test_counts_implausible),
        T(test_latest_slot_range),
        T(test_slot_stuck_odd_falls_back),
        T(test_all_slots_odd_is_busy),
        T(test_publish_during_copy_is_retried),
        T(test_no_snapshot_yet),
        T(test_ntraces_too_big),
        T(test_ntimeline_too_big),
        T(test_trace_id_out_of_range),
        T(test_slot_defs_count_too_big),
        T(test_def_too_deep),
        T(test_def_id_out_of_order),
        T(test_def_cut_short),
        T(test_def_frames_past_used),
        T(test_module_path_unterminated),
        T(test_module_bad_range),
        T(test_module_build_id_len),
        T(test_module_prefers_loaded),
        T(test_module_at_trace),
        T(test_module_revived_seen),
        T(test_state_exited),
        T(test_state_pid_reused),
        T(test_state_dead),
        T(test_control_roundtrip),
        T(test_control_timeout),
        T(test_control_gone),
        T(test_control_readonly),
        T(test_parse_name),
        T(test_locate_aside),
        T(test_list_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
