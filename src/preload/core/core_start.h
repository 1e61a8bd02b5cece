/* core_start.h -- starting memtop's threads (the publisher, then the
 * recording's writer) exactly once per process (core_start.c). */
#ifndef MT_CORE_START_H
#define MT_CORE_START_H

#include <stdbool.h>

/* After tracking is ready (mt_g.state == MT_ST_READY), from the
 * initialiser or our constructor, whichever sees the other done (both may):
 * the first call reloads the settings from envp if reload_config (they
 * were read before libc had set up environ; MEMTOP_DISABLE then turns
 * tracking off and starts nothing), starts the publisher and the
 * recording's writer thread (mt_rec_ctor); later calls do nothing. */
void mt_start_threads(char **envp, bool reload_config);
/* The same in a fork child, at its first hook, after mt_start_child_reset
 * (atfork): the publisher of the child, and its recording if the
 * MEMTOP_RECORD pattern is per process. */
void mt_start_child_threads(void);
void mt_start_child_reset(void);

#endif
