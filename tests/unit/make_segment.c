/* make_segment.c -- test tool: writes a synthetic segment for a pid into a
 * directory, healthy or damaged, so that memtop's command line can be
 * tested without libmemtop.so (see check_cli_segments.py).
 *
 * usage: make_segment DIR PID running|large|exited|stale|foreign|truncated|garbled
 * (large: running, with 2000 traces of 16 frames: ~3 MiB of data to read) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seg_builder.h"
#include "shm_path.h"

static int damage(sb_seg *seg, const char *mode)
{
    mt_shm_header *h = sb_header(seg);
    if (strcmp(mode, "exited") == 0)
        h->flags = MT_FLAG_EXITED;
    else if (strcmp(mode, "stale") == 0)
        h->proc_start_ticks = 1;
    else if (strcmp(mode, "foreign") == 0)
        h->version = 7;
    else if (strcmp(mode, "truncated") == 0)
        seg->size -= 4096;
    else if (strcmp(mode, "garbled") == 0)
        sb_traces(seg, 1)[0].id = 1000;
    else if (strcmp(mode, "running") != 0 && strcmp(mode, "large") != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: make_segment DIR PID MODE\n");
        return 2;
    }
    sb_spec spec;
    sb_seg seg;
    char path[4096];
    sb_default_spec(&spec);
    spec.pid = atoi(argv[2]);
    if (strcmp(argv[3], "large") == 0) {
        spec.ntraces = 2000;
        spec.nframes = 16;
        spec.nmodules = 8;
        spec.defs_cap = spec.slot_cap = 1 << 20;
    }
    if (spec.pid <= 0 || sb_build(&seg, &spec) != 0 || damage(&seg, argv[3]) != 0 ||
        mt_shm_path(argv[1], spec.pid, path, sizeof path) != 0 || sb_write(&seg, path) != 0) {
        fprintf(stderr, "make_segment: cannot make a '%s' segment\n", argv[3]);
        return 1;
    }
    sb_free(&seg);
    return 0;
}
