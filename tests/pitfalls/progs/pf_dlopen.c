/* pf_dlopen.c -- pitfall 6: dlopen/dlclose cycles of a module that
 * allocates (pf_dl_mod.c).
 *
 * 100 cycles of dlopen, calls into the module (it allocates 1531-byte
 * blocks in a loop and hands out one 1543-byte block), dlclose, then free
 * of the handed-out block after the module is gone.  Then once more after
 * the re-open.  The module really unloads each time (RTLD_NOLOAD check).
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <string.h>

enum { CYCLES = 100, WORK = 10 };

static void cycle(void)
{
    void *h = dlopen(DLMOD_PATH, RTLD_NOW | RTLD_LOCAL);
    PF_CHECK(h != NULL, "dlopen: %s", dlerror());
    int (*work)(int) = (int (*)(int))dlsym(h, "dlmod_work");
    char *(*keep)(void) = (char *(*)(void))dlsym(h, "dlmod_keep");
    PF_CHECK(work && keep, "dlsym failed");
    PF_CHECK(work(WORK) == WORK, "dlmod_work");
    char *k = keep();
    PF_CHECK(k && strcmp(k, "from the module") == 0, "dlmod_keep");
    PF_CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    PF_CHECK(dlopen(DLMOD_PATH, RTLD_NOW | RTLD_NOLOAD) == NULL, "module did not unload");
    free(k);
}

int main(void)
{
    for (int i = 0; i < CYCLES; i++)
        cycle();
    cycle(); /* call into it again after the re-open */
    printf("dlopen cycles=%d work=%d ok\n", CYCLES + 1, WORK);
    return 0;
}
