/* errors.h -- how every layer of memtop reports a failure to the user: the
 * process exit codes and the one-line "memtop: ..." message on stderr.
 * Here, at the bottom, so that replay and the screen can print and return
 * them without depending on the commands (src/tui/cli) that call them. */
#ifndef MEMTOP_ERRORS_H
#define MEMTOP_ERRORS_H

enum {
    MT_EXIT_OK = 0,
    MT_EXIT_FAIL = 1,     /* runtime error: no segment, permission, corrupt, ... */
    MT_EXIT_USAGE = 2,    /* bad command line */
    MT_EXIT_INEXACT = 3,  /* --strict: the exported data is not exact */
    MT_EXIT_NOEXEC = 127, /* PROG could not be run */
};

/* "memtop: <message>\n" on stderr. */
void mt_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
