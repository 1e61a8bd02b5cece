/* pf_exit_exec.c -- the process exits while another thread's exec fails.
 *
 * main allocates, starts a thread and calls exit at 20 ms, within memtop's
 * MEMTOP_START_MS (the publisher is still in its first wait, so exit holds
 * it instead of joining it).  The exit then waits in a linked library's
 * destructor (pf_slow_fini.c, 400 ms), which runs after libmemtop.so's.
 * Meanwhile, at 60 ms, the thread's exec of a path that does not exist
 * fails: memtop lets a publisher held for an exec go again.  It must not
 * let go the one exit held, or that one creates a segment that nothing
 * removes (pf_exit_exec.py).  Exits 0.
 */
#include "pf_check.h"

#include <pthread.h>

void pf_slow_fini_linked(void);

static void *exec_late(void *arg)
{
    (void)arg;
    usleep(60000);
    char *argv[] = {"pf_exit_exec_none", NULL};
    execv("/nonexistent/pf_exit_exec", argv);
    pause(); /* until exit ends the process */
    return NULL;
}

int main(void)
{
    pf_slow_fini_linked();
    free(pf_escape(malloc(10)));
    pthread_t t;
    PF_CHECK(pthread_create(&t, NULL, exec_late, NULL) == 0, "pthread_create");
    usleep(20000);
    exit(0);
}
