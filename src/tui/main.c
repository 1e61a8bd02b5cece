/* main.c -- memtop's entry point: parse the command line and run the
 * command it names: a report (--batch, --export), a listing, or else the
 * interactive viewer. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_name.h"

#include "cli_options.h"
#include "commands.h"
#include "dat_stdin.h"
#include "stdin_recording.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

/* --record FILE with PROG: PROG records itself from its start through
 * MEMTOP_RECORD (which libmemtop.so reads), into FILE made absolute;
 * --thread-order through MEMTOP_RECORD_ORDER (else PROG's own setting). */
static int record_from_start(const char *file, const char *prog, uint64_t cull_ms,
                             bool thread_order)
{
    char path[4096], secs[32];
    snprintf(secs, sizeof secs, "%llu.%03llu", (unsigned long long)(cull_ms / 1000),
             (unsigned long long)(cull_ms % 1000));
    if (mt_record_name_abs(file, path, sizeof path) != 0) {
        mt_errorf("--record: cannot use %s", file);
        return -1;
    }
    if (mt_record_name_check("--record", file, path, prog) != 0 || mt_record_name_usable(path) != 0)
        return -1;
    if (setenv("MEMTOP_RECORD", path, 1) != 0 ||
        setenv("MEMTOP_RECORD_MODE", cull_ms ? "culled" : "full", 1) != 0 ||
        (cull_ms && setenv("MEMTOP_CULL_SECS", secs, 1) != 0) ||
        (thread_order && setenv("MEMTOP_RECORD_ORDER", "thread", 1) != 0)) {
        mt_errorf("--record: cannot use %s", file);
        return -1;
    }
    return 0;
}

/* --sample BYTES with PROG: PROG samples through MEMTOP_SAMPLE. */
static int sample_from_start(uint64_t bytes)
{
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)bytes);
    if (setenv("MEMTOP_SAMPLE", v, 1) != 0) {
        mt_errorf("--sample: cannot set MEMTOP_SAMPLE");
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
    if (o.sample_given && o.prog_argv && sample_from_start(o.sample_bytes) != 0)
        return MT_EXIT_USAGE;
    if (o.record_path && o.prog_argv &&
        record_from_start(o.record_path, o.prog_argv[0], o.cull_ms, o.thread_order) != 0)
        return MT_EXIT_FAIL;
    bool report = o.batch || o.export_path;
    if (mt_dat_path_is_stdin(o.replay_path)) {
        int rc = mt_stdin_recording(!report);
        if (rc != MT_EXIT_OK)
            return rc;
    }
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
