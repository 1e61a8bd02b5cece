/* commands.h -- memtop's top-level commands and exit codes.  Each command
 * prints its own one-line errors and returns the process exit status. */
#ifndef MEMTOP_COMMANDS_H
#define MEMTOP_COMMANDS_H

#include "cli_options.h"

enum {
    MT_EXIT_OK = 0,
    MT_EXIT_FAIL = 1,     /* runtime error: no segment, permission, corrupt, ... */
    MT_EXIT_USAGE = 2,    /* bad command line */
    MT_EXIT_INEXACT = 3,  /* --strict: the exported data is not exact */
    MT_EXIT_NOEXEC = 127, /* PROG could not be run */
};

int mt_cmd_list(const mt_opts *o);   /* --list and/or --clean */
int mt_cmd_pid(const mt_opts *o);    /* -p PID --batch / --export */
int mt_cmd_launch(const mt_opts *o); /* --batch / --export -- PROG ARGS */
int mt_cmd_replay(const mt_opts *o); /* -f FILE.dat with --batch / --export */
int mt_cmd_record(const mt_opts *o); /* -p PID --record FILE without the viewer */
int mt_cmd_serve(const mt_opts *o);  /* --serve [ADDR:]PORT: /metrics, /pprof/heap */

/* The interactive viewer (src/tui/screen): -p PID, -- PROG ARGS, -f FILE,
 * or the process picker when no target is given. */
int mt_cmd_tui(const mt_opts *o);

/* "memtop: <message>\n" on stderr. */
void mt_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
