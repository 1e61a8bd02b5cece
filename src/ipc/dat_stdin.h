/* dat_stdin.h -- a recording read from standard input (`memtop -f -`).
 *
 * Why: the reader seeks (the frame scan at open, the timeline's restarts
 * from checkpoints), and a pipe cannot.  Standard input is therefore read
 * once, to its end, into a file that is already unlinked (O_TMPFILE in
 * $TMPDIR or /tmp, else mkstemp and unlink; 0600 either way, so nothing is
 * left behind and nobody else can read it), and the path "-" opens that
 * file (mt_dat_open).  A standard input that is already a regular file
 * (`< f.dat`) is used as it is.  A stream cut short (the writer killed,
 * or the copy stopped) reads as a file still being written does: up to
 * its last complete frame. */
#ifndef MEMTOP_DAT_STDIN_H
#define MEMTOP_DAT_STDIN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "shm_error.h"

/* The name mt_dat_open gives standard input, and what to call a path in
 * messages: "standard input" for "-", else path. */
#define MT_DAT_STDIN_NAME "standard input"
bool mt_dat_path_is_stdin(const char *path);
const char *mt_dat_path_name(const char *path);

/* The bytes of the recording at path, as stat(2) says: for "-", of
 * standard input's copy (not of a file named "-"); -1 when not known
 * (no copy made yet, or stat failed). */
int64_t mt_dat_path_bytes(const char *path);

/* Called about once a second while a stream is copied: bytes so far. */
typedef void (*mt_dat_spool_fn)(uint64_t bytes, void *ctx);

/* Read standard input to its end into the file "-" then opens.  *stop
 * (may be NULL) set to 1 (by a signal handler) stops waiting for more:
 * what keeps arriving, each part within half a second of the one before,
 * is still taken (the writer finalizing on the same Ctrl-C), then the
 * copy ends there; 2 or more ends it at once.  An error
 * when standard input is a terminal or cannot be read, when its first
 * bytes are not a recording's magic (at once, not after the copy), or the
 * temporary file cannot be made or written (the disk full).  Once per process; a
 * second call does nothing. */
mt_errc mt_dat_stdin_spool(const volatile sig_atomic_t *stop, mt_dat_spool_fn fn, void *ctx,
                           mt_err *err);

/* A new descriptor (close-on-exec) of the file that holds standard
 * input's recording, spooling it first (without progress) if need be;
 * -1 with err set if that fails or nothing arrived. */
int mt_dat_stdin_fd(mt_err *err);

#endif
