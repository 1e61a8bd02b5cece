/* main.c -- memtop's entry point: parse the command line and run the
 * command it names: a report (--batch, --export), a listing, or else the
 * interactive viewer. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "abs_path.h"

#include "cli_options.h"
#include "commands.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

/* --record FILE with PROG: PROG records itself from its start through
 * MEMTOP_RECORD (which libmemtop.so reads), into FILE made absolute. */
static int record_from_start(const char *file)
{
    char path[4096];
    if (mt_abs_path(file, path, sizeof path) != 0 || setenv("MEMTOP_RECORD", path, 1) != 0) {
        mt_errorf("--record: cannot use %s", file);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    mt_opts o;
    char err[512];
    if (mt_opts_parse(argc, argv, &o, err, sizeof err) != 0) {
        mt_errorf("%s (see memtop --help)", err);
        return MT_EXIT_USAGE;
    }
    if (o.help) {
        mt_opts_usage(stdout);
        return MT_EXIT_OK;
    }
    if (o.version) {
        printf("memtop %s\n", MEMTOP_VERSION);
        return MT_EXIT_OK;
    }
    if (o.serve_addr)
        return mt_cmd_serve(&o);
    if (o.list || o.clean)
        return mt_cmd_list(&o);
    if (o.record_path && o.prog_argv && record_from_start(o.record_path) != 0)
        return MT_EXIT_FAIL;
    bool report = o.batch || o.export_path;
    if (o.record_path && o.pid && !report)
        return mt_cmd_record(&o);
    if (o.replay_path && report)
        return mt_cmd_replay(&o);
    if (o.prog_argv && report)
        return mt_cmd_launch(&o);
    if (o.pid && report)
        return mt_cmd_pid(&o);
    return mt_cmd_tui(&o);
}
