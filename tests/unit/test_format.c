/* test_format.c -- unit tests of memtop's output helpers: JSON string
 * escaping, human-readable sizes/rates/counts/durations, option parsing,
 * and the JSON/CSV export of a synthetic segment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "columns.h"
#include "export.h"
#include "format.h"
#include "dat_lost.h"
#include "shm_recording.h"
#include "json_escape.h"
#include "seg_builder.h"

static char *json_of(const char *s)
{
    static char out[512];
    FILE *f = fmemopen(out, sizeof out, "w");
    mt_json_string(f, s);
    fclose(f);
    return out;
}

static void test_json_plain(void **state)
{
    (void)state;
    assert_string_equal(json_of("abc /x.so"), "\"abc /x.so\"");
    assert_string_equal(json_of(""), "\"\"");
    assert_string_equal(json_of(NULL), "null");
}

static void test_json_specials(void **state)
{
    (void)state;
    assert_string_equal(json_of("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_string_equal(json_of("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
    assert_string_equal(json_of("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
}

static void test_json_utf8(void **state)
{
    (void)state;
    assert_string_equal(json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* a lone continuation byte, a truncated sequence, an overlong '/', a
     * surrogate, a code point above U+10FFFF, and 0xff */
    assert_string_equal(json_of("a\x80"
                                "b"),
                        "\"a\\ufffdb\"");
    assert_string_equal(json_of("\xe2\x82"), "\"\\ufffd\\ufffd\"");
    assert_string_equal(json_of("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
    assert_string_equal(json_of("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
    assert_string_equal(json_of("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    assert_string_equal(json_of("\xff"), "\"\\ufffd\"");
}

#define FMT(fn, v) fn((v), buf, sizeof buf)

static void test_bytes(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(FMT(mt_fmt_bytes, 0), "0 B");
    assert_string_equal(FMT(mt_fmt_bytes, 1023), "1023 B");
    assert_string_equal(FMT(mt_fmt_bytes, 1024), "1.0 KiB");
    assert_string_equal(FMT(mt_fmt_bytes, 1536), "1.5 KiB");
    assert_string_equal(FMT(mt_fmt_bytes, 1048575), "1.0 MiB");
    assert_string_equal(FMT(mt_fmt_bytes, 5ull << 30), "5.0 GiB");
    assert_string_equal(FMT(mt_fmt_bytes, 1ull << 60), "1.0 EiB");
    assert_string_equal(FMT(mt_fmt_bytes, UINT64_MAX - 1), "16.0 EiB");
    assert_string_equal(FMT(mt_fmt_bytes, MT_UNKNOWN), "?");
}

/* The Allocator field never reads "0% not live" beside a heap above the
 * allocator's figure (a replay's cursor past the last totals). */
static void test_allocator_share(void **state)
{
    (void)state;
    char buf[64];
    assert_true(mt_fmt_allocator_share(4096, 1024, 0, buf, sizeof buf) == 75.0);
    assert_string_equal(buf, "4.0 KiB, 75% not live");
    assert_true(mt_fmt_allocator_share(4096, 4096, 0, buf, sizeof buf) == 0.0);
    assert_string_equal(buf, "4.0 KiB, 0% not live");
    assert_true(mt_fmt_allocator_share(1024, 4096, 0, buf, sizeof buf) < 0);
    assert_string_equal(buf, "1.0 KiB (below the live heap)");
    assert_true(mt_fmt_allocator_share(4096, 1024, 3, buf, sizeof buf) < 0);
    assert_string_equal(buf, "4.0 KiB (3 s ago)");
}

/* memtop's own memory names its two parts, and says when the segment's is
 * not known (a recording) instead of showing the bookkeeping alone. */
static void test_own_memory(void **state)
{
    (void)state;
    char buf[80];
    mt_fmt_own_memory(30 << 20, 54 << 20, buf, sizeof buf);
    assert_string_equal(buf, "30.0 MiB + 54.0 MiB segment");
    mt_fmt_own_memory(22 << 20, MT_UNKNOWN, buf, sizeof buf);
    assert_string_equal(buf, "22.0 MiB + segment unknown");
    assert_string_equal(mt_fmt_own_memory(MT_UNKNOWN, 4096, buf, sizeof buf), "unknown");
}

/* Every figure of the table's numeric columns fits its width, signed as a
 * change since a baseline too: a baseline's "-1010.2 KiB" (11 characters)
 * was cut to "-1010.2 K…" in the 10 of LIVE. */
static void test_column_widths(void **state)
{
    (void)state;
    static const double sizes[] = {1023,     1048524,         1048575,           1073741823.0,
                                   999999.0, 1099511627775.0, 1125899906842623.0};
    static const int cols[] = {MT_COL_LIVE, MT_COL_BLOCKS, MT_COL_GROWTH};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int sign = -1; sign <= 1; sign += 2)
            for (int delta = 0; delta <= 1; delta++)
                for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
                    mt_table_row r = {0};
                    r.live_bytes = r.live_count = r.growth_bps = sign * sizes[i];
                    char buf[64];
                    mt_column_text(cols[c], &r, delta, true, buf, sizeof buf);
                    if ((int)strlen(buf) > mt_columns[cols[c]].width)
                        fail_msg("column %s: \"%s\" is wider than %d", mt_columns[cols[c]].heading,
                                 buf, mt_columns[cols[c]].width);
                }
}

static void test_rate(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(FMT(mt_fmt_rate, 0.0), "0 B/s");
    assert_string_equal(FMT(mt_fmt_rate, 0.2), "0 B/s");
    assert_string_equal(FMT(mt_fmt_rate, 100.0), "+100 B/s");
    assert_string_equal(FMT(mt_fmt_rate, -2048.0), "-2.0 KiB/s");
    assert_string_equal(FMT(mt_fmt_rate, 0.0 / 0.0), "0 B/s");
}

static void test_count_and_duration(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(FMT(mt_fmt_count, 999999), "999999");
    assert_string_equal(FMT(mt_fmt_count, 1000000), "1.0M");
    assert_string_equal(FMT(mt_fmt_count, 2500000000ull), "2.5G");
    /* memtop -p PID --record and the live header: how many events were
     * dropped, not "some", and why (header.rec_dropped_why) */
    mt_shm_recording rec = {.state = MT_REC_STATE_ON, .events_dropped = 0, .path = "/r.dat"};
    char line[400];
    uint64_t why[MT_REC_WHY_MAX] = {[MT_DAT_LOST_DISK] = 3, [MT_DAT_LOST_WAIT_CAP] = 6};
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line), "");
    rec.events_dropped = 9;
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "9 events dropped: disk behind 3, writer stalled (wait cap) 6");
    mt_recording_line(&rec, why, line, sizeof line);
    assert_string_equal(line, "REC /r.dat 0 B (recording inexact: 9 events dropped: disk behind 3, "
                              "writer stalled (wait cap) 6)");
    /* memtop --record -: the target's file was removed at once, not a path to show */
    mt_shm_recording st = {.state = MT_REC_STATE_STOPPED,
                           .bytes_written = 20480,
                           .path = "/tmp/memtop-stream-Ab12Cd/stream.dat"};
    mt_recording_line(&st, NULL, line, sizeof line);
    assert_string_equal(line, "recorded a stream (--record -) (20.0 KiB)");
    st.state = MT_REC_STATE_ON;
    mt_recording_line(&st, NULL, line, sizeof line);
    assert_string_equal(line, "REC a stream (--record -) 20.0 KiB");
    snprintf(st.path, sizeof st.path, "/tmp/memtop-stream-Ab12Cd/other.dat");
    mt_recording_line(&st, NULL, line, sizeof line);
    assert_string_equal(line, "REC /tmp/memtop-stream-Ab12Cd/other.dat 20.0 KiB");
    /* an older target (no causes in its header), a cause beyond those known */
    memset(why, 0, sizeof why);
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "9 events dropped: cause not recorded 9");
    why[MT_REC_WHY_MAX - 1] = 9;
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "9 events dropped: other cause 9");
    /* the growth window as it is: a 3 ms program's is not "1 s" */
    assert_string_equal(FMT(mt_fmt_window, 0.003), "3 ms");
    assert_string_equal(FMT(mt_fmt_window, 0.0004), "0.40 ms");
    assert_string_equal(FMT(mt_fmt_window, 1.06), "1.1 s");
    assert_string_equal(FMT(mt_fmt_window, 35.6), "36 s");
    assert_string_equal(FMT(mt_fmt_window, 0.9996), "1.0 s"); /* not "1000 ms" */
    assert_string_equal(FMT(mt_fmt_window, 9.96), "10 s");    /* not "10.0 s" */
    assert_string_equal(FMT(mt_fmt_window, 0), "no window yet");
    assert_string_equal(mt_plural(1), ""); /* "1 trace", not "1 traces" */
    assert_string_equal(mt_plural(0), "s");
    assert_string_equal(mt_plural(2), "s");
    assert_string_equal(FMT(mt_fmt_duration, 45), "45s");
    assert_string_equal(FMT(mt_fmt_duration, 723), "12m03s");
    assert_string_equal(FMT(mt_fmt_duration, 5 * 3600 + 120), "5h02m");
    assert_string_equal(FMT(mt_fmt_duration, 3 * 86400 + 5 * 3600), "3d05h");
}

/* mt_fmt_fixed: a '.' whatever the locale (the e2e check runs it under
 * de_DE), no radix for 0 decimals, 0 for what is not finite, cut to n. */
static void test_fixed(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(mt_fmt_fixed(34.0, 3, b, sizeof b), "34.000");
    assert_string_equal(mt_fmt_fixed(-2.25, 1, b, sizeof b), "-2.2");
    assert_string_equal(mt_fmt_fixed(7.6, 0, b, sizeof b), "8");
    assert_string_equal(mt_fmt_fixed(0.0 / 0.0, 3, b, sizeof b), "0.000");
    assert_string_equal(mt_fmt_fixed(123.456, 3, b, 4), "123");
}

static void test_sanitize(void **state)
{
    (void)state;
    char s[] = "a\nb\tc\x7f";
    assert_string_equal(mt_fmt_sanitize(s), "a?b?c?");
}

static int parse(mt_opts *o, const char *const *args)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "memtop";
    while (*args)
        argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    char err[256];
    return mt_opts_parse(argc, argv, o, err, sizeof err);
}

/* The message of a refused option names it as typed: "--export", not its
 * short alias "-e"; a short one by its letter, in a cluster too. */
static void assert_refused(const char *const *args, const char *want)
{
    char *argv[16], err[256] = "";
    int argc = 0;
    argv[argc++] = "memtop";
    while (*args)
        argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    mt_opts o;
    assert_int_not_equal(mt_opts_parse(argc, argv, &o, err, sizeof err), 0);
    if (!strstr(err, want))
        fail_msg("%s: want \"%s\"", err, want);
}

static void test_option_refused(void **state)
{
    (void)state;
    assert_refused((const char *[]){"--export", NULL}, "missing value: --export");
    assert_refused((const char *[]){"--file", NULL}, "missing value: --file");
    assert_refused((const char *[]){"--pid", NULL}, "missing value: --pid");
    assert_refused((const char *[]){"--batch", "--delay", NULL}, "missing value: --delay");
    assert_refused((const char *[]){"--exp", NULL}, "missing value: --exp");
    assert_refused((const char *[]){"-e", NULL}, "missing value: -e");
    assert_refused((const char *[]){"--batch", "-bx", NULL}, "missing value: -x");
    assert_refused((const char *[]){"--batch", "-xb", NULL}, "missing value: -x");
    assert_refused((const char *[]){"--no-such=3", NULL}, "missing value: --no-such");
}

static void test_options(void **state)
{
    (void)state;
    mt_opts o;
    assert_int_equal(parse(&o, (const char *[]){"-p", "42", "--batch", "-n", "3", "-d", "0.5", "-s",
                                                "growth", "--top", "5", NULL}),
                     0);
    assert_int_equal(o.pid, 42);
    assert_int_equal(o.iterations, 3);
    assert_true(o.delay_s == 0.5);
    assert_int_equal(o.sort, MT_SORT_GROWTH);
    assert_int_equal(o.top, 5);
    assert_int_equal(parse(&o, (const char *[]){"--export", "x.json", "--", "ls", "-l", NULL}), 0);
    assert_string_equal(o.prog_argv[0], "ls");
    assert_string_equal(o.prog_argv[1], "-l");
    /* The interactive forms: PROG alone, the picker, a recording. */
    assert_int_equal(parse(&o, (const char *[]){"-s", "leak", "-g", "function", "ls", NULL}), 0);
    assert_int_equal(o.sort, MT_SORT_LEAK);
    assert_int_equal(o.group, MT_GROUP_FUNCTION);
    assert_null(o.output_path);
    assert_int_equal(parse(&o, (const char *[]){NULL}), 0);
    assert_null(o.prog_argv);
    assert_int_equal(o.pid, 0);
    assert_int_equal(
        parse(&o, (const char *[]){"-f", "x.dat", "--at", "2.5", "--export", "o.folded", NULL}), 0);
    assert_true(o.at_s == 2.5);
    assert_string_equal(o.replay_path, "x.dat");
    /* the viewer's refresh delay, on a recording too */
    assert_int_equal(parse(&o, (const char *[]){"-f", "x.dat", "-d", "0.5", NULL}), 0);
    assert_true(o.delay_given && o.delay_s == 0.5);
    /* --sample's "up to 1T" includes 1T; --threshold takes the same suffixes */
    assert_int_equal(parse(&o, (const char *[]){"--sample", "1T", "--", "true", NULL}), 0);
    assert_true(o.sample_given && o.sample_bytes == 1ull << 40);
    assert_int_equal(parse(&o, (const char *[]){"--sample", "512k", "--", "true", NULL}), 0);
    assert_true(o.sample_bytes == 512u << 10);
    assert_int_equal(
        parse(&o, (const char *[]){"-p", "1", "--batch", "--tree", "--threshold", "1k", NULL}), 0);
    assert_int_equal(o.threshold, 1024);
    assert_int_equal(parse(&o, (const char *[]){"-p", "1", "--export", "x.tree.json", "--threshold",
                                                "2M", NULL}),
                     0);
    assert_int_equal(o.threshold, 2 << 20);
    /* where --reverse, --threshold and -g are used: the tree export, --batch
     * --tree, the viewer's t (it opens with them), --batch's rows */
    const char *const *good[] = {
        (const char *[]){"-p", "1", "--export", "-.tree.json", "--reverse", NULL},
        (const char *[]){"-f", "x.dat", "--export", "X.TREE.JSON", "--reverse", NULL},
        (const char *[]){"-p", "1", "--batch", "--tree", "--reverse", NULL},
        (const char *[]){"-f", "x.dat", "--batch", "--tree", "--threshold", "1k", NULL},
        (const char *[]){"-p", "1", "--batch", "--export", "x.tree.json", "--reverse", NULL},
        (const char *[]){"-p", "1", "--reverse", "--threshold", "1M", NULL},
        (const char *[]){"-p", "1", "--batch", "-g", "module", "--export", "x.json", NULL},
        (const char *[]){"-f", "x.dat", "--batch", "-g", "function", NULL},
        (const char *[]){"--serve", "9100", "--top", "5", "--no-symbols", NULL},
        (const char *[]){"--serve", "9100", "--serve-min-age", "0", NULL},
        (const char *[]){"--serve-min-age", "31622400", "--serve", "9100", NULL},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(parse(&o, good[i]), 0);
    assert_int_equal(parse(&o, (const char *[]){"--serve", "1", "--serve-min-age", "30", NULL}), 0);
    assert_int_equal(o.serve_min_age_s, 30);
    /* --all-users widens --clean (root's every user's segments) */
    assert_int_equal(parse(&o, (const char *[]){"--clean", "--all-users", NULL}), 0);
    assert_true(o.clean && o.all_users);
    assert_int_equal(parse(&o, (const char *[]){"--all-users", "--list", "--clean", NULL}), 0);
    assert_true(o.list && o.all_users);
    const char *const *bad[] = {
        /* --all-users says whose files --clean removes: nothing without it */
        (const char *[]){"--all-users", NULL},
        (const char *[]){"--list", "--all-users", NULL},
        (const char *[]){"--serve", "9100", "--all-users", NULL},
        (const char *[]){"-p", "1", "--all-users", NULL},
        (const char *[]){"-p", "abc", "--batch", NULL},
        (const char *[]){"-p", "0", "--batch", NULL},
        (const char *[]){"-p", "1", "--batch", "-n", "abc", NULL},
        (const char *[]){"-p", "1", "--batch", "-d", "-1", NULL},
        (const char *[]){"-p", "1", "--batch", "-s", "nonsense", NULL},
        (const char *[]){"--bogus", NULL},
        (const char *[]){"-p", "1", "--batch", "--", "ls", NULL},
        (const char *[]){"--batch", NULL},
        (const char *[]){"-f", "x.dat", "-p", "1", NULL},
        (const char *[]){"-f", "x.dat", "--", "ls", NULL},
        (const char *[]){"--at", "3", "-p", "1", NULL},
        (const char *[]){"-f", "x.dat", "--at", "-1", NULL},
        (const char *[]){"--output", "o.txt", "-p", "1", NULL},
        (const char *[]){"--output", "o.txt", "--batch", "--", "ls", NULL},
        (const char *[]){"-g", "nope", NULL},
        (const char *[]){"--list", "--record", "x.dat", NULL},
        (const char *[]){"--record", "x.dat", NULL},
        (const char *[]){"-p", "1", "--record", "x.dat", "--batch", NULL},
        /* a recording's report is of one moment: nothing to repeat or pace */
        (const char *[]){"-f", "x.dat", "--batch", "-n", "3", NULL},
        (const char *[]){"-f", "x.dat", "--batch", "-d", "2", NULL},
        (const char *[]){"-f", "x.dat", "--export", "o.json", "-n", "1", NULL},
        (const char *[]){"-p", "1", "-n", "3", NULL}, /* the viewer: it ignored -n */
        (const char *[]){"-p", "1", "--tree", "--export", "o.json", NULL}, /* ignored --tree */
        (const char *[]){"-p", "1", "--export", "o.json", "-n", "3", NULL},
        (const char *[]){"--sample", "2T", "--", "true", NULL},
        (const char *[]){"--sample", "1025G", "--", "true", NULL},
        (const char *[]){"-p", "1", "--batch", "--tree", "--threshold", "1kb", NULL},
        (const char *[]){"-p", "1", "--batch", "--tree", "--threshold", "-1", NULL},
        /* --serve serves every process's metrics: it ignored all these */
        (const char *[]){"--serve", "9100", "-s", "growth", NULL},
        (const char *[]){"--serve", "9100", "-g", "module", NULL},
        (const char *[]){"--serve", "9100", "-n", "3", NULL},
        (const char *[]){"--serve", "9100", "-d", "5", NULL},
        (const char *[]){"--serve", "9100", "--tree", NULL},
        (const char *[]){"--serve", "9100", "--reverse", NULL},
        (const char *[]){"--serve", "9100", "--threshold", "1k", NULL},
        (const char *[]){"--serve", "9100", "--cull", NULL},
        (const char *[]){"--serve", "9100", "--thread-order", NULL},
        /* --serve-min-age: whole seconds up to a year, for --serve only */
        (const char *[]){"--serve", "9100", "--serve-min-age", "x", NULL},
        (const char *[]){"--serve", "9100", "--serve-min-age", "-1", NULL},
        (const char *[]){"--serve", "9100", "--serve-min-age", "1.5", NULL},
        (const char *[]){"--serve", "9100", "--serve-min-age", "31622401", NULL},
        (const char *[]){"--serve-min-age", "5", NULL},
        (const char *[]){"-p", "1", "--batch", "--serve-min-age", "5", NULL},
        /* --reverse and --threshold shape a tree: not the table's rows */
        (const char *[]){"-p", "1", "--batch", "--reverse", NULL},
        (const char *[]){"-p", "1", "--batch", "--threshold", "1k", NULL},
        (const char *[]){"-p", "1", "--export", "x.json", "--reverse", NULL},
        (const char *[]){"-p", "1", "--export", "x.csv", "--threshold", "1M", NULL},
        (const char *[]){"-f", "x.dat", "--export", "x.folded", "--reverse", NULL},
        /* no export format groups its traces */
        (const char *[]){"-p", "1", "--export", "x.json", "-g", "module", NULL},
        (const char *[]){"-p", "1", "--export", "x.csv", "-g", "function", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse(&o, bad[i]), 2);
}

/* ---- export of a synthetic segment ---- */

typedef struct exp_fixture {
    char dir[64], path[128];
    sb_seg seg;
    mt_view v;
    char *out; /* export_with's stream buffer */
    size_t out_len;
} exp_fixture;

static int exp_setup(void **state)
{
    exp_fixture *x = calloc(1, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "/tmp/memtop-fmt-XXXXXX");
    sb_spec spec;
    sb_default_spec(&spec);
    if (!mkdtemp(x->dir) || sb_build(&x->seg, &spec))
        return -1;
    mt_shm_path(x->dir, spec.pid, x->path, sizeof x->path);
    mt_view_init(&x->v);
    mt_err err;
    if (sb_write(&x->seg, x->path) || mt_view_attach(&x->v, x->path, &err) ||
        mt_view_refresh(&x->v, &err))
        return -1;
    *state = x;
    return 0;
}

static int exp_teardown(void **state)
{
    exp_fixture *x = *state;
    mt_view_detach(&x->v);
    unlink(x->path);
    rmdir(x->dir);
    sb_free(&x->seg);
    free(x);
    return 0;
}

/* The text fn writes, in a heap buffer the caller frees.  The stream's
 * buffer pointer lives in the fixture, not on this stack frame (gcc's
 * -Wdangling-pointer cannot tell open_memstream's result from the local). */
static char *export_with(exp_fixture *x, void (*fn)(FILE *, const mt_export_src *))
{
    FILE *f = open_memstream(&x->out, &x->out_len);
    mt_locator loc = {&x->v.mods, NULL, NULL, NULL, NULL, 0};
    mt_export_src src = {&x->v, MT_STATE_RUNNING, &loc, MT_SORT_LIVE, NULL, 0, false, 0};
    fn(f, &src);
    fclose(f);
    char *buf = x->out;
    x->out = NULL;
    return buf;
}

static void test_export_json(void **state)
{
    exp_fixture *x = *state;
    /* The header's command line, as for a process that is gone (the
     * synthetic segment names this very process: /proc's would win). */
    x->v.live.valid = false;
    char *j = export_with(x, mt_export_json);
    assert_non_null(strstr(j, "\"memtop_snapshot\": 1"));
    assert_non_null(strstr(j, "\"cmdline\": \"test-prog --flag \\\"quoted\\\"\""));
    assert_non_null(strstr(j, "\"time_unix\": 1700000002.000000000"));
    assert_non_null(strstr(j, "\"allocator_bytes\": null"));
    assert_non_null(strstr(j, "\"exited\": false"));
    /* trace 7 is the largest: first; growth (1600-800)/1s */
    char *t7 = strstr(j, "{\"id\": 7,");
    assert_non_null(t7);
    assert_true(t7 < strstr(j, "{\"id\": 6,"));
    assert_non_null(strstr(t7, "\"growth_bytes_per_s\": 800.000"));
    assert_non_null(strstr(j, "\"growth_window_s\": 1.000,")); /* the window it is over */
    assert_non_null(strstr(t7, "{\"address\": \"0x500007\", \"module\": \"/lib/mod1.so\", "
                               "\"offset\": \"0x1007\""));
    assert_non_null(strstr(j, "\"function\": null, \"file\": null, \"line\": null, "
                              "\"inlined\": false"));
    /* one object per trace */
    int n = 0;
    for (char *p = j; (p = strstr(p, "{\"id\": ")); p++)
        n++;
    assert_int_equal(n, 8);
    free(j);
}

static void test_export_csv(void **state)
{
    exp_fixture *x = *state;
    char *c = export_with(x, mt_export_csv);
    assert_memory_equal(c, "id,live_bytes,", 14);
    assert_non_null(strstr(c, "\n7,1600,8,9,900,1,100,0,0,0,800.000,\"/lib/mod1.so+0x1007;"));
    int lines = 0;
    for (char *p = c; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 9);
    free(c);
}

/* A running target's JSON names it as /proc does now (a forked child's
 * own title and uptime: proc_live.h); tracking_s stays the snapshot's. */
static void test_export_json_live(void **state)
{
    exp_fixture *x = *state;
    x->v.live.valid = true;
    snprintf(x->v.live.cmdline, sizeof x->v.live.cmdline, "postgres: checkpointer");
    x->v.live.uptime_s = 5;
    x->v.live.uptime_ns = 5250000000ull;
    char *j = export_with(x, mt_export_json);
    assert_non_null(strstr(j, "\"cmdline\": \"postgres: checkpointer\""));
    assert_non_null(strstr(j, "\"uptime_s\": 5.250000000,"));
    char want[64];
    snprintf(want, sizeof want, "\"tracking_s\": %llu.000000000,",
             (unsigned long long)(x->v.snap.slot.t_ns / 1000000000ull));
    assert_non_null(strstr(j, want));
    free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_plain),
        cmocka_unit_test(test_json_specials),
        cmocka_unit_test(test_json_utf8),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_allocator_share),
        cmocka_unit_test(test_own_memory),
        cmocka_unit_test(test_column_widths),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_count_and_duration),
        cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_option_refused),
        cmocka_unit_test_setup_teardown(test_export_json, exp_setup, exp_teardown),
        cmocka_unit_test_setup_teardown(test_export_json_live, exp_setup, exp_teardown),
        cmocka_unit_test_setup_teardown(test_export_csv, exp_setup, exp_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
