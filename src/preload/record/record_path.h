/* record_path.h -- recording file names: MEMTOP_RECORD patterns (their
 * grammar: record_pattern.h) and creating the file safely. */
#ifndef MT_RECORD_PATH_H
#define MT_RECORD_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* True if the pattern names a distinct file per process (%p or %n). */
bool mt_rec_pattern_per_process(const char *pattern);

/* Creates the recording file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600): with
 * %n the smallest counter whose file does not exist yet.  fork_child: the
 * name gets ".fork" before the extension of its last component
 * (rec.123.dat -> rec.123.fork.dat), so that the file the same pid's next
 * image (after exec) names is still free.  Returns the descriptor, or
 * -errno (-EINVAL: bad pattern); path gets the name. */
int mt_rec_create(const char *pattern, bool fork_child, char *path, size_t cap);

#endif
