/* reader_exercise.h -- drive the whole reader over one segment file and
 * check that whatever it accepts is internally consistent.  Shared by the
 * mutation test and the libFuzzer harness. */
#ifndef MEMTOP_READER_EXERCISE_H
#define MEMTOP_READER_EXERCISE_H

#include "memtop_ipc.h"

/* Open fd (taken over) or path, read snapshot, definitions and modules,
 * resolve every frame.  Returns the first error, or MT_OK.  Aborts if an
 * accepted result breaks an invariant. */
mt_errc mt_exercise_reader(int fd, const char *path);

#endif
