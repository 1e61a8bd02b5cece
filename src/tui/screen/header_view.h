/* header_view.h -- the top of the viewer: who the target is and how long
 * it has run; live heap, what the allocator holds and RSS (fragmentation);
 * rates and growth over the last minute; the heap's history over the whole
 * life of the process; recording state and data health. */
#ifndef MEMTOP_HEADER_VIEW_H
#define MEMTOP_HEADER_VIEW_H

#include "app.h"

/* Rows the header takes on a screen of `lines` rows. */
int mt_header_height(const mt_app *a, int lines);

/* Draw it from row 0; returns its height. */
int mt_header_draw(mt_app *a);

#endif
