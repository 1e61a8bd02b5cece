/* term.h -- taking the terminal over and giving it back.  The terminal is
 * restored on every way out: quit, Ctrl-C, SIGTERM, SIGHUP (handled by the
 * screen manager), and a crash (a last-resort handler that restores the
 * saved tty modes and leaves the alternate screen before dying). */
#ifndef MEMTOP_TERM_H
#define MEMTOP_TERM_H

#include <stdbool.h>

/* initscr and friends; false (with a message) if stdin/stdout is not a
 * terminal or the terminal type is unknown. */
bool mt_term_start(char *msg, size_t n);
void mt_term_stop(void);

#endif
