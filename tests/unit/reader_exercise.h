/* reader_exercise.h -- drive the whole reader over one segment file and
 * check that whatever it accepts is internally consistent.  Shared by the
 * mutation test and the libFuzzer harness. */
#ifndef MEMTOP_READER_EXERCISE_H
#define MEMTOP_READER_EXERCISE_H

#include "memtop_ipc.h"

/* Open fd (taken over) or path, read snapshot, definitions, modules and
 * the recording status, resolve every frame, send a control command.
 * Returns the first read error, or MT_OK.  Aborts if an accepted result
 * breaks an invariant. */
mt_errc mt_exercise_reader(int fd, const char *path);

/* The same, but the file shrinks to shrink_to bytes right after it was
 * opened and mapped (its owner truncating it under the reader): every read
 * must fail cleanly (MT_E_TRUNCATED) or stay consistent, never fault. */
mt_errc mt_exercise_shrunk(int fd, const char *path, uint64_t shrink_to);

#endif
