/* pf_dlrel.c -- a module dlopen'ed by a relative path ("./lib...so").
 *
 * The loader keeps the string given to dlopen as the module's name, here
 * relative to the working directory of that moment.  The program changes
 * into argv[1] (the module's directory), dlopens "./libmtp_dlmod.so",
 * changes back to "/" so that the name means nothing any more, and calls
 * into the module: dlmod_work allocates and frees 1531-byte blocks,
 * dlmod_keep hands out a 1543-byte block that stays live.  The module is
 * not closed.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <string.h>

enum { WORK = 10 };

int main(int argc, char **argv)
{
    PF_CHECK(argc == 2, "usage: pf_dlrel MODULE_DIR");
    PF_CHECK(chdir(argv[1]) == 0, "chdir %s", argv[1]);
    void *h = dlopen("./libmtp_dlmod.so", RTLD_NOW | RTLD_LOCAL);
    PF_CHECK(h != NULL, "dlopen: %s", dlerror());
    PF_CHECK(chdir("/") == 0, "chdir /");
    int (*work)(int) = (int (*)(int))dlsym(h, "dlmod_work");
    char *(*keep)(void) = (char *(*)(void))dlsym(h, "dlmod_keep");
    PF_CHECK(work && keep, "dlsym failed");
    PF_CHECK(work(WORK) == WORK, "dlmod_work");
    char *k = pf_escape(keep());
    PF_CHECK(k && strcmp(k, "from the module") == 0, "dlmod_keep");
    printf("relative dlopen work=%d ok\n", WORK);
    return 0;
}
