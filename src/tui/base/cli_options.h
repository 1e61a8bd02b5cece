/* cli_options.h -- memtop's command line: what the user asked for, parsed
 * and range-checked, or a one-line usage error.  In base/ because every
 * layer reads the options (the sort key, the grouping, the paths); the
 * commands that act on them are in cli/. */
#ifndef MEMTOP_CLI_OPTIONS_H
#define MEMTOP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum mt_sort_key {
    MT_SORT_LIVE,
    MT_SORT_COUNT,
    MT_SORT_ALLOCS,
    MT_SORT_TEMPORARY,
    MT_SORT_GROWTH,
    MT_SORT_LEAK,
    MT_SORT_KEYS /* how many */
} mt_sort_key;

/* What one row of the table stands for. */
typedef enum mt_group_key {
    MT_GROUP_TRACE,    /* one backtrace */
    MT_GROUP_FUNCTION, /* the function of the trace's location */
    MT_GROUP_FILE,     /* the source file of the trace's location */
    MT_GROUP_MODULE,   /* the executable or library of the trace's location */
    MT_GROUP_KEYS      /* how many */
} mt_group_key;

/* --serve-min-age's largest value: a year. */
#define MT_SERVE_MIN_AGE_MAX_S (366L * 86400)

typedef struct mt_opts {
    int pid;                 /* -p; 0 = none */
    bool batch;              /* -b */
    bool list;               /* -l */
    bool clean;              /* --clean */
    bool all_users;          /* --all-users: --clean every user's files (root) */
    bool help;               /* -h */
    bool version;            /* -V */
    bool no_symbols;         /* --no-symbols: module + offset only */
    long iterations;         /* -n; 0 = until the target exits */
    double delay_s;          /* -d */
    bool delay_given;        /* -d was given (not the default) */
    mt_sort_key sort;        /* -s */
    bool sort_given;         /* -s was given */
    long top;                /* --top; rows per report */
    bool top_given;          /* --top was given: it also bounds --export */
    const char *export_path; /* -e */
    bool strict;             /* --strict: exit 3 if the exported data is not exact */
    bool tree;               /* --tree: call tree (batch text; the viewer opens on it) */
    bool reverse;            /* --reverse: the call tree bottom-up */
    long threshold;          /* --threshold BYTES: tree nodes below it fold into (other) */
    bool threshold_given;    /* --threshold was given */
    mt_group_key group;      /* -g */
    bool group_given;        /* -g was given */
    const char *output_path; /* --output: PROG's stdout and stderr in the TUI */
    bool ascii;              /* --ascii: no UTF-8 line drawing even if the locale has it */
    bool no_color;           /* --no-color */
    const char *record_path; /* --record FILE */
    uint64_t sample_bytes;   /* --sample BYTES: MEMTOP_SAMPLE for PROG (0 = exact) */
    bool sample_given;
    uint64_t cull_ms;        /* --cull[=SECS]: record culled with this threshold; 0: full */
    bool thread_order;       /* --thread-order: record each thread's order within a tick */
    const char *replay_path; /* -f FILE.dat */
    const char *serve_addr;  /* --serve [ADDR:]PORT: the exporter (fleet/) */
    long serve_min_age_s;    /* --serve-min-age SECS: export processes this old only */
    bool serve_min_age_given;
    double at_s;      /* --at SECONDS into the recording; < 0 = the end */
    char **prog_argv; /* PROG ARGS (after --), NULL-terminated, or NULL */
} mt_opts;

/* 0 on success; 2 with a message in err on a usage error. */
int mt_opts_parse(int argc, char **argv, mt_opts *o, char *err, size_t errsz);

const char *mt_sort_name(mt_sort_key key);
const char *mt_group_name(mt_group_key key);

/* Parse a sort or group name; false if it names none. */
bool mt_sort_parse(const char *s, mt_sort_key *out);
bool mt_group_parse(const char *s, mt_group_key *out);

#endif
