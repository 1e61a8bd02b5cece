/* test_reader_exercise.h -- run a recording through the whole reader and
 * replay (open, seek to several times, fill views) and check that whatever
 * is accepted is consistent.  Shared by the mutation test and the
 * libFuzzer harness. */
#ifndef MEMTOP_TEST_READER_EXERCISE_H
#define MEMTOP_TEST_READER_EXERCISE_H

#include "shm_error.h"

/* The first error, or MT_OK.  Aborts if an accepted result breaks an
 * invariant. */
mt_errc mt_exercise_recording(const char *path, unsigned long seed);

#endif
