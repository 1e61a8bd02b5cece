/* tui_main.h -- the interactive viewer as one command, for src/tui/cli to
 * call: -p PID, -- PROG ARGS, -f FILE, or the process picker when no
 * target is given.  Prints its own one-line errors; returns the exit
 * status (errors.h). */
#ifndef MEMTOP_TUI_MAIN_H
#define MEMTOP_TUI_MAIN_H

#include "cli_options.h"

int mt_cmd_tui(const mt_opts *o);

#endif
