/* keymap_dump.c -- prints the viewer's key table (src/tui/screen/keymap.c)
 * for check_keys_man.py: one "key NAME" line per key a binding binds and
 * one "shown TEXT" line per key column of the help page. */
#include <stdio.h>

#include "keymap.h"

int main(void)
{
    size_t n;
    const mt_binding *b = mt_bindings(&n);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < MT_BINDING_KEYS && b[i].keys[k]; k++) {
            char buf[16];
            printf("key %s\n", mt_key_name(b[i].keys[k], buf, sizeof buf));
        }
        if (b[i].shown)
            printf("shown %s\n", b[i].shown);
    }
    return 0;
}
