/* cmd_replay.c -- `memtop -f FILE.dat --batch|--export OUT [--at S]`:
 * reports from a recording, of its end or of S seconds into it, through
 * the same report and export code as a live target. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd_batch.h"
#include "dat_stdin.h"
#include "commands.h"
#include "replay.h"
#include "replay_export.h"
#include "replay_summary.h"
#include "symbols.h"

/* The cursor for --at (seconds from the start of the recording). */
static int cursor_of(const mt_opts *o, const mt_replay *r, uint64_t *t_ns)
{
    *t_ns = UINT64_MAX;
    char msg[160];
    if (o->at_s < 0)
        return 0;
    if (mt_replay_at(r, o->at_s, t_ns, msg, sizeof msg) != 0) {
        mt_errorf("%s: %s", mt_replay_get_info(r)->path, msg);
        return -1;
    }
    return 0;
}

static int report(const mt_opts *o, mt_replay *r, mt_view *v, mt_locator *loc)
{
    if (o->batch)
        mt_replay_summary(stdout, r, v, o, loc);
    if (o->export_path) {
        mt_export_rec rec;
        mt_replay_export_rec(r, &rec);
        return mt_batch_export(v, mt_replay_state(r), o, loc, &rec);
    }
    return MT_EXIT_OK;
}

static int run(const mt_opts *o, mt_replay *r)
{
    uint64_t t_ns;
    if (cursor_of(o, r, &t_ns) != 0)
        return MT_EXIT_FAIL;
    mt_view v;
    mt_view_init(&v);
    mt_err err;
    if (mt_replay_seek(r, t_ns, &v, &err) != MT_OK) {
        mt_errorf("%s: %s", mt_dat_path_name(o->replay_path), err.msg);
        return MT_EXIT_FAIL;
    }
    mt_symbols syms;
    int rc = MT_EXIT_FAIL;
    if (mt_symbols_init(&syms, !o->no_symbols, getenv("MEMTOP_SKIP_FUNCS")) != 0) {
        mt_errorf("out of memory");
    } else {
        mt_locator loc = mt_symbols_locator(&syms, &v.mods);
        rc = report(o, r, &v, &loc);
        mt_symbols_free(&syms);
    }
    mt_replay_view_free(&v);
    return rc;
}

int mt_cmd_replay(const mt_opts *o)
{
    mt_err err = {MT_OK, ""};
    mt_replay *r = mt_replay_open(o->replay_path, &err);
    if (!r) {
        mt_errorf("%s: %s", mt_dat_path_name(o->replay_path), err.msg);
        return MT_EXIT_FAIL;
    }
    mt_replay_warn(r);
    int rc = run(o, r);
    mt_replay_close(r);
    return rc;
}
