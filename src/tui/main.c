/* main.c -- memtop's entry point: parse the command line and run the
 * command it names: a report (--batch, --export), a listing, or else the
 * interactive viewer. */
#include <stdbool.h>
#include <stdio.h>

#include "cli_options.h"
#include "commands.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

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
    if (o.list || o.clean)
        return mt_cmd_list(&o);
    bool report = o.batch || o.export_path;
    if (o.replay_path && report)
        return mt_cmd_replay(&o);
    if (o.prog_argv && report)
        return mt_cmd_launch(&o);
    if (o.pid && report)
        return mt_cmd_pid(&o);
    return mt_cmd_tui(&o);
}
