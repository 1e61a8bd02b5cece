/* panel.h -- one screen of the viewer, in the manner of htop's Panels: it
 * draws itself into the body area and handles the keys it knows.  The
 * screen manager (screen_manager.c) owns the stack of panels, the header
 * above them and the function bar below. */
#ifndef MEMTOP_PANEL_H
#define MEMTOP_PANEL_H

#include <stdbool.h>

struct mt_app;

typedef enum mt_key_result {
    MT_KEY_UNHANDLED, /* let the screen manager try its global keys */
    MT_KEY_HANDLED,
    MT_KEY_CLOSE, /* pop this panel */
} mt_key_result;

typedef struct mt_fkey {
    const char *key, *label; /* "F1", "Help" */
} mt_fkey;

typedef struct mt_panel {
    const char *name;
    bool show_header; /* the process header above the body */
    /* Draw into rows [y, y + h) of the screen, all columns. */
    void (*draw)(struct mt_app *a, int y, int h);
    mt_key_result (*key)(struct mt_app *a, int ch);
    const mt_fkey *fkeys; /* the function bar, NULL-key terminated; NULL: the F keys
                             of the key table (keymap.c) */
} mt_panel;

/* The panels (each in its own file). */
extern const mt_panel mt_table_panel;
extern const mt_panel mt_detail_panel;
extern const mt_panel mt_help_panel;
extern const mt_panel mt_sort_panel;
extern const mt_panel mt_picker_panel;

#endif
