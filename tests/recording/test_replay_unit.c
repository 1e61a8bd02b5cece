/* test_replay_unit.c -- unit tests of the replay (src/tui/replay) on
 * hand-built recordings: the end state, the state at a cursor, ages,
 * seeking back and forth against fresh replays, a cut-off file, a
 * recording started mid-run, events of threads out of order, the
 * exports (.json, .folded) of a replayed snapshot, and which counts of a
 * sampled recording are exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "export.h"
#include "replay.h"
#include "replay_export.h"
#include "replay_impl.h"
#include "replay_summary.h"
#include "test_reader_builder.h"

#define S 1000000000ull

static char dir[] = "/tmp/memtop-replay-XXXXXX";

static const char *write_tmp(const db_file *f, size_t n, const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(db_write(f->out.p, n ? n : f->out.n, path), 0);
    return path;
}

static mt_replay *open_std(unsigned rounds, int finalize)
{
    db_file f;
    db_standard(&f, rounds, finalize);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "std.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_file_free(&f);
    return r;
}

static const mt_shm_trace *trace(const mt_view *v, uint32_t id)
{
    assert_true(id < v->snap.slot.ntraces);
    return &v->snap.traces[id];
}

static void end_state(void **state)
{
    (void)state;
    mt_replay *r = open_std(5, 1);
    const mt_replay_info *in = mt_replay_get_info(r);
    assert_int_equal(in->pid, 4242);
    assert_string_equal(in->exe, "/usr/bin/prog");
    assert_int_equal(in->duration_ns, 5 * S);
    assert_int_equal(in->allocs, 20);
    assert_int_equal(in->frees, 10);
    assert_true(in->finalized);
    assert_true(in->final_state);
    assert_int_equal(in->final_mismatches, 0);
    assert_false(in->truncated);
    assert_int_equal(in->peak_live_bytes, 5 * 110 + 57);
    mt_view v;
    mt_view_init(&v);
    mt_err err;
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    assert_true(v.have_snap);
    assert_false(v.attached);
    assert_int_equal(mt_replay_state(r), MT_STATE_EXITED);
    assert_int_equal(v.snap.slot.ntraces, 3);
    assert_int_equal(v.snap.slot.totals.live_bytes, 550);
    assert_int_equal(v.snap.slot.totals.temporary_count, 5);
    assert_int_equal(trace(&v, 1)->live_bytes, 500);
    assert_int_equal(trace(&v, 1)->live_count, 5);
    assert_int_equal(trace(&v, 1)->alloc_count, 10);
    assert_int_equal(trace(&v, 1)->temporary_bytes, 35);
    assert_int_equal(trace(&v, 1)->peak_live_bytes, 507);
    assert_int_equal(trace(&v, 2)->live_bytes, 50);
    assert_int_equal(trace(&v, 2)->peak_live_bytes, 100);
    assert_int_equal(v.snap.slot.totals.rss_bytes, 1u << 20);
    assert_int_equal(v.snap.slot.totals.allocator_bytes, MT_UNKNOWN);
    assert_int_equal(v.defs.count, 3);
    assert_int_equal(v.mods.count, 2);
    assert_int_equal(v.seg.id.pid, 4242);
    assert_true(v.snap.slot.ntimeline >= 2 && v.snap.slot.ntimeline <= MT_TIMELINE_POINTS);
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

static void cursor_state(void **state)
{
    (void)state;
    mt_replay *r = open_std(5, 1);
    mt_view v;
    mt_view_init(&v);
    mt_err err;
    assert_int_equal(mt_replay_seek(r, 2 * S + S / 2, &v, &err), MT_OK);
    assert_int_equal(mt_replay_state(r), MT_STATE_RUNNING);
    assert_int_equal(v.snap.slot.t_ns, 2 * S + S / 2);
    assert_int_equal(trace(&v, 1)->alloc_count, 6);
    assert_int_equal(trace(&v, 1)->live_bytes, 300);
    assert_int_equal(trace(&v, 1)->temporary_count, 3);
    assert_int_equal(trace(&v, 2)->live_bytes, 30);
    /* blocks of trace 1 born at 0, 1 and 2 s: ages 2.5, 1.5, 0.5 s */
    assert_int_equal(trace(&v, 1)->age_bytes[0], 100);
    assert_int_equal(trace(&v, 1)->age_bytes[1], 200);
    assert_int_equal(trace(&v, 1)->oldest_birth_ns, 0);
    for (uint32_t i = 0; i < v.snap.slot.ntimeline; i++)
        assert_true(v.snap.timeline[i].t_ns <= v.snap.slot.t_ns);
    /* at the start (record_start 0): nothing yet, though an allocation is
     * stamped 0 (it was recorded after the start: it counts 1 ns later) */
    assert_int_equal(mt_replay_seek(r, 0, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 0);
    assert_int_equal(mt_replay_seek(r, 1, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 1);
    assert_int_equal(mt_replay_seek(r, 1 * S - 1, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 2);
    assert_int_equal(trace(&v, 2)->free_count, 1);
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

/* The hooks' coarse clock lags the one of record_start: events recorded
 * just after the start can be stamped before it (replay_open.c,
 * mt_replay_next).  The start shows none of them; 1 ns later, all. */
static void events_before_start(void **state)
{
    (void)state;
    db_file f;
    db_standard_from(&f, 2, MT_DAT_END_EXIT, 1500); /* after round 0's first 4 events */
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "early.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_file_free(&f);
    const mt_replay_info *in = mt_replay_get_info(r);
    assert_int_equal(in->start_ns, 1500);
    assert_true(in->peak_t_ns > in->start_ns);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, 1500, &v, &err), MT_OK);
    assert_int_equal(v.snap.slot.totals.live_count, 0);
    assert_int_equal(trace(&v, 1)->alloc_count, 0);
    assert_int_equal(trace(&v, 2)->alloc_count, 0);
    assert_int_equal(mt_replay_seek(r, 1501, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 2);
    assert_int_equal(trace(&v, 2)->alloc_count, 2);
    assert_int_equal(mt_replay_seek(r, 1500, &v, &err), MT_OK); /* back: the same */
    assert_int_equal(v.snap.slot.totals.live_count, 0);
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

static void same_traces(const mt_view *a, const mt_view *b)
{
    assert_int_equal(a->snap.slot.ntraces, b->snap.slot.ntraces);
    for (uint64_t i = 0; i < a->snap.slot.ntraces; i++) {
        const mt_shm_trace *x = &a->snap.traces[i], *y = &b->snap.traces[i];
        assert_int_equal(x->alloc_count, y->alloc_count);
        assert_int_equal(x->alloc_bytes, y->alloc_bytes);
        assert_int_equal(x->free_count, y->free_count);
        assert_int_equal(x->free_bytes, y->free_bytes);
        assert_int_equal(x->temporary_count, y->temporary_count);
        assert_memory_equal(x->age_bytes, y->age_bytes, sizeof x->age_bytes);
    }
    assert_int_equal(a->snap.slot.totals.live_bytes, b->snap.slot.totals.live_bytes);
}

/* Trace 1's allocations of db_standard's recording up to t: each round i
 * allocates at i s and i s + 1000 ns. */
static uint64_t std_allocs(uint64_t t, unsigned rounds)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < rounds; i++)
        n += (i * S <= t) + (i * S + 1000 <= t);
    return n;
}

/* Any walk of the cursor gives what a fresh replay seeking once gives, and
 * what the recording holds up to the cursor. */
static void seek_walk(void **state)
{
    (void)state;
    mt_replay *walk = open_std(40, 1);
    uint64_t seed = 12345;
    mt_view v, w;
    mt_view_init(&v);
    mt_view_init(&w);
    mt_err err;
    for (int i = 0; i < 60; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t t = (seed >> 20) % (42 * S);
        if (i % 7 == 0)
            t = UINT64_MAX;
        if (i % 5 == 0 && t != UINT64_MAX)
            t = t / S * S + (i % 10 ? 999 : 1000); /* around the second event of a round */
        assert_int_equal(mt_replay_seek(walk, t, &v, &err), MT_OK);
        mt_replay *fresh = open_std(40, 1);
        assert_int_equal(mt_replay_seek(fresh, t, &w, &err), MT_OK);
        same_traces(&v, &w);
        assert_int_equal(trace(&v, 1)->alloc_count, std_allocs(t, 40));
        mt_replay_view_free(&w);
        mt_replay_close(fresh);
    }
    assert_true(mt_replay_get_info(walk)->checkpoints > 2);
    mt_replay_view_free(&v);
    mt_replay_close(walk);
}

/* --at SECONDS (mt_replay_at): from the start, up to the duration as it
 * is printed (to the ms); past it, or a number too big for ns, is refused. */
static void at_seconds(void **state)
{
    (void)state;
    mt_replay *r = open_std(5, 1); /* 0 s to 5 s */
    uint64_t t = 1;
    char msg[160];
    assert_int_equal(mt_replay_at(r, 0, &t, msg, sizeof msg), 0);
    assert_int_equal(t, 0);
    assert_int_equal(mt_replay_at(r, 2.5, &t, msg, sizeof msg), 0);
    assert_int_equal(t, 5 * S / 2);
    assert_int_equal(mt_replay_at(r, 5.0004, &t, msg, sizeof msg), 0);
    assert_int_equal(t, 5 * S);
    assert_int_equal(mt_replay_at(r, 5.0006, &t, msg, sizeof msg), -1);
    assert_string_equal(msg, "--at 5.001 is past the end of the recording (5.000 s)");
    assert_int_equal(mt_replay_at(r, 1e30, &t, msg, sizeof msg), -1);
    assert_string_equal(msg, "--at 1e+30 is past the end of the recording (5.000 s)");
    assert_int_equal(mt_replay_at(r, 18446744073.8, &t, msg, sizeof msg), -1);
    mt_replay_close(r);
}

static void cut_short(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 5, 1);
    size_t cut = f.frame_end[3] + 5; /* inside the frame of round 3 */
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, cut, "cut.dat"), &err);
    assert_non_null(r);
    const mt_replay_info *in = mt_replay_get_info(r);
    assert_true(in->truncated);
    assert_false(in->finalized);
    assert_int_equal(in->dropped_bytes, 5);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    assert_int_equal(mt_replay_state(r), MT_STATE_STALE);
    assert_int_equal(trace(&v, 1)->alloc_count, 6); /* rounds 0, 1, 2 */
    mt_replay_view_free(&v);
    mt_replay_close(r);
    /* no complete frame at all */
    r = mt_replay_open(write_tmp(&f, MT_DAT_HEADER_BYTES + 3, "cut0.dat"), &err);
    assert_null(r);
    assert_int_equal(err.code, MT_E_TRUNCATED);
    db_file_free(&f);
}

/* The start of a recording begun mid-run at 5 s: PROCESS, traces 0 and 1
 * (no frames), and the INITIAL state's STATE_BEGIN. */
static void mid_run_head(db_file *f, db_buf *b)
{
    b->n = 0;
    db_v(b, 7), db_v(b, 1), db_v(b, 0), db_v(b, 1), db_v(b, 0), db_v(b, 5 * S);
    db_v(b, 0), db_v(b, 8), db_v(b, 0), db_v(b, 1000), db_v(b, MT_DAT_PROC_MID_RUN);
    db_s(b, "/bin/x"), db_s(b, "x");
    db_rec(f, MT_DAT_REC_PROCESS, b, 1);
    for (unsigned id = 0; id < 2; id++) {
        b->n = 0;
        db_v(b, id), db_v(b, 0), db_v(b, 0), db_v(b, id), db_v(b, 0);
        db_rec(f, MT_DAT_REC_TRACE, b, 1);
    }
    b->n = 0;
    db_v(b, MT_DAT_STATE_INITIAL), db_v(b, 5 * S), db_v(b, 0);
    db_rec(f, MT_DAT_REC_STATE_BEGIN, b, 1);
}

/* A recording started mid-run: an INITIAL set, then events. */
static void mid_run(void **state)
{
    (void)state;
    db_file f;
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    db_buf b = {0};
    mid_run_head(&f, &b);
    b.n = 0;
    db_v(&b, 1), db_v(&b, 1), db_v(&b, 10), db_v(&b, 1000), db_v(&b, 4), db_v(&b, 400);
    db_v(&b, 1), db_v(&b, 100), db_v(&b, 900);
    db_rec(&f, MT_DAT_REC_TRACE_STATES, &b, 1);
    b.n = 0;
    db_v(&b, 2), db_z(&b, 1), db_z(&b, 1000), db_v(&b, 100), db_v(&b, 4);
    db_z(&b, 0), db_z(&b, 2000), db_v(&b, 100), db_v(&b, 2);
    db_rec(&f, MT_DAT_REC_LIVE_BLOCKS, &b, 2);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_INITIAL), db_v(&b, 1), db_v(&b, 2);
    db_rec(&f, MT_DAT_REC_STATE_END, &b, 1);
    db_flush(&f);
    b.n = 0; /* one more allocation and one free of an initial block */
    db_v(&b, 3), db_v(&b, 6 * S), db_v(&b, 2);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC}, 1), db_v(&b, 0), db_v(&b, 1), db_v(&b, 50);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_FREE | MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, 0);
    db_v(&b, 100), db_v(&b, 6000 - 1000);
    db_rec(&f, MT_DAT_REC_EVENTS, &b, 2);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "mid.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 11);
    assert_int_equal(trace(&v, 1)->free_count, 5);
    assert_int_equal(trace(&v, 1)->live_bytes, 1050 - 500);
    assert_int_equal(trace(&v, 1)->temporary_count, 1);
    /* live by age at 6 s: 50 B now, 300 B born at 1 s (5 s), 200 B at 3 s */
    assert_int_equal(trace(&v, 1)->age_bytes[0], 50);
    assert_int_equal(trace(&v, 1)->age_bytes[1], 500);
    assert_int_equal(trace(&v, 1)->oldest_birth_ns, 1 * S);
    /* no TOTALS record: RSS, memtop's own bytes and threads are unknown */
    assert_int_equal(v.snap.slot.totals.rss_bytes, MT_UNKNOWN);
    assert_int_equal(v.snap.slot.totals.tracker_bytes, MT_UNKNOWN);
    assert_int_equal(v.snap.slot.totals.thread_count, MT_UNKNOWN);
    mt_locator loc = {&v.mods, NULL, NULL, NULL, NULL, 0};
    mt_export_src src = {&v, mt_replay_state(r), &loc, MT_SORT_LIVE, NULL, 0, false, 0};
    char path[256], msg[256];
    snprintf(path, sizeof path, "%s/mid.json", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char text[8192];
    text[fread(text, 1, sizeof text - 1, fp)] = '\0';
    fclose(fp);
    assert_non_null(strstr(text,
                           "\"rss_bytes\": null, \"rss_age_ms\": null, \"tracker_bytes\": null, "
                           "\"segment_bytes\": null"));
    assert_non_null(strstr(text, "\"thread_count\": null}"));
    mt_replay_view_free(&v);
    mt_replay_close(r);
    db_buf_free(&b);
    db_file_free(&f);
}

static void put_totals(db_file *f, uint64_t t, uint64_t live, uint64_t peak)
{
    db_buf b = {0};
    db_v(&b, t), db_v(&b, 0), db_v(&b, MT_DAT_TOTALS_FIELDS);
    for (unsigned i = 0; i < MT_DAT_TOTALS_FIELDS; i++)
        db_v(&b, i == 0 ? live : i == 8 ? peak : 0);
    db_v(&b, 0), db_v(&b, 0);
    db_rec(f, MT_DAT_REC_TOTALS, &b, 1);
    db_buf_free(&b);
}

/* A recording started at 5 s with 1000 B live (trace 1, born at 1 s), the
 * target's peak `peak0` in its first TOTALS; an allocation of `size` bytes
 * at 6 s freed at 6.5 s; a TOTALS at 7 s with the target's peak `peak1`. */
static mt_replay *open_mid_peak(uint64_t peak0, uint64_t peak1, uint64_t size)
{
    db_file f;
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    db_buf b = {0};
    mid_run_head(&f, &b);
    b.n = 0;
    db_v(&b, 1), db_v(&b, 1), db_v(&b, 10), db_v(&b, 1000), db_v(&b, 0), db_v(&b, 0);
    db_v(&b, 0), db_v(&b, 0), db_v(&b, 1000);
    db_rec(&f, MT_DAT_REC_TRACE_STATES, &b, 1);
    b.n = 0;
    db_v(&b, 1), db_z(&b, 1), db_z(&b, 1000), db_v(&b, 100), db_v(&b, 10);
    db_rec(&f, MT_DAT_REC_LIVE_BLOCKS, &b, 1);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_INITIAL), db_v(&b, 1), db_v(&b, 1);
    db_rec(&f, MT_DAT_REC_STATE_END, &b, 1);
    put_totals(&f, 5 * S, 1000, peak0);
    db_flush(&f);
    b.n = 0;
    db_v(&b, 3), db_v(&b, 6 * S), db_v(&b, 2);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC}, 1), db_v(&b, 0), db_v(&b, 1), db_v(&b, size);
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_FREE | MT_DAT_EV_SAME_TRACE}, 1), db_v(&b, S / 2);
    db_v(&b, size), db_v(&b, 500);
    db_rec(&f, MT_DAT_REC_EVENTS, &b, 2);
    put_totals(&f, 7 * S, 1000, peak1);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "midpeak.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_buf_free(&b);
    db_file_free(&f);
    return r;
}

/* The peak is the one within the recording, at its own time; a higher
 * process peak reached before a mid-run recording began is named apart. */
static void peak_within_recording(void **state)
{
    (void)state;
    mt_replay *r = open_mid_peak(50u << 20, 50u << 20, 500);
    const mt_replay_info *in = mt_replay_get_info(r);
    assert_int_equal(in->peak_live_bytes, 1500);
    assert_int_equal(in->peak_t_ns, 6 * S);
    assert_false(in->peak_t_by);
    assert_int_equal(in->process_peak_before, 50u << 20);
    mt_replay_close(r);
    /* no growth after the start: the peak is what was live at the start */
    r = open_mid_peak(1000, 1000, 0);
    in = mt_replay_get_info(r);
    assert_int_equal(in->peak_live_bytes, 1000);
    assert_int_equal(in->peak_t_ns, 5 * S);
    assert_int_equal(in->process_peak_before, 0);
    mt_replay_close(r);
    /* the target's peak rose during the recording beyond the replayed one:
     * the target's, by the TOTALS that first showed it */
    r = open_mid_peak(50u << 20, 60u << 20, 500);
    in = mt_replay_get_info(r);
    assert_int_equal(in->peak_live_bytes, 60u << 20);
    assert_int_equal(in->peak_t_ns, 7 * S);
    assert_true(in->peak_t_by);
    assert_int_equal(in->process_peak_before, 0);
    mt_replay_close(r);
}

/* A mid-run recording whose one TOTALS, at 7 s, of `nfields` fields, says
 * the allocator held 1 MiB as of `age_ms` before it; the view at its end. */
static void open_allocator_age(mt_view *v, unsigned nfields, uint64_t age_ms)
{
    db_file f;
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    db_buf b = {0};
    mid_run_head(&f, &b);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_INITIAL), db_v(&b, 0), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_STATE_END, &b, 1);
    b.n = 0;
    db_v(&b, 7 * S), db_v(&b, 0), db_v(&b, nfields);
    for (unsigned i = 0; i < nfields; i++)
        db_v(&b, i == 13 ? 1u << 20 : i == MT_DAT_TOTALS_ALLOCATOR_AGE ? age_ms : 0);
    db_v(&b, 0), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_TOTALS, &b, 1);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "age.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    mt_view_init(v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, v, &err), MT_OK);
    assert_int_equal(v->snap.slot.totals.allocator_bytes, 1u << 20);
    mt_replay_close(r);
    db_buf_free(&b);
    db_file_free(&f);
}

/* A TOTALS' allocator figures are as old as its 21st field says: the
 * view dates them from the TOTALS' time; an older writer's 20 fields date
 * them at the TOTALS; an age beyond the recording's clock (a crafted file)
 * dates them at its start instead of wrapping to "fresh". */
static void allocator_age(void **state)
{
    (void)state;
    mt_view v;
    open_allocator_age(&v, MT_DAT_TOTALS_FIELDS, 3000);
    assert_int_equal(v.snap.allocator_at_ns, 4 * S);
    assert_int_equal(mt_snapshot_allocator_age_ns(&v.snap), v.snap.slot.t_ns - 4 * S);
    assert_true(mt_view_allocator_age_s(&v) >= 3);
    mt_replay_view_free(&v);
    open_allocator_age(&v, MT_DAT_TOTALS_FIELDS - 1, 0);
    assert_int_equal(v.snap.allocator_at_ns, 7 * S);
    assert_int_equal(mt_view_allocator_age_s(&v), 0);
    mt_replay_view_free(&v);
    open_allocator_age(&v, MT_DAT_TOTALS_FIELDS, UINT64_MAX / 2);
    assert_int_equal(v.snap.allocator_at_ns, 1);
    assert_int_equal(mt_snapshot_allocator_age_ns(&v.snap), v.snap.slot.t_ns - 1);
    mt_replay_view_free(&v);
}

/* An ALLOCATORS record at t: jemalloc (static, hooked), and with
 * `plugin` a static mimalloc of a plugin, unseen. */
static void put_allocators(db_file *f, uint64_t t, bool plugin)
{
    db_buf b = {0};
    db_v(&b, t), db_v(&b, plugin ? 2 : 1), db_v(&b, plugin ? 1 : 0), db_v(&b, 0);
    db_v(&b, MT_ALLOC_KIND_JEMALLOC), db_v(&b, MT_ALLOC_STATIC | MT_ALLOC_HOOKED);
    db_s(&b, "je_"), db_s(&b, "5.3.0"), db_s(&b, "/usr/bin/prog"), db_s(&b, "");
    if (plugin) {
        db_v(&b, MT_ALLOC_KIND_MIMALLOC), db_v(&b, MT_ALLOC_STATIC | MT_ALLOC_INEXACT);
        db_s(&b, "mi_"), db_s(&b, ""), db_s(&b, "/usr/lib/plugin.so");
        db_s(&b, "mimalloc in plugin.so not hooked");
    }
    db_rec(f, MT_DAT_REC_ALLOCATORS, &b, 0);
    db_buf_free(&b);
}

/* The allocators at the cursor are those found by then: a plugin's
 * unseen allocator found at 3 s does not make 2 s "NOT exact" (the list
 * at the end was shown at every cursor); before the first list, none
 * named (TOTALS' count of unseen ones: db_standard's filler). */
static void allocators_at_cursor(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 5, 0);
    put_allocators(&f, 1 * S, false);
    put_allocators(&f, 3 * S, true);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "allocators.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    mt_view v;
    mt_view_init(&v);
    static const uint64_t at[] = {S / 2, 2 * S, UINT64_MAX, 2 * S, 3 * S + 1};
    static const uint32_t count[] = {0, 1, 2, 1, 2}, inexact[] = {19, 0, 1, 0, 1};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        assert_int_equal(mt_replay_seek(r, at[i], &v, &err), MT_OK);
        if (v.allocs.count != count[i] || v.allocs.inexact != inexact[i])
            fail_msg("at %llu ns: %u allocators, %u inexact; expected %u, %u",
                     (unsigned long long)at[i], v.allocs.count, v.allocs.inexact, count[i],
                     inexact[i]);
    }
    assert_string_equal(v.allocs.a[1].note, "mimalloc in plugin.so not hooked");
    mt_replay_view_free(&v);
    mt_replay_close(r);
    db_file_free(&f);
}

/* The viewer's data health names what the recording lost: dropped events
 * (LOST records), a mid-run start without its initial state. */
static void inexact_text(void **state)
{
    (void)state;
    char buf[128];
    mt_replay *r = open_std(2, 1);
    assert_string_equal(mt_replay_inexact_text(r, buf, sizeof buf), "");
    mt_replay_close(r);
    db_file f;
    db_standard(&f, 2, 0);
    db_buf b = {0};
    db_v(&b, 3 * S), db_v(&b, 7), db_v(&b, 5), db_v(&b, 500), db_v(&b, 4), db_v(&b, 400);
    db_rec(&f, MT_DAT_REC_LOST, &b, 1);
    db_flush(&f);
    mt_err err;
    r = mt_replay_open(write_tmp(&f, 0, "lost.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    /* an older writer's LOST: no causes */
    assert_string_equal(mt_replay_inexact_text(r, buf, sizeof buf),
                        "9 events dropped: cause not recorded 9 ");
    mt_replay_close(r);
    db_file_free(&f);
    /* with its causes (dat_format.h MT_DAT_LOST_*) */
    db_standard(&f, 2, 0);
    db_v(&b, 2), db_v(&b, MT_DAT_LOST_DISK), db_v(&b, 8), db_v(&b, MT_DAT_LOST_NOWAIT), db_v(&b, 1);
    db_rec(&f, MT_DAT_REC_LOST, &b, 1);
    db_flush(&f);
    r = mt_replay_open(write_tmp(&f, 0, "lost2.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    assert_string_equal(mt_replay_inexact_text(r, buf, sizeof buf),
                        "9 events dropped: disk behind 8, hook could not wait 1 ");
    mt_replay_close(r);
    db_file_free(&f);
    /* mid-run, cut inside its initial state set, before any event: a part
     * of the heap and nothing else, refused (it read as "0 B live") */
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    b.n = 0;
    db_v(&b, 7), db_v(&b, 1), db_v(&b, 0), db_v(&b, 1), db_v(&b, 0), db_v(&b, 5 * S);
    db_v(&b, 0), db_v(&b, 8), db_v(&b, 0), db_v(&b, 1000), db_v(&b, MT_DAT_PROC_MID_RUN);
    db_s(&b, "/bin/x"), db_s(&b, "x");
    db_rec(&f, MT_DAT_REC_PROCESS, &b, 1);
    db_flush(&f);
    b.n = 0;
    db_v(&b, MT_DAT_STATE_INITIAL), db_v(&b, 5 * S), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_STATE_BEGIN, &b, 1);
    db_flush(&f);
    r = mt_replay_open(write_tmp(&f, f.out.n - 3, "noinit.dat"), &err);
    assert_null(r);
    assert_int_equal(err.code, MT_E_TRUNCATED);
    assert_non_null(strstr(err.msg, "cut inside its initial state"));
    db_buf_free(&b);
    db_file_free(&f);
}

/* Thread B frees a block of thread A's before A's record reaches the file. */
static void threads_out_of_order(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 1, 0);
    db_buf b = {0};
    db_v(&b, 2), db_v(&b, 3 * S), db_v(&b, 1); /* B frees at 3 s, born at 2 s */
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_FREE}, 1), db_v(&b, 0), db_v(&b, 1), db_v(&b, 64);
    db_v(&b, 1000);
    db_rec(&f, MT_DAT_REC_EVENTS, &b, 1);
    b.n = 0;
    db_v(&b, 1), db_v(&b, 2 * S), db_v(&b, 1); /* A allocated at 2 s */
    db_bytes(&b, (unsigned char[]){MT_DAT_EV_ALLOC}, 1), db_v(&b, 0), db_v(&b, 1), db_v(&b, 64);
    db_rec(&f, MT_DAT_REC_EVENTS, &b, 1);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "ooo.dat"), &err);
    assert_non_null(r);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, 2 * S + S / 2, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->live_bytes, 164); /* the 64 B block is live at 2.5 s */
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->live_bytes, 100);
    assert_int_equal(trace(&v, 1)->age_bytes[1] + trace(&v, 1)->age_bytes[0], 100);
    mt_replay_view_free(&v);
    mt_replay_close(r);
    db_buf_free(&b);
    db_file_free(&f);
}

/* Frees whose allocations were dropped leave negative groups; once they
 * are older than the reordering window they are pruned (memory stays
 * bounded by live groups, not by dropped events). */
static void dropped_allocations(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 1, 0);
    db_buf b = {0};
    db_v(&b, 3), db_v(&b, 6 * S), db_v(&b, 5000);
    for (unsigned i = 0; i < 5000; i++) { /* frees of blocks born 1 ms apart */
        db_bytes(&b, (unsigned char[]){MT_DAT_EV_FREE | (i ? MT_DAT_EV_SAME_TRACE : 0)}, 1);
        db_v(&b, i ? 0 : 1000000);
        if (!i)
            db_v(&b, 1);
        db_v(&b, 8), db_v(&b, i);
    }
    db_rec(&f, MT_DAT_REC_EVENTS, &b, 5000);
    b.n = 0;
    db_v(&b, 20 * S), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0), db_v(&b, 0);
    db_rec(&f, MT_DAT_REC_TOTALS, &b, 1);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "drops.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    assert_true(r->st.live.count < 100);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    uint64_t aged = 0;
    for (unsigned k = 0; k < MT_AGE_BUCKETS; k++)
        aged += trace(&v, 1)->age_bytes[k];
    assert_int_equal(aged, 100); /* the one block of round 0 */
    mt_replay_view_free(&v);
    mt_replay_close(r);
    db_buf_free(&b);
    db_file_free(&f);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void exports(void **state)
{
    (void)state;
    mt_replay *r = open_std(3, 1);
    mt_view v;
    mt_view_init(&v);
    mt_err err;
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    mt_locator loc = {&v.mods, NULL, NULL, NULL, NULL, 0};
    mt_export_rec rec;
    mt_replay_export_rec(r, &rec);
    mt_export_src src = {&v, mt_replay_state(r), &loc, MT_SORT_LIVE, &rec, 0, false, 0};
    char path[256], msg[256];
    snprintf(path, sizeof path, "%s/out.folded", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    char *text = slurp(path);
    /* outermost first: frames[2] = 0x401110, frames[1], frames[0] */
    assert_non_null(strstr(text, "prog+0x1110;prog+0x1210;prog+0x1010 300\n"));
    assert_non_null(strstr(text, "prog+0x1120;prog+0x1220;prog+0x1020 30\n"));
    assert_null(strstr(text, "[unknown]")); /* trace 0 holds nothing */
    snprintf(path, sizeof path, "%s/out.json", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    text = slurp(path);
    assert_non_null(strstr(text, "\"pid\": 4242"));
    assert_non_null(strstr(text, "\"state\": \"exited\""));
    assert_non_null(strstr(text, "\"live_bytes\": 330"));
    assert_non_null(strstr(text, "\"recording\": {\"file\": \""));
    assert_non_null(strstr(text,
                           "\"cursor_s\": 3.000000000, \"duration_s\": 3.000000000, "
                           "\"at_end\": true, \"finalized\": true, \"end_reason\": "
                           "\"exited\", \"truncated\": false, \"invalid_tail\": false, "
                           "\"truncated_bytes\": 0, "
                           "\"events_dropped\": 0, \"inexact_start\": false, \"cull_s\": null, "
                           "\"order\": \"thread\", \"stopped\": null, "
                           "\"dropped_by_cause\": {\"disk_behind\": 0, \"writer_starved\": 0, "
                           "\"could_not_wait\": 0, \"no_buffer\": 0, \"initial_capture\": 0, "
                           "\"missed_at_end\": 0, \"other\": 0, \"not_recorded\": 0}},\n"));
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

/* An export of a recording says where it comes from: a stopped one, one
 * cut short (not finalized, truncated) at a cursor before its end. */
static void exports_provenance(void **state)
{
    (void)state;
    db_file f;
    db_standard_end(&f, 4, MT_DAT_END_STOP);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "stop.dat"), &err);
    assert_non_null(r);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    mt_locator loc = {&v.mods, NULL, NULL, NULL, NULL, 0};
    mt_export_rec rec;
    mt_replay_export_rec(r, &rec);
    mt_export_src src = {&v, mt_replay_state(r), &loc, MT_SORT_LIVE, &rec, 0, false, 0};
    char path[256], msg[256];
    snprintf(path, sizeof path, "%s/stop.json", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    char *text = slurp(path);
    assert_non_null(strstr(text, "\"finalized\": true, \"end_reason\": \"stopped\""));
    mt_replay_view_free(&v);
    mt_replay_close(r);
    /* cut inside round 2's frame, exported at 1.5 s */
    r = mt_replay_open(write_tmp(&f, f.frame_end[2] + 9, "cut.dat"), &err);
    assert_non_null(r);
    assert_int_equal(mt_replay_seek(r, S + S / 2, &v, &err), MT_OK);
    mt_replay_export_rec(r, &rec);
    src.v = &v;
    src.state = mt_replay_state(r);
    loc.mods = &v.mods;
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    text = slurp(path);
    assert_non_null(strstr(text, "\"cursor_s\": 1.500000000, "));
    assert_non_null(strstr(text, "\"at_end\": false, \"finalized\": false, \"end_reason\": "
                                 "null, \"truncated\": true, \"invalid_tail\": false, "
                                 "\"truncated_bytes\": 9, "));
    snprintf(path, sizeof path, "%s/cut.txt", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    text = slurp(path);
    assert_non_null(strstr(text, "\nrecording: "));
    assert_non_null(strstr(text, " at 1.500s of 1.900s; not finalized\n"));
    assert_non_null(strstr(text, "\nwarning: the recording is not finalized"));
    assert_non_null(strstr(text, "\nwarning: truncated: 9 bytes after the last complete frame"));
    /* a live target's export has no recording object */
    src.rec = NULL;
    snprintf(path, sizeof path, "%s/live.json", dir);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    assert_null(strstr(slurp(path), "\"recording\""));
    mt_replay_view_free(&v);
    mt_replay_close(r);
    db_file_free(&f);
}

/* The --batch summary of the recording f (freed), at the end; a static
 * buffer. */
static const char *summary_of_file(db_file *f)
{
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(f, 0, "sum.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_file_free(f);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, &v, &err), MT_OK);
    mt_locator loc = {&v.mods, NULL, NULL, NULL, NULL, 0};
    mt_opts o;
    memset(&o, 0, sizeof o);
    o.top = 5;
    o.sort = MT_SORT_LIVE;
    static char buf[1 << 16];
    FILE *fp = fmemopen(buf, sizeof buf, "w");
    assert_non_null(fp);
    mt_replay_summary(fp, r, &v, &o, &loc);
    fclose(fp);
    mt_replay_view_free(&v);
    mt_replay_close(r);
    return buf;
}

/* The --batch summary of db_standard's recording ended by `reason` (0: not
 * finalized), at the end; a static buffer. */
static const char *summary_of(unsigned reason)
{
    db_file f;
    db_standard_end(&f, 3, reason);
    return summary_of_file(&f);
}

/* A recording cut before its first timed record (no TOTALS, no event: the
 * last time seen is 0) ends where it began, 5 s in: it lasts 0 s, its peak
 * is dated at its start, and --batch says so (not 2^64 ns). */
static void no_timed_record(void **state)
{
    (void)state;
    db_file f;
    db_file_init(&f, MT_DAT_VERSION_FULL, MT_DAT_ENDIAN_MARK);
    db_buf b = {0};
    mid_run_head(&f, &b);
    db_buf_free(&b);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "untimed.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    const mt_replay_info *in = mt_replay_get_info(r);
    assert_int_equal(in->start_ns, 5 * S);
    assert_int_equal(in->duration_ns, 5 * S);
    assert_int_equal(in->peak_t_ns, 5 * S);
    mt_replay_close(r);
    const char *s = summary_of_file(&f);
    assert_non_null(strstr(s, "\nduration: 0.000s (5.000s to 5.000s), 0 allocations, 0 frees, "
                              "not finalized\n"));
    assert_non_null(strstr(s, "\npeak: 0 B live at 5.000s\n"));
    assert_non_null(strstr(s, "\nat the end, 5.000s: 0 B live in 0 blocks"));
}

/* Live blocks at the end are leaks only when the process ended the
 * recording (exit, exec) in a finalized file. */
static void summary_leaked_only_at_exit(void **state)
{
    (void)state;
    const char *s = summary_of(MT_DAT_END_EXIT);
    assert_non_null(strstr(s, "330 B live in 6 blocks (leaked)\n"));
    assert_non_null(strstr(s, "leaked at the end:"));
    s = summary_of(MT_DAT_END_EXEC);
    assert_non_null(strstr(s, "(leaked)"));
    s = summary_of(MT_DAT_END_STOP);
    assert_null(strstr(s, "(leaked)"));
    assert_null(strstr(s, "leaked at the end"));
    assert_non_null(strstr(s, "(live at the end, not leaked: the recording was stopped while "
                              "the process ran)"));
    assert_non_null(strstr(s, "live at the end (the recording was stopped while the process "
                              "ran):"));
    s = summary_of(0);
    assert_null(strstr(s, "leaked at the end"));
    assert_null(strstr(s, "(leaked)"));
    assert_non_null(strstr(s, "live at the end (the file is not finalized):"));
    s = summary_of(MT_DAT_END_ERROR);
    assert_null(strstr(s, "(leaked)"));
}

/* The export of v into the file name (its format by the extension, JSON
 * for *.json), as a string (in a static buffer). */
static const char *export_of(const mt_replay *r, const mt_view *v, const char *name)
{
    mt_locator loc = {&v->mods, NULL, NULL, NULL, NULL, 0};
    mt_export_rec rec;
    mt_replay_export_rec(r, &rec);
    mt_export_src src = {v, mt_replay_state(r), &loc, MT_SORT_LIVE, &rec, 0, false, 0};
    char path[256], msg[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(mt_export_file(path, &src, msg, sizeof msg), 0);
    return slurp(path);
}

/* The hand-built sampled recording (db_sampled) opened, v at its end. */
static mt_replay *open_sampled_end(mt_view *v)
{
    db_file f;
    db_sampled(&f, 3, 65536);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "sampled.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_file_free(&f);
    mt_view_init(v);
    assert_int_equal(mt_replay_seek(r, UINT64_MAX, v, &err), MT_OK);
    return r;
}

/* A sampled recording: at the end, the counts of allocations and frees are
 * the FINAL set's TOTALS (the target's exact counts: 2, 3, 4 here), not the
 * sums of the weighted samples, and the JSON lists them as exact; at a
 * cursor before the end the file holds no exact counts: the sums,
 * listed as estimated, and the rates from the TOTALS records alone (every
 * one says 2 allocations: 0/s), never an estimate less an exact count. */
static void sampled_counts(void **state)
{
    (void)state;
    mt_view v;
    mt_err err;
    mt_replay *r = open_sampled_end(&v);
    const mt_shm_totals *t = &v.snap.slot.totals;
    assert_int_equal(mt_view_sample_rate(&v), 65536);
    assert_true(mt_view_totals_exact(&v));
    assert_int_equal(t->alloc_count, 2);
    assert_int_equal(t->alloc_bytes, 3);
    assert_int_equal(t->free_count, 4);
    assert_non_null(strstr(export_of(r, &v, "s_end.json"),
                           "\"exact\": [\"totals.alloc_count\", \"totals.alloc_bytes\", "
                           "\"totals.free_count\"], \"estimated\": [\"totals.live_bytes\""));
    assert_int_equal(mt_replay_seek(r, S + S / 2, &v, &err), MT_OK);
    t = &v.snap.slot.totals;
    assert_false(mt_view_totals_exact(&v));
    uint64_t allocs = 0;
    for (uint32_t i = 0; i < v.snap.slot.ntraces; i++)
        allocs += v.snap.traces[i].alloc_count;
    assert_int_equal(t->alloc_count, allocs);
    assert_true(allocs > 100); /* a few small blocks stand for many */
    assert_non_null(strstr(export_of(r, &v, "s_mid.json"),
                           "\"exact\": [], \"estimated\": [\"totals.alloc_count\", "
                           "\"totals.alloc_bytes\", \"totals.free_count\", "
                           "\"totals.live_bytes\""));
    assert_true(v.rates.valid);
    assert_true(v.rates.allocs_per_s == 0.0 && v.rates.frees_per_s == 0.0);
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

/* The text export of a sampled recording marks every figure of every trace
 * "~", and its header's temporary count and share; the share (3 temporary
 * blocks, an estimate, over the 2 allocations the FINAL TOTALS counts) is
 * at most 100 %. */
static void sampled_text(void **state)
{
    (void)state;
    mt_view v;
    mt_replay *r = open_sampled_end(&v);
    const char *text = export_of(r, &v, "sampled.txt");
    assert_non_null(strstr(text, " | total 2 allocs (3 B), 4 frees | temporary ~3 (~100.0%)\n"));
    assert_non_null(strstr(text, "2 traces, sorted by live (~: estimated from samples)\n"));
    assert_non_null(strstr(text, "#1 trace 1: live ~300 B in ~3 blocks, peak ~307 B, growth ~"));
    assert_non_null(strstr(text, "   allocs ~6 (~321 B), frees ~3, temporary ~3\n"));
    assert_non_null(strstr(text, "#2 trace 2: live ~30 B in ~3 blocks, peak ~80 B, growth ~"));
    assert_non_null(strstr(text, "   allocs ~6 (~180 B), frees ~3, temporary ~0\n"));
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* One EVENTS2 record of 101 allocations 100 ms apart, from 0 to 10 s, and
 * TOTALS only at 0 and 10 s: every 100 ms bucket holds a record's time,
 * most of them only events that the first pass reads in batches, so no
 * moment in it is a silence (the batches mark their buckets). */
static void no_silence_within_a_record(void **state)
{
    (void)state;
    db_file f;
    db_standard(&f, 0, 0);
    db_ev2 e = {0};
    db_ev2_tag(&e, MT_DAT_EV_ALLOC);
    db_ev2_put(&e, DB_TIMES, 0), db_ev2_put(&e, DB_TRACES, 1), db_ev2_put(&e, DB_SIZES, 8);
    for (unsigned i = 1; i <= 100; i++) {
        db_ev2_tag(&e, MT_DAT_EV_ALLOC | MT_DAT_EV_SAME_TRACE | MT_DAT_EV_SAME_SIZE);
        db_ev2_put(&e, DB_TIMES, S / 10);
    }
    db_ev2_record(&f, &e, 1, 0);
    db_totals(&f, 10 * S, 808, 808);
    db_flush(&f);
    mt_err err;
    mt_replay *r = mt_replay_open(write_tmp(&f, 0, "steady.dat"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    db_file_free(&f);
    mt_view v;
    mt_view_init(&v);
    assert_int_equal(mt_replay_seek(r, 5 * S, &v, &err), MT_OK);
    assert_int_equal(trace(&v, 1)->alloc_count, 51);
    uint64_t from = 0, to = 0;
    if (mt_replay_silent(r, &from, &to))
        fail_msg("a silence from %llu to %llu ns", (unsigned long long)from,
                 (unsigned long long)to);
    mt_replay_view_free(&v);
    mt_replay_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(end_state),
        cmocka_unit_test(cursor_state),
        cmocka_unit_test(events_before_start),
        cmocka_unit_test(seek_walk),
        cmocka_unit_test(cut_short),
        cmocka_unit_test(at_seconds),
        cmocka_unit_test(mid_run),
        cmocka_unit_test(threads_out_of_order),
        cmocka_unit_test(dropped_allocations),
        cmocka_unit_test(exports),
        cmocka_unit_test(exports_provenance),
        cmocka_unit_test(summary_leaked_only_at_exit),
        cmocka_unit_test(no_timed_record),
        cmocka_unit_test(peak_within_recording),
        cmocka_unit_test(inexact_text),
        cmocka_unit_test(allocators_at_cursor),
        cmocka_unit_test(allocator_age),
        cmocka_unit_test(sampled_counts),
        cmocka_unit_test(sampled_text),
        cmocka_unit_test(no_silence_within_a_record),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
