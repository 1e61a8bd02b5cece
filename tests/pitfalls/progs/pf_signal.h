/* pf_signal.h -- the handler set-up that the pitfall programs driven by
 * timer signals share (pf_signals, pf_sigcount).
 *
 * SIGALRM and SIGPROF block each other while a handler runs, so that one
 * handler never interrupts the other and each program's handler state
 * needs no more care than one signal's.  Both programs block the two
 * around what must not be interrupted (pf_block_timer_signals).
 */
#ifndef PF_SIGNAL_H
#define PF_SIGNAL_H

#include "pf_check.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static inline void pf_install_timer_handler(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGALRM);
    sigaddset(&sa.sa_mask, SIGPROF);
    PF_CHECK(sigaction(sig, &sa, NULL) == 0, "sigaction");
}

/* Blocks (block != 0) or unblocks SIGALRM and SIGPROF on the calling
 * thread. */
static inline void pf_block_timer_signals(int block)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigaddset(&s, SIGPROF);
    PF_CHECK(pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &s, NULL) == 0, "sigmask");
}

#endif
