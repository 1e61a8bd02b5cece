/* pf_dlerror.c -- the program's pending dl error across memtop's own dl
 * calls.
 *
 * A failed dlopen leaves its error (a result object and a message, from
 * malloc) for the thread's next dlerror or dl call.  memtop's own dl
 * calls on the program's thread must neither free the program's message
 * (memtop would never see that free: a live block for ever) nor make the
 * error vanish.  Here fexecve is the first call of a function memtop binds
 * lazily (dlsym(RTLD_NEXT) inside memtop): dlerror after it must still
 * return the error (the output is compared with a plain run), and the
 * message's block is counted freed when the program's dlerror frees it
 * (pf_dlerror.py).  Before that, the program's own dlclose discards a
 * first error: its message is counted freed too (memtop's dlclose hook
 * runs first, with the error set aside).
 *
 * The two paths are long, so that their messages have sizes of their own:
 * strlen(path) + 1 + sizeof "cannot open shared object file" (glibc's
 * _dl_signal_error copies both into one block): 3001 and 3011 bytes.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <string.h>

extern char **environ;

#define MESSAGE_EXTRA 32 /* strlen("cannot open shared object file") + 2 */

/* A path of exactly len bytes, in components of at most 100 characters. */
static char *long_path(char *buf, size_t len, char c)
{
    size_t n = (size_t)snprintf(buf, len + 1, "/nonexistent-pf-dlerror");
    for (; n < len; n++)
        buf[n] = n % 101 == 0 ? '/' : c;
    buf[len] = '\0';
    return buf;
}

int main(void)
{
    static char p1[4096], p2[4096];
    long_path(p1, 3001 - MESSAGE_EXTRA, 'a');
    long_path(p2, 3011 - MESSAGE_EXTRA, 'b');
    void *self = dlopen(NULL, RTLD_NOW);
    PF_CHECK(self != NULL, "dlopen(NULL)");
    PF_CHECK(dlopen(p1, RTLD_NOW) == NULL, "dlopen of a path that does not exist");
    /* The program's own dlclose discards the pending error (frees the message). */
    PF_CHECK(dlclose(self) == 0, "dlclose");
    PF_CHECK(dlopen(p2, RTLD_NOW) == NULL, "dlopen of a path that does not exist");
    char *argv[] = {"pf_dlerror", NULL};
    PF_CHECK(fexecve(-1, argv, environ) == -1, "fexecve(-1)"); /* memtop binds fexecve */
    const char *e = dlerror();
    printf("pending error after fexecve: %s\n",
           e && strstr(e, "cannot open shared object file") ? "kept" : "lost");
    PF_CHECK(dlerror() == NULL, "a second dlerror"); /* frees what the first returned */
    return 0;
}
