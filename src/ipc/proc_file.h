/* proc_file.h -- reading one small file of /proc/<pid>/ whole.
 *
 * The viewer asks /proc about a target in several places (its uids for
 * trust, its namespaced pid, its start time for liveness): one reader, so
 * that each caller only parses. */
#ifndef MEMTOP_PROC_FILE_H
#define MEMTOP_PROC_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Reads /proc/<pid>/<name> into buf (NUL-terminated, at most cap - 1
 * bytes: the start of a longer file); its length, or -1 when pid is not
 * positive, the file cannot be read or is empty. */
ssize_t mt_proc_read(int pid, const char *name, char *buf, size_t cap);

#endif
