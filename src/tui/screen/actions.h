/* actions.h -- what the viewer's global keys do, whichever panel is on
 * top: sort, group, baseline, pause, export, record, help, quit.  Which
 * key does which is keymap.c's table. */
#ifndef MEMTOP_ACTIONS_H
#define MEMTOP_ACTIONS_H

#include "app.h"

void mt_action_sort(mt_app *a, mt_sort_key key);

/* Move a recording's time cursor by fraction of its duration (clamped). */
void mt_action_cursor(mt_app *a, double fraction);

/* The global keys' actions (keymap.c binds them): true when done, false
 * when the action does not apply now (the key goes on).  arg: the binding's
 * argument (a sort key, a cursor step), unused by most. */
bool mt_act_sort(mt_app *a, double key);
bool mt_act_sort_menu(mt_app *a, double unused);
bool mt_act_cursor(mt_app *a, double fraction); /* false without -f */
bool mt_act_quit(mt_app *a, double unused);
bool mt_act_help(mt_app *a, double unused);
bool mt_act_redraw(mt_app *a, double unused);
bool mt_act_pause(mt_app *a, double unused);
bool mt_act_group(mt_app *a, double unused);
bool mt_act_baseline(mt_app *a, double unused);
bool mt_act_export(mt_app *a, double pprof);  /* 0: JSON (e), 1: pprof (P) */
bool mt_act_record(mt_app *a, double culled); /* r: 0, R: 1 */
/* Whether r and R can record: a live target attached (not a replay, not a
 * process that ended).  The function bar offers F8 only then. */
bool mt_app_can_record(const mt_app *a);

#endif
