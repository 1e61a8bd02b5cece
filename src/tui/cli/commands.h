/* commands.h -- memtop's top-level commands and exit codes.  Each command
 * prints its own one-line errors and returns the process exit status. */
#ifndef MEMTOP_COMMANDS_H
#define MEMTOP_COMMANDS_H

#include <stdio.h>

#include "cli_options.h"
#include "errors.h"
#include "tui_main.h" /* mt_cmd_tui: the interactive viewer (src/tui/screen) */

int mt_cmd_list(const mt_opts *o);   /* --list and/or --clean */
int mt_cmd_clean(const mt_opts *o);  /* --clean (cmd_clean.c; mt_cmd_list calls it) */
int mt_cmd_pid(const mt_opts *o);    /* -p PID --batch / --export */
int mt_cmd_launch(const mt_opts *o); /* --batch / --export -- PROG ARGS */
int mt_cmd_replay(const mt_opts *o); /* -f FILE.dat with --batch / --export */
int mt_cmd_record(const mt_opts *o); /* -p PID --record FILE without the viewer */
int mt_cmd_serve(const mt_opts *o);  /* --serve [ADDR:]PORT: /metrics, /pprof/heap */

/* memtop --help (cli_usage.c). */
void mt_opts_usage(FILE *f);

#endif
