/* app.h -- the state of one run of the interactive viewer, passed to every
 * panel.  Nothing here is global: tui_main.c owns the one mt_app.  What a
 * panel shows of it (selection, scroll) is the panel's (panel.h). */
#ifndef MEMTOP_APP_H
#define MEMTOP_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_options.h"
#include "control_job.h"
#include "export_job.h"
#include "names_cache.h"
#include "panel.h"
#include "picker.h"
#include "source.h"
#include "sym_worker.h"
#include "table.h"
#include "text_lines.h"
#include "theme.h"

#define MT_PANEL_DEPTH 8
#define MT_FILTER_MAX 128
#define MT_STATUS_MAX 512

typedef struct mt_ui {
    mt_sort_key sort;
    mt_group_key group;
    char filter[MT_FILTER_MAX];
    bool searching;         /* the search line has the keyboard */
    bool paused;            /* Space: the data stays as it is */
    uint64_t baseline_t_ns; /* when the baseline was marked (0: none) */
    mt_shm_totals baseline; /* the process totals then, for the header's changes */
    bool rates_known;       /* the table's per-row rates come from two snapshots */
    mt_staleness stale;     /* the target's, at the last poll: rates unknown while stale */
    bool seek_pending;      /* -f: cursor keys moved the cursor to seek_to */
    uint64_t seek_to;       /* (UINT64_MAX: the end) */
    /* r on a recording this viewer did not start asks first: which one
     * (recording.recordings) a second r within MT_STOP_CONFIRM_S stops. */
    uint64_t stop_asked_rec;
    double stop_asked_until;
} mt_ui;

typedef struct mt_app {
    const mt_opts *o;
    mt_theme theme;
    mt_source src;
    mt_symworker *sym;
    mt_table *table;
    mt_names names;
    mt_picker picker;
    mt_text_lines page; /* scratch for the detail and help pages */
    mt_export_job export;
    mt_control_job control; /* r: start or stop a recording */
    mt_ui ui;
    mt_panels panels; /* each owns its selection and scroll */
    mt_panel *stack[MT_PANEL_DEPTH];
    int depth;
    bool dirty;   /* redraw */
    bool rebuild; /* rows must be rebuilt (data, sort, group, filter or names changed) */
    bool quit;
    char status[MT_STATUS_MAX]; /* a message for the status line */
    bool status_is_error;
    double status_until; /* monotonic seconds */
    double now;          /* monotonic seconds, updated every loop */
} mt_app;

/* Show a message on the status line for a few seconds. */
void mt_app_status(mt_app *a, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The rows must be built again (sort, grouping, filter or baseline
 * changed); the selection goes back to the first row. */
void mt_app_rows_changed(mt_app *a);

void mt_app_push(mt_app *a, mt_panel *p);
void mt_app_pop(mt_app *a);

/* Attach to a running process (from the picker): 0, or -1 with a message. */
int mt_app_attach(mt_app *a, int pid, char *msg, size_t n);

/* The call tree view is open (on top, or under details, help or a menu). */
bool mt_app_in_tree(const mt_app *a);
/* The grouping the table is built with: per trace while the tree is open
 * (the tree is made of traces), else the user's. */
mt_group_key mt_app_group(const mt_app *a);

/* The snapshot on screen, or NULL before the first one. */
const mt_snapshot *mt_app_snapshot(const mt_app *a);

#endif
