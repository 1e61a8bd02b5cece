/* bars.h -- the two bottom rows: the status line (messages, the search
 * prompt, or what the table shows) and the htop-style function-key bar. */
#ifndef MEMTOP_BARS_H
#define MEMTOP_BARS_H

#include "app.h"

void mt_bars_draw(mt_app *a);

#endif
