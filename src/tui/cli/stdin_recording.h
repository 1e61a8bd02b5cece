/* stdin_recording.h -- `memtop -f -`: standard input's recording read in
 * before any command opens it (dat_stdin.h), with the user told how far
 * it got, and the terminal given back to the viewer's keys. */
#ifndef MEMTOP_STDIN_RECORDING_H
#define MEMTOP_STDIN_RECORDING_H

#include <stdbool.h>

/* Read standard input's recording to its end: once a second, the bytes
 * so far on standard error (if a terminal); Ctrl-C stops waiting for more
 * and opens what arrived.  viewer: the interactive viewer will run, so
 * standard input becomes the terminal (/dev/tty) afterwards.  0, or an
 * exit status after a one-line error. */
int mt_stdin_recording(bool viewer);

#endif
