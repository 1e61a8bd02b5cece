/* test_replay_record_drv.c -- runs mt_cmd_record (`memtop -p PID --record
 * FILE`) from memtop's own option parser, for the e2e test, independent of
 * how main.c dispatches commands. */
#include <stdio.h>

#include "cli_options.h"
#include "commands.h"

int main(int argc, char **argv)
{
    mt_opts o;
    char err[512];
    if (mt_opts_parse(argc, argv, &o, err, sizeof err) != 0 || !o.pid || !o.record_path) {
        fprintf(stderr, "usage: test_replay_record_drv -p PID --record FILE (%s)\n", err);
        return MT_EXIT_USAGE;
    }
    return mt_cmd_record(&o);
}
