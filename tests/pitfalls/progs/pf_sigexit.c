/* pf_sigexit.c -- a SIGALRM handler calls _exit(7) while the main thread
 * churns malloc/free.  The signal usually lands inside an allocation hook
 * (or the real malloc it calls); memtop must not try to publish from there
 * (it would wait for a lock the interrupted code holds).  Without memtop,
 * the process always exits 7. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
    _exit(7);
}

int main(int argc, char **argv)
{
    long usec = argc > 1 ? atol(argv[1]) : 3000;
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 0}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
    void *keep[256] = {0};
    for (unsigned i = 0;; i++) {
        unsigned k = (i * 2654435761u) >> 24;
        free(keep[k]);
        keep[k] = malloc(16 + (i & 1023));
    }
}
