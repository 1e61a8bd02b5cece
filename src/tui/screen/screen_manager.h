/* screen_manager.h -- the viewer's one loop, like htop's ScreenManager:
 * wait for a key, a signal or the next refresh; take new data; rebuild the
 * rows when something they depend on changed; give keys to the panel on
 * top (then to the global keys); redraw what changed. */
#ifndef MEMTOP_SCREEN_MANAGER_H
#define MEMTOP_SCREEN_MANAGER_H

#include "app.h"

/* Run until the user quits or a terminating signal arrives (its number is
 * returned; 0 for a quit). */
int mt_screen_run(mt_app *a);

#endif
