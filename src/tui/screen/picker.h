/* picker.h -- the state behind the process picker (picker_panel.c). */
#ifndef MEMTOP_PICKER_H
#define MEMTOP_PICKER_H

#include "panel.h"
#include "proc_list.h"

struct mt_app;

typedef struct mt_picker {
    const char *dir;
    mt_proc_list list; /* the panel (its sel and first) picks from it */
    double next_scan;  /* monotonic seconds */
} mt_picker;

/* Re-read the list when due, keeping view's selection on its process;
 * true when it changed. */
bool mt_picker_scan(mt_picker *p, mt_panel *view, double now);
/* Keep view's selection inside the list and on its visible rows. */
void mt_picker_clamp(const mt_picker *p, mt_panel *view, int visible);
/* Attach to the selected process and show its table, or say why not. */
void mt_picker_choose(struct mt_app *a);
void mt_picker_free(mt_picker *p);

#endif
