/* tui_main.c -- `memtop -p PID`, `memtop -- PROG ARGS` and `memtop` alone:
 * set up the interactive viewer, run it, and leave the terminal, the
 * target and PROG's exit status as they should be.
 *
 * Errors that happen before the screen is taken (no such process, PROG
 * cannot be run, not a terminal) are printed as one line, as the other
 * commands do, and the viewer never starts. */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "dat_stdin.h"
#include "errors.h"
#include "lib_locate.h"
#include "screen_manager.h"
#include "term.h"
#include "tree_keys.h"
#include "tui_main.h"

#define GRACE_S 3.0                /* between SIGTERM and SIGKILL for PROG at quit */
#define BIG_RECORDING (64ll << 20) /* bytes of a recording worth a "reading" line */

/* --at SECONDS with -f: the cursor starts there (seconds since the
 * recording began, as the header counts). */
static int seek_at(mt_app *a, double at_s, char *msg, size_t n)
{
    uint64_t t;
    if (mt_replay_at(a->src.replay, at_s, &t, msg, n) != 0)
        return -1;
    return mt_source_seek(&a->src, t, msg, n) ? 0 : -1;
}

static int start_target(mt_app *a, const mt_opts *o)
{
    char msg[8400];
    if (o->replay_path) {
        /* a large file takes a while to read (~14 M events/s): say so */
        int64_t bytes = mt_dat_path_bytes(o->replay_path); /* "-": the copy's */
        if (bytes > BIG_RECORDING)
            fprintf(stderr, "memtop: reading %s (%lld MB) ...\n", mt_dat_path_name(o->replay_path),
                    (long long)(bytes >> 20));
        if (mt_source_open_replay(&a->src, o->replay_path, msg, sizeof msg) != 0 ||
            (o->at_s >= 0 && seek_at(a, o->at_s, msg, sizeof msg) != 0)) {
            mt_errorf("%s: %s", mt_dat_path_name(o->replay_path), msg); /* as --batch */
            return MT_EXIT_FAIL;
        }
        return MT_EXIT_OK;
    }
    if (o->pid) {
        if (mt_source_attach(&a->src, o->pid, msg, sizeof msg) != 0) {
            mt_errorf("%s", msg);
            return MT_EXIT_FAIL;
        }
        return MT_EXIT_OK;
    }
    if (o->prog_argv) {
        char lib[4096];
        if (mt_locate_lib(lib, sizeof lib, msg, sizeof msg) != 0) {
            mt_errorf("%s", msg);
            return MT_EXIT_FAIL;
        }
        int rc = mt_source_launch(&a->src, o->prog_argv, lib, o->output_path, msg, sizeof msg);
        if (rc != 0) {
            mt_errorf("%s", msg);
            return rc == -2 ? MT_EXIT_NOEXEC : MT_EXIT_FAIL;
        }
    }
    return MT_EXIT_OK;
}

static int setup(mt_app *a, const mt_opts *o)
{
    char msg[512];
    a->o = o;
    mt_panels_init(&a->panels);
    a->ui.sort = o->sort;
    a->ui.group = o->group;
    a->picker.dir = mt_shm_dir();
    mt_source_init(&a->src);
    if (!(a->table = mt_table_new())) {
        mt_errorf("out of memory");
        return MT_EXIT_FAIL;
    }
    int rc = start_target(a, o);
    if (rc != MT_EXIT_OK)
        return rc;
    if (a->src.replay)
        mt_table_set_rewinds(a->table);
    if (!(a->sym =
              mt_symworker_start(!o->no_symbols, getenv("MEMTOP_SKIP_FUNCS"), msg, sizeof msg))) {
        mt_errorf("%s", msg);
        return MT_EXIT_FAIL;
    }
    mt_names_init(&a->names, a->sym, &a->src.view.defs);
    bool target = a->src.pid || a->src.replay;
    mt_app_push(a, target ? &a->panels.table.p : &a->panels.picker);
    a->panels.tree.reverse = o->reverse;
    a->panels.tree.threshold = (double)o->threshold;
    if (target && o->tree)
        mt_app_push(a, &a->panels.tree.p);
    return MT_EXIT_OK;
}

static void teardown(mt_app *a)
{
    mt_export_finish(&a->export);
    if (mt_control_job_finish(&a->control)) /* r, then q before its answer */
        a->src.lease = a->control.lease;    /* stopped as the source closes */
    mt_names_free(&a->names);
    mt_symworker_stop(a->sym);
    mt_table_free(a->table);
    mt_tree_free(&a->panels.tree);
    mt_picker_free(&a->picker);
}

/* memtop's status: PROG's if it ran to its end, else 128+N for a signal
 * that ended memtop, else 0. */
static int finish(mt_app *a, int sig)
{
    const char *prog = a->o->prog_argv ? a->o->prog_argv[0] : NULL;
    bool launched = a->src.launched;
    char out[sizeof a->src.out_path];
    snprintf(out, sizeof out, "%s", a->src.out_path);
    int status = mt_source_close(&a->src, GRACE_S);
    if (a->src.note[0])
        mt_errorf("%s", a->src.note);
    if (launched)
        fprintf(stderr, "memtop: the output of %s is in %s\n", prog, out);
    if (status >= 0)
        return status;
    return sig ? 128 + sig : MT_EXIT_OK;
}

int mt_cmd_tui(const mt_opts *o)
{
    setlocale(LC_ALL, "");
    mt_app *a = calloc(1, sizeof *a);
    if (!a) {
        mt_errorf("out of memory");
        return MT_EXIT_FAIL;
    }
    int rc = setup(a, o);
    char msg[256];
    if (rc == MT_EXIT_OK && !mt_term_start(msg, sizeof msg)) {
        mt_errorf("%s", msg);
        rc = MT_EXIT_FAIL;
    }
    if (rc != MT_EXIT_OK) {
        teardown(a);
        mt_source_close(&a->src, 0);
        free(a);
        return rc;
    }
    mt_theme_init(&a->theme, o->ascii, o->no_color);
    int sig = mt_screen_run(a);
    mt_term_stop();
    teardown(a);
    rc = finish(a, sig);
    free(a);
    return rc;
}
