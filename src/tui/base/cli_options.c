/* cli_options.c -- parsing memtop's options with getopt_long.
 *
 * Parsing stops at the first non-option ("+"), so `memtop --batch prog -x`
 * runs prog with -x, as does `memtop --batch -- prog -x`. */
#include "cli_options.h"
#include "byte_count.h"
#include "dat_format.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    OPT_CLEAN = 1000,
    OPT_ALL_USERS,
    OPT_TOP,
    OPT_NO_SYMBOLS,
    OPT_OUTPUT,
    OPT_ASCII,
    OPT_NO_COLOR,
    OPT_RECORD,
    OPT_AT,
    OPT_STRICT,
    OPT_SAMPLE,
    OPT_CULL,
    OPT_THREAD_ORDER,
    OPT_TREE,
    OPT_REVERSE,
    OPT_THRESHOLD,
    OPT_SERVE,
    OPT_SERVE_MIN_AGE,
};

static const struct option long_opts[] = {
    {"pid", required_argument, NULL, 'p'},
    {"batch", no_argument, NULL, 'b'},
    {"iterations", required_argument, NULL, 'n'},
    {"delay", required_argument, NULL, 'd'},
    {"sort", required_argument, NULL, 's'},
    {"top", required_argument, NULL, OPT_TOP},
    {"export", required_argument, NULL, 'e'},
    {"list", no_argument, NULL, 'l'},
    {"clean", no_argument, NULL, OPT_CLEAN},
    {"all-users", no_argument, NULL, OPT_ALL_USERS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
    {"group", required_argument, NULL, 'g'},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"ascii", no_argument, NULL, OPT_ASCII},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"record", required_argument, NULL, OPT_RECORD},
    {"file", required_argument, NULL, 'f'},
    {"at", required_argument, NULL, OPT_AT},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"cull", optional_argument, NULL, OPT_CULL},
    {"thread-order", no_argument, NULL, OPT_THREAD_ORDER},
    {"tree", no_argument, NULL, OPT_TREE},
    {"reverse", no_argument, NULL, OPT_REVERSE},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"serve", required_argument, NULL, OPT_SERVE},
    {"serve-min-age", required_argument, NULL, OPT_SERVE_MIN_AGE},
    {NULL, 0, NULL, 0},
};

static const char *const sort_names[MT_SORT_KEYS] = {"live",      "count",  "allocs",
                                                     "temporary", "growth", "leak"};
static const char *const group_names[MT_GROUP_KEYS] = {"trace", "function", "file", "module"};

const char *mt_sort_name(mt_sort_key key)
{
    return (unsigned)key < MT_SORT_KEYS ? sort_names[key] : "?";
}

const char *mt_group_name(mt_group_key key)
{
    return (unsigned)key < MT_GROUP_KEYS ? group_names[key] : "?";
}

static bool parse_name(const char *s, const char *const *names, unsigned n, unsigned *out)
{
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

bool mt_sort_parse(const char *s, mt_sort_key *out)
{
    unsigned i;
    if (!parse_name(s, sort_names, MT_SORT_KEYS, &i))
        return false;
    *out = (mt_sort_key)i;
    return true;
}

bool mt_group_parse(const char *s, mt_group_key *out)
{
    unsigned i;
    if (!parse_name(s, group_names, MT_GROUP_KEYS, &i))
        return false;
    *out = (mt_group_key)i;
    return true;
}

static int usage_err(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int usage_err(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return 2;
}

/* A whole-string integer in [lo, hi]. */
static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* --threshold: a byte count (byte_count.h), as --sample takes. */
static bool parse_threshold(const char *s, long *out)
{
    uint64_t v;
    if (!mt_parse_byte_count(s, LONG_MAX, &v))
        return false;
    *out = (long)v;
    return true;
}

static bool parse_delay(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 86400.0)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

static int set_path(const char **dst, const char *arg, const char *opt, char *err, size_t n)
{
    if (!*arg)
        return usage_err(err, n, "%s: empty file name", opt);
    *dst = arg;
    return 0;
}

static int apply(int c, const char *arg, mt_opts *o, char *err, size_t n)
{
    long v;
    switch (c) {
    case 'p':
        if (!parse_long(arg, 1, INT_MAX, &v))
            return usage_err(err, n, "-p: not a process id: '%s'", arg);
        o->pid = (int)v;
        return 0;
    case 'n':
        if (!parse_long(arg, 1, LONG_MAX, &o->iterations))
            return usage_err(err, n, "-n: not a positive count: '%s'", arg);
        return 0;
    case 'd':
        if (!parse_delay(arg, &o->delay_s))
            return usage_err(err, n, "-d: not a delay in seconds (0.01..86400): '%s'", arg);
        o->delay_given = true;
        return 0;
    case 's':
        if (!mt_sort_parse(arg, &o->sort))
            return usage_err(err, n,
                             "-s: unknown sort key '%s' (live, count, allocs, "
                             "temporary, growth, leak)",
                             arg);
        o->sort_given = true;
        return 0;
    case 'g':
        if (!mt_group_parse(arg, &o->group))
            return usage_err(err, n, "-g: unknown grouping '%s' (trace, function, file, module)",
                             arg);
        o->group_given = true;
        return 0;
    case OPT_AT:
        if (!parse_seconds(arg, &o->at_s))
            return usage_err(err, n, "--at: not a time in seconds (>= 0): '%s'", arg);
        return 0;
    case OPT_TOP:
        if (!parse_long(arg, 0, INT_MAX, &o->top))
            return usage_err(err, n, "--top: not a row count (0 = all): '%s'", arg);
        o->top_given = true;
        return 0;
    case OPT_THRESHOLD:
        if (!parse_threshold(arg, &o->threshold))
            return usage_err(err, n, "--threshold: not a byte count (like 64k, 1M; 0 = none): '%s'",
                             arg);
        o->threshold_given = true;
        return 0;
    case 'e':
        return set_path(&o->export_path, arg, "--export", err, n);
    case OPT_OUTPUT:
        return set_path(&o->output_path, arg, "--output", err, n);
    case OPT_RECORD:
        return set_path(&o->record_path, arg, "--record", err, n);
    case OPT_SAMPLE:
        if (!mt_parse_byte_count(arg, MT_SAMPLE_MAX_BYTES, &o->sample_bytes))
            return usage_err(err, n,
                             "--sample: not a byte count (like 512k, 1M; 0 = exact) up to 1T: '%s'",
                             arg);
        o->sample_given = true;
        return 0;
    case OPT_CULL: {
        double s = MT_DAT_CULL_MS_DEFAULT / 1000.0;
        if (arg && (!parse_seconds(arg, &s) || s < 0.001 || s * 1000.0 > MT_DAT_CULL_MS_MAX))
            return usage_err(err, n, "--cull: not a lifetime in seconds (0.001 to a week): '%s'",
                             arg);
        o->cull_ms = (uint64_t)llround(s * 1000.0);
        return 0;
    }
    case OPT_THREAD_ORDER:
        o->thread_order = true;
        return 0;
    case OPT_SERVE:
        return set_path(&o->serve_addr, arg, "--serve", err, n);
    case OPT_SERVE_MIN_AGE:
        if (!parse_long(arg, 0, MT_SERVE_MIN_AGE_MAX_S, &o->serve_min_age_s))
            return usage_err(err, n, "--serve-min-age: not a number of seconds (0 to a year): '%s'",
                             arg);
        o->serve_min_age_given = true;
        return 0;
    case 'f':
        return set_path(&o->replay_path, arg, "-f", err, n);
    }
    return usage_err(err, n, "internal: unhandled option %d", c);
}

static int apply_flag(int c, mt_opts *o)
{
    switch (c) {
    case 'b':
        o->batch = true;
        return 1;
    case 'l':
        o->list = true;
        return 1;
    case OPT_CLEAN:
        o->clean = true;
        return 1;
    case OPT_ALL_USERS:
        o->all_users = true;
        return 1;
    case 'h':
        o->help = true;
        return 1;
    case 'V':
        o->version = true;
        return 1;
    case OPT_NO_SYMBOLS:
        o->no_symbols = true;
        return 1;
    case OPT_ASCII:
        o->ascii = true;
        return 1;
    case OPT_NO_COLOR:
        o->no_color = true;
        return 1;
    case OPT_STRICT:
        o->strict = true;
        return 1;
    case OPT_TREE:
        o->tree = true;
        return 1;
    case OPT_REVERSE:
        o->reverse = true;
        return 1;
    }
    return 0;
}

/* Which target: -p PID, -- PROG, -f FILE, or none (the process picker). */
static int check_target(const mt_opts *o, char *err, size_t n)
{
    int targets = (o->pid != 0) + (o->prog_argv != NULL) + (o->replay_path != NULL);
    if (targets > 1)
        return usage_err(err, n, "give one of -p PID, -f FILE or a program to run");
    if (o->serve_addr &&
        (targets || o->batch || o->export_path || o->record_path || o->list || o->clean))
        return usage_err(err, n, "--serve takes no target, --batch, --export, --record or --list");
    if ((o->list || o->clean) && (targets || o->batch || o->export_path || o->record_path))
        return usage_err(err, n,
                         "--list/--clean take no -p, -f, --batch, --export, --record or "
                         "program");
    if (o->all_users && !o->clean)
        return usage_err(err, n, "--all-users is for --clean (every user's stale segments)");
    if ((o->batch || o->export_path) && !targets)
        return usage_err(err, n, "--batch/--export need -p PID, -f FILE or -- PROG ARGS");
    if (o->sample_given && !o->prog_argv)
        return usage_err(err, n, "--sample needs -- PROG ARGS (a running target's rate is fixed)");
    if (o->record_path && !o->pid && strcmp(o->record_path, "-") == 0)
        return usage_err(err, n, "--record - (to standard output) needs -p PID");
    if (o->record_path && !o->pid && !o->prog_argv)
        return usage_err(err, n, "--record needs -p PID or -- PROG ARGS");
    if (o->record_path && o->pid && (o->batch || o->export_path))
        return usage_err(err, n,
                         "-p PID --record records until Ctrl-C; it takes no --batch or "
                         "--export");
    return 0;
}

/* --serve answers scrapes with every process's metrics (its rows cut by
 * --top): nothing to sort, group, pace, count, draw as a tree or record. */
static int check_serve(const mt_opts *o, char *err, size_t n)
{
    if (o->serve_min_age_given && !o->serve_addr)
        return usage_err(err, n, "--serve-min-age SECS is for --serve [ADDR:]PORT");
    if (o->serve_addr &&
        (o->sort_given || o->group_given || o->iterations || o->delay_given || o->tree ||
         o->reverse || o->threshold_given || o->cull_ms || o->thread_order))
        return usage_err(err, n,
                         "--serve takes no -s, -g, -n, -d, --tree, --reverse, --threshold, "
                         "--cull or --thread-order (only --top, --no-symbols and "
                         "--serve-min-age)");
    return 0;
}

/* FILE.tree.json: the call tree export (as export.c reads the name). */
static bool tree_export(const char *path)
{
    size_t len = path ? strlen(path) : 0, e = strlen(".tree.json");
    return len > e && strcasecmp(path + len - e, ".tree.json") == 0;
}

/* What reports ignored: --reverse and --threshold shape a call tree (the
 * viewer's t, --tree, FILE.tree.json); -g the rows of --batch and the
 * viewer (no export format groups: each holds every trace). */
static int check_report(const mt_opts *o, char *err, size_t n)
{
    bool report = o->batch || o->export_path;
    if (report && (o->reverse || o->threshold_given) && !o->tree && !tree_export(o->export_path))
        return usage_err(err, n,
                         "--reverse and --threshold shape a call tree: --batch --tree or "
                         "--export FILE.tree.json");
    if (o->tree && o->export_path && !o->batch)
        return usage_err(err, n,
                         "--tree prints the call tree with --batch; an export's call tree is "
                         "--export FILE.tree.json");
    if (o->group_given && o->export_path && !o->batch)
        return usage_err(err, n,
                         "-g groups the rows of --batch and the viewer; an export holds "
                         "every trace");
    return 0;
}

static int check_combination(const mt_opts *o, char *err, size_t n)
{
    if (o->help || o->version)
        return 0;
    int rc = check_target(o, err, n);
    if (!rc)
        rc = check_serve(o, err, n);
    if (!rc)
        rc = check_report(o, err, n);
    if (rc)
        return rc;
    if (o->cull_ms && (o->replay_path || o->list || o->clean))
        return usage_err(err, n, "--cull is for recording: with --record, or r/R in the viewer");
    if (o->thread_order && (o->replay_path || o->list || o->clean))
        return usage_err(err, n,
                         "--thread-order is for recording: with --record, or r/R in the viewer");
    if (o->at_s >= 0 && !o->replay_path)
        return usage_err(err, n, "--at needs -f FILE");
    /* A recording's --batch and --export report one moment: nothing to repeat. */
    if (o->replay_path && (o->batch || o->export_path) && (o->iterations || o->delay_given))
        return usage_err(err, n,
                         "-n and -d pace the reports of a running target; -f FILE reports one "
                         "moment (--at SECONDS)");
    /* The viewer runs until q, an export is one snapshot: only --batch
     * counts reports (the viewer took -n and ignored it). */
    if (o->iterations && !o->batch)
        return usage_err(err, n, "-n N counts the reports of --batch");
    /* The call tree is made of every trace's frames: neither cut nor grouped. */
    if (o->tree && o->top_given)
        return usage_err(err, n,
                         "--top is for the table's rows, not --tree (fold small nodes with "
                         "--threshold BYTES)");
    if (o->tree && o->group != MT_GROUP_TRACE)
        return usage_err(err, n, "-g groups the table's rows, not --tree (one node per function)");
    if (o->strict && !o->export_path)
        return usage_err(err, n, "--strict needs --export FILE");
    if (o->output_path && (!o->prog_argv || o->batch || o->export_path))
        return usage_err(err, n, "--output is for the interactive view of -- PROG ARGS");
    return 0;
}

/* What getopt_long refused, as the user typed it: a long option
 * ("--export", even as an abbreviation, without "=VALUE") or a short one
 * ("-e", the letter of a cluster).  at: optind before the call, the word
 * it started in ("+": no permutation); the word is that one while getopt
 * is inside a cluster, else the one it has just passed. */
static int refused(char **argv, int at, char *err, size_t n)
{
    const char *word = optind > at ? argv[optind - 1] : argv[optind];
    if (word && strncmp(word, "--", 2) == 0)
        return usage_err(err, n, "bad option or missing value: %.*s", (int)strcspn(word, "="),
                         word);
    if (optopt && optopt < OPT_CLEAN)
        return usage_err(err, n, "bad option or missing value: -%c", optopt);
    return usage_err(err, n, "bad option or missing value: %s", word ? word : "?");
}

int mt_opts_parse(int argc, char **argv, mt_opts *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    o->delay_s = 1.0;
    o->top = 20;
    o->at_s = -1;
    opterr = 0;
    optind = 0; /* a whole new scan: not inside the cluster of a parse before */
    int c, at = 1;
    while ((c = getopt_long(argc, argv, "+p:bn:d:s:e:g:f:lhV", long_opts, NULL)) != -1) {
        if (c == '?' || c == ':')
            return refused(argv, at, err, n);
        at = optind;
        if (apply_flag(c, o))
            continue;
        int rc = apply(c, optarg, o, err, n);
        if (rc)
            return rc;
    }
    if (optind < argc)
        o->prog_argv = argv + optind;
    return check_combination(o, err, n);
}
