/* proc_file.h -- other names of a module file, through the process that
 * maps it.
 *
 * The path a target published names its file as the target saw it when it
 * loaded it: the file may since have been deleted or replaced (an upgrade),
 * or live in another mount namespace (a container), where the viewer's
 * path names nothing or another file.  The running process still reaches
 * it: /proc/PID/root<path> resolves the path in the target's own root, and
 * /proc/PID/map_files/<start>-<end> is the file the target maps at that
 * range, whatever became of its name (opening it needs CAP_SYS_ADMIN, as
 * root).  Either may name another file by now (the pid reused, the
 * container's file replaced too), so the caller takes a file only when its
 * build-id is the one the target published. */
#ifndef MEMTOP_PROC_FILE_H
#define MEMTOP_PROC_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define MT_PROC_ALT_MAX 2

/* The other names of the module at path, mapped by pid over [start, end)
 * (the range it published), best first: /proc/PID/root<path> (a path
 * without " (deleted)") and the map_files entry of the first file mapping
 * of pid that overlaps the range.  How many (0 when pid <= 0 or path is
 * not absolute). */
int mt_proc_module_alts(int pid, const char *path, uint64_t start, uint64_t end,
                        char out[MT_PROC_ALT_MAX][PATH_MAX]);

/* "/proc/PID/root" into out (the target's root, for its debug files) when
 * the target has another root or another mount namespace than the viewer;
 * else (or when that cannot be read) "" and false. */
bool mt_proc_root(int pid, char *out, unsigned n);

#endif
