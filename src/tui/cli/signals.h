/* signals.h -- waiting for signals synchronously.  memtop blocks the
 * signals it cares about and collects them with sigtimedwait, which doubles
 * as the sleep between reports: no handlers, no global state. */
#ifndef MEMTOP_SIGNALS_H
#define MEMTOP_SIGNALS_H

#include <signal.h>

/* Block SIGINT, SIGTERM, SIGHUP (and SIGCHLD if with_child) into *set; the
 * previous mask goes to *old. */
void mt_sig_block(sigset_t *set, sigset_t *old, int with_child);

void mt_sig_restore(const sigset_t *old);

/* Wait up to secs for a signal of set: its number (info filled), or 0. */
int mt_sig_wait(const sigset_t *set, double secs, siginfo_t *info);

/* Seconds on the monotonic clock (the clock mt_sig_wait counts on). */
double mt_now_s(void);

#endif
