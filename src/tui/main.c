/* main.c -- memtop's entry point: parse the command line and run the
 * command it names.  The interactive view comes in a later issue. */
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
    if (o.prog_argv)
        return mt_cmd_launch(&o);
    if (o.batch || o.export_path)
        return mt_cmd_pid(&o);
    if (o.pid)
        mt_errorf("the interactive view is not available yet; use memtop -p %d --batch", o.pid);
    else
        mt_errorf("the interactive view is not available yet; use memtop --batch -- PROG, "
                  "memtop -p PID --batch or memtop --list");
    return MT_EXIT_USAGE;
}
