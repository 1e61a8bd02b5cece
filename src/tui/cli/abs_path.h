/* abs_path.h -- a file name made absolute against memtop's working
 * directory, for files that another process (the target) creates. */
#ifndef MEMTOP_ABS_PATH_H
#define MEMTOP_ABS_PATH_H

#include <stddef.h>

/* 0, or -1 if the working directory is unknown or out is too small. */
int mt_abs_path(const char *in, char *out, size_t n);

#endif
