/* pf_dl_mod.c -- module for pitfall 6.  Its constructor keeps a 1553-byte
 * block that its destructor frees; dlmod_work allocates and frees 1531-byte
 * blocks; dlmod_keep hands out a 1543-byte block the caller frees. */
#include "pf_check.h"

#include <string.h>

static char *g_ctor_block;

__attribute__((constructor)) static void mod_ctor(void)
{
    g_ctor_block = malloc(1553);
}

__attribute__((destructor)) static void mod_dtor(void)
{
    free(g_ctor_block);
}

int dlmod_work(int n)
{
    int done = 0;
    for (int i = 0; i < n; i++) {
        char *p = pf_escape(malloc(1531));
        if (!p)
            break;
        memset(p, i, 1531);
        done += p[1530] == (char)i;
        free(p);
    }
    return g_ctor_block ? done : -1;
}

char *dlmod_keep(void)
{
    char *p = malloc(1543);
    if (p)
        strcpy(p, "from the module");
    return p;
}
