/* keymap.h -- every key of the main screen in one table (keymap.c), from
 * which the key dispatch, the function bar and the help page (`?`) are
 * made, as htop does with its key bindings.  tests/structure/check_keys_man.py
 * holds the table against the man page's INTERACTIVE COMMANDS, and the help's
 * key column (shown) against the keys it binds.
 *
 * Keys of the table panel (or of the call tree's) are tried first, then (also from the other
 * panels, for the keys they leave) the global ones.  The small panels'
 * own keys (Esc closes, arrows scroll) are theirs and not listed here. */
#ifndef MEMTOP_KEYMAP_H
#define MEMTOP_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "panel.h"

struct mt_app;

typedef enum mt_key_scope {
    MT_KEYS_TABLE,  /* the main table only */
    MT_KEYS_TREE,   /* the call tree view only */
    MT_KEYS_GLOBAL, /* any panel that does not take the key itself */
} mt_key_scope;

#define MT_BINDING_KEYS 4

typedef struct mt_binding {
    mt_key_scope scope;
    int keys[MT_BINDING_KEYS]; /* curses codes; 0 ends the list early */
    const char *bar;           /* the function bar's label of its F key, or NULL */
    const char *shown;         /* the help's key column ("Up/Down, j/k"), or NULL: the
                                  binding is on the help line of one above it */
    const char *help;          /* the help's text for shown */
    /* The action; false when it does not apply now (e.g. needs -f), so the
     * key goes on to the next handler. */
    bool (*run)(struct mt_app *a, double arg);
    double arg;
} mt_binding;

/* The table, and its length. */
const mt_binding *mt_bindings(size_t *n);

/* Run the binding of ch in scope. */
mt_key_result mt_keys_dispatch(struct mt_app *a, mt_key_scope scope, int ch);

/* The name of a key as the help and the man page write it ("F6", "PgUp",
 * "Ctrl-L", "s"), in buf. */
const char *mt_key_name(int ch, char *buf, size_t n);

/* The function bar's label of F<n> (1-12), or NULL if no binding has one
 * (record's F8 none unless can_record: a replay cannot record). */
const char *mt_keys_fkey_label(int n, bool can_record);

#endif
