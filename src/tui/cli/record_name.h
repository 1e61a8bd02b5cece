/* record_name.h -- a recording's file name as memtop hands it to the
 * target (memtop --record FILE, with PROG or -p PID), which creates the
 * file: made absolute against memtop's working directory, and checked
 * before the target sees it.
 *
 * Why: the target reads the name as a pattern (record_pattern.h) and
 * says what is wrong with it in one line among the program's output,
 * while the program runs unrecorded; memtop says it up front and exits
 * non-zero instead. */
#ifndef MEMTOP_RECORD_NAME_H
#define MEMTOP_RECORD_NAME_H

#include <stddef.h>

/* `in` made absolute into out[n], a '%' of the working directory written
 * "%%" (the target expands the result): 0, or -1 if the working directory
 * is unknown or out is too small. */
int mt_record_name_abs(const char *in, char *out, size_t n);

/* A name the target would refuse whatever the moment: `given` (what the
 * user typed) with a % sequence outside the grammar, or `pattern` (given
 * made absolute) too long for the target's buffer once %p, %e (exe: the
 * executable's base name, "" when not known), %t and %n are at their
 * longest.  -1 after a one-line error naming `opt`; else 0. */
int mt_record_name_check(const char *opt, const char *given, const char *pattern, const char *exe);

/* For a program about to start: an existing file (a name without %p, %t,
 * %n or %e: the target never overwrites one) or a directory that is
 * missing or not writable by memtop's effective user.  -1 after a
 * one-line error; else 0. */
int mt_record_name_usable(const char *pattern);

#endif
