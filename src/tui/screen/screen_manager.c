/* screen_manager.c -- the event loop (see screen_manager.h).
 *
 * Nothing here blocks on the target or on symbolization: snapshots are
 * copied out of shared memory under the seqlock (bounded retries), names
 * come from the background symbolizer, exports run in a child.  The loop
 * wakes at least every TICK_MS to notice names arriving and the target
 * ending. */
#include "screen_manager.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "bars.h"
#include "dat_format.h"
#include "draw.h"
#include "header_view.h"
#include "keymap.h"
#include "table_keys.h"
#include "tree_keys.h"
#include "wrapper_shape.h"

#define TICK_MS 100
#define NAMES_REBUILD_S 0.5 /* at most this often for names arriving */
/* The shape rule again, when traces were added: at most every SHAPE_EVERY_S
 * seconds, times one more per SHAPE_PER_TRACES traces (a job costs ~0.1 s
 * of the symbolizer's CPU per 50k traces: ~1 % of a core at any size). */
#define SHAPE_EVERY_S 5.0
#define SHAPE_PER_TRACES 10000
#define MIN_COLS 40
#define MIN_LINES 10

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct loop {
    int sigfd;
    double next_data;
    double last_names_build;
    uint64_t names_gen;
    uint64_t observed;   /* the source's version last fed to the table */
    uint64_t image;      /* the source's image the names belong to */
    size_t shape_traces; /* traces the last shape job saw */
    double shape_at;     /* when it was handed over */
} loop;

/* Hand the symbolizer the shape rule's job for the traces known now
 * (src/tui/model/wrapper_shape.h) when traces were added since the last. */
static void ask_shape(mt_app *a, loop *L)
{
    const mt_view *v = &a->src.view;
    double every = SHAPE_EVERY_S * (double)(1 + v->defs.count / SHAPE_PER_TRACES);
    if (!a->sym || v->defs.count == L->shape_traces || a->now - L->shape_at < every)
        return;
    mt_shape_job *job = mt_shape_job_new(&v->defs, &v->snap);
    if (!job)
        return; /* out of memory: the names rule alone, try again later */
    mt_symworker_shape(a->sym, mt_shape_job_run, mt_shape_job_free, job);
    L->shape_traces = v->defs.count;
    L->shape_at = a->now;
}

/* Feed a snapshot the table has not seen yet. */
static void take_data(mt_app *a, loop *L)
{
    const mt_view *v = &a->src.view;
    if (a->src.image != L->image) { /* exec: new trace ids, new names */
        mt_names_free(&a->names);
        mt_names_init(&a->names, a->sym, &a->src.view.defs);
        L->image = a->src.image;
        L->shape_traces = 0;
        L->shape_at = 0;
    }
    if (!v->have_snap || a->src.version == L->observed)
        return;
    mt_symworker_set_modules(a->sym, &v->mods);
    /* prev is the snapshot fed last time only if exactly one arrived since. */
    bool prev_ok = v->have_prev && !a->src.replay && a->src.version == L->observed + 1;
    mt_table_observe(a->table, &v->snap, prev_ok ? &v->prev : NULL);
    ask_shape(a, L);
    a->ui.rates_known = prev_ok || (a->ui.rates_known && !a->src.replay);
    L->observed = a->src.version;
    a->rebuild = true;
    a->dirty = true;
}

/* The target's staleness (view.h) at this poll; true when what the
 * header says of it changed: stale or not, its /proc state, its age in
 * whole seconds (a stopped target's snapshot does not change, yet its age
 * on screen must). */
static bool poll_stale(mt_app *a)
{
    mt_staleness was = a->ui.stale, now = mt_view_staleness(&a->src.view);
    a->ui.stale = now;
    if (!now.stale && !was.stale && now.ended == was.ended)
        return false;
    return now.stale != was.stale || now.ended != was.ended || now.proc_state != was.proc_state ||
           now.age_ns / 1000000000u != was.age_ns / 1000000000u;
}

static void poll_data(mt_app *a, loop *L)
{
    if (a->now < L->next_data || a->ui.paused || !a->src.pid || a->control.running) {
        take_data(a, L); /* a recording's cursor may have moved */
        return;          /* (a control job uses the mapping: it must not be replaced under it) */
    }
    bool waiting = a->src.phase == MT_SRC_WAITING;
    L->next_data = a->now + (waiting ? 0.05 : a->o->delay_s);
    if (mt_source_poll(&a->src))
        a->dirty = true;
    if (poll_stale(a))
        a->dirty = true;
    take_data(a, L);
}

static void build_rows(mt_app *a, loop *L)
{
    const mt_snapshot *s = mt_app_snapshot(a);
    uint64_t gen = a->sym ? mt_symworker_generation(a->sym) : 0;
    bool names_news = gen != L->names_gen && a->now - L->last_names_build >= NAMES_REBUILD_S;
    if (!s) { /* lost the segment (re-attaching): rows must not point into it */
        static const mt_snapshot none;
        size_t n;
        if (mt_table_rows(a->table, &n) && n)
            mt_table_build(a->table, &none, mt_app_group(a), a->ui.sort, NULL, NULL);
        return;
    }
    if (!a->rebuild && !names_news)
        return;
    mt_namer namer = mt_names_namer(&a->names);
    bool keep = !a->panels.table.sel_reset;
    if (keep)
        mt_table_remember_selection(a);
    /* The tree filters its rows itself: by the names on their paths too. */
    const char *filter = mt_app_in_tree(a) ? NULL : a->ui.filter;
    if (mt_table_build(a->table, s, mt_app_group(a), a->ui.sort, filter, &namer) < 0)
        mt_app_status(a, true, "out of memory building the table");
    else if (mt_app_in_tree(a))
        mt_tree_rebuild(a);
    if (keep)
        mt_table_restore_selection(a);
    a->panels.table.sel_reset = false;
    if (!mt_table_has_baseline(a->table) && a->ui.baseline_t_ns) {
        /* the model drops it on a new image, a replay's when the cursor moves before it */
        a->ui.baseline_t_ns = 0;
        mt_app_status(a, false, "%s",
                      a->src.replay ? "baseline cleared: the cursor moved before it"
                                    : "baseline cleared: a new program image (exec)");
    }
    L->names_gen = gen;
    L->last_names_build = a->now;
    a->rebuild = false;
    a->dirty = true;
}

static void poll_jobs(mt_app *a)
{
    char msg[1024];
    mt_job_state st = mt_export_poll(&a->export, msg, sizeof msg);
    if (st == MT_JOB_DONE)
        mt_app_status(a, false, "exported %s", msg);
    else if (st == MT_JOB_FAILED)
        mt_app_status(a, true, "export failed: %s", msg);
    bool stop = a->control.cmd == MT_CMD_RECORD_STOP;
    /* R sent "cull=SECS PATH" (mt_control_record_arg): say it is culled. */
    char cull[32] = "";
    if (a->control.cmd == MT_CMD_RECORD_START && strncmp(a->control.arg, "cull=", 5) == 0)
        snprintf(cull, sizeof cull, "%.*s", (int)strcspn(a->control.arg + 5, " "),
                 a->control.arg + 5);
    st = mt_control_job_poll(&a->control, msg, sizeof msg);
    if (st == MT_JOB_DONE && !stop)
        a->src.lease = a->control.lease; /* renewed by renew_lease from now on */
    if (st == MT_JOB_DONE && !stop && a->control.lease.old_target)
        mt_app_status(a, false,
                      "recording: %s (an older libmemtop.so: it goes on if this viewer is killed)",
                      msg);
    else if (st == MT_JOB_DONE && cull[0])
        mt_app_status(a, false, "culled recording: %s (blocks freed within %s s only counted)", msg,
                      cull);
    else if (st == MT_JOB_DONE)
        mt_app_status(a, false, stop ? "recording stopped: %s" : "recording: %s", msg);
    else if (st == MT_JOB_FAILED)
        mt_app_status(a, true, "recording %s failed: %s", stop ? "stop" : "start", msg);
}

/* The recording `r` started is renewed from here, every pass of the loop
 * (at least every TICK_MS plus the pass's work: far below the lease's
 * bound).  Once it is no longer on, a recording the target ended because
 * this viewer did not renew it (it was stopped, SIGSTOP) is said once. */
static void renew_lease(mt_app *a)
{
    if (!a->src.lease.held || a->src.phase != MT_SRC_LIVE || !a->src.view.attached)
        return;
    if (mt_lease_renew(&a->src.lease, &a->src.view.seg))
        return;
    mt_shm_recording r;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info li;
    mt_err err;
    if (mt_segment_recording_lease(&a->src.view.seg, &r, why, &li, &err) == MT_OK &&
        li.end_reason == MT_DAT_END_LEASE)
        mt_app_status(a, true,
                      "recording ended: the target stopped it, this viewer did not renew it for "
                      "%u.%03u s (was it stopped?); %s is finalized",
                      li.ms / 1000, li.ms % 1000, r.path);
}

static void draw(mt_app *a)
{
    erase();
    if (COLS < MIN_COLS || LINES < MIN_LINES) {
        mt_draw_fmt(&a->theme, 0, 0, COLS, A_BOLD, "memtop needs %dx%d (now %dx%d); q quits",
                    MIN_COLS, MIN_LINES, COLS, LINES);
        refresh();
        return;
    }
    mt_panel *p = a->stack[a->depth - 1];
    int y = p->cls->show_header ? mt_header_draw(a) : 0;
    p->cls->draw(a, p, y, LINES - 2 - y);
    mt_bars_draw(a);
    refresh();
    a->dirty = false;
}

static void handle_key(mt_app *a, int ch)
{
    if (ch == KEY_RESIZE) {
        a->dirty = true;
        return;
    }
    mt_panel *p = a->stack[a->depth - 1];
    mt_key_result r = p->cls->key(a, p, ch);
    if (r == MT_KEY_CLOSE)
        mt_app_pop(a);
    else if (r == MT_KEY_UNHANDLED)
        mt_keys_dispatch(a, MT_KEYS_GLOBAL, ch);
    if (a->depth == 0)
        a->quit = true;
    a->dirty = true;
}

/* A terminating signal's number, or 0. */
static int read_signals(loop *L)
{
    struct signalfd_siginfo si;
    int term = 0;
    while (read(L->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
        if (si.ssi_signo != SIGCHLD)
            term = (int)si.ssi_signo;
        else
            L->next_data = 0; /* PROG may have exited: look now */
    return term;
}

static int wait_input(loop *L)
{
    struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {L->sigfd, POLLIN, 0}};
    int r = poll(fds, 2, TICK_MS);
    if (r > 0 && (fds[1].revents & POLLIN))
        return read_signals(L);
    return 0;
}

static int open_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int mt_screen_run(mt_app *a)
{
    loop L;
    memset(&L, 0, sizeof L);
    L.sigfd = open_signals();
    int sig = 0;
    a->dirty = true;
    while (!a->quit && !sig) {
        a->now = monotonic_s();
        mt_panel *top = a->stack[a->depth - 1];
        if (top == &a->panels.picker && mt_picker_scan(&a->picker, top, a->now))
            a->dirty = true;
        if (a->ui.seek_pending) { /* cursor keys since the last pass, as one seek */
            char msg[512];
            a->ui.seek_pending = false;
            if (!mt_source_seek(&a->src, a->ui.seek_to, msg, sizeof msg))
                mt_app_status(a, true, "%s", msg);
            a->dirty = true;
        }
        poll_data(a, &L);
        build_rows(a, &L);
        poll_jobs(a);
        renew_lease(a);
        if (a->status[0] && a->now >= a->status_until && a->status_until > 0) {
            a->status_until = 0;
            a->dirty = true;
        }
        if (a->dirty || (a->sym && mt_symworker_generation(a->sym) != L.names_gen))
            draw(a);
        sig = L.sigfd >= 0 ? wait_input(&L) : 0;
        if (L.sigfd < 0)
            napms(TICK_MS);
        for (int ch; !sig && !a->quit && (ch = getch()) != ERR;)
            handle_key(a, ch);
    }
    if (L.sigfd >= 0)
        close(L.sigfd);
    return sig;
}
