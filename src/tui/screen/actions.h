/* actions.h -- what the viewer's global keys do, whichever panel is on
 * top: sort, group, baseline, pause, export, record, help, quit. */
#ifndef MEMTOP_ACTIONS_H
#define MEMTOP_ACTIONS_H

#include "app.h"

/* Handle a global key; MT_KEY_UNHANDLED if ch is not one. */
mt_key_result mt_global_key(mt_app *a, int ch);

void mt_action_sort(mt_app *a, mt_sort_key key);

/* Move a recording's time cursor by fraction of its duration (clamped). */
void mt_action_cursor(mt_app *a, double fraction);

#endif
