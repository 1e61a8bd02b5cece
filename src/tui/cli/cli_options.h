/* cli_options.h -- memtop's command line: what the user asked for, parsed
 * and range-checked, or a one-line usage error. */
#ifndef MEMTOP_CLI_OPTIONS_H
#define MEMTOP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum mt_sort_key {
    MT_SORT_LIVE,
    MT_SORT_COUNT,
    MT_SORT_ALLOCS,
    MT_SORT_TEMPORARY,
    MT_SORT_GROWTH,
} mt_sort_key;

typedef struct mt_opts {
    int pid;                 /* -p; 0 = none */
    bool batch;              /* -b */
    bool list;               /* -l */
    bool clean;              /* --clean */
    bool help;               /* -h */
    bool version;            /* -V */
    bool no_symbols;         /* --no-symbols: module + offset only */
    long iterations;         /* -n; 0 = until the target exits */
    double delay_s;          /* -d */
    mt_sort_key sort;        /* -s */
    long top;                /* --top; rows per report */
    const char *export_path; /* -e */
    char **prog_argv;        /* PROG ARGS (after --), NULL-terminated, or NULL */
} mt_opts;

/* 0 on success; 2 with a message in err on a usage error. */
int mt_opts_parse(int argc, char **argv, mt_opts *o, char *err, size_t errsz);

void mt_opts_usage(FILE *f);

const char *mt_sort_name(mt_sort_key key);

#endif
