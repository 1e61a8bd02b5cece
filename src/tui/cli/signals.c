/* signals.c -- blocking and collecting signals (see signals.h). */
#include "signals.h"

#include <errno.h>
#include <time.h>

void mt_sig_block(sigset_t *set, sigset_t *old, int with_child)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    if (with_child)
        sigaddset(set, SIGCHLD);
    sigprocmask(SIG_BLOCK, set, old);
}

void mt_sig_restore(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

double mt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mt_sig_wait(const sigset_t *set, double secs, siginfo_t *info)
{
    double end = mt_now_s() + secs;
    for (;;) {
        double left = end - mt_now_s();
        if (left <= 0)
            return 0;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int sig = sigtimedwait(set, info, &ts);
        if (sig > 0)
            return sig;
        if (errno != EINTR)
            return 0;
    }
}
