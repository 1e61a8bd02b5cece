/* pf_slow_fini.c -- a library whose destructor takes 400 ms, for
 * pf_exit_exec.c: the window after libmemtop.so's own destructor in which
 * the process is still exiting. */
#include <unistd.h>

__attribute__((destructor)) static void slow_fini(void)
{
    usleep(400000);
}

/* Called by pf_exit_exec so that the link keeps this library. */
void pf_slow_fini_linked(void) {}
