/* debug_find.h -- the separate debug file of a module, looked for where
 * elfutils looks, by memtop itself: for modules whose directories another
 * user can change (libdwfl's own search opens what it finds with a
 * blocking open and maps it in place) and for modules of another mount
 * namespace, whose debug files are under the target's root
 * (/proc/PID/root/usr/lib/debug/...), which libdwfl does not know. */
#ifndef MEMTOP_DEBUG_FIND_H
#define MEMTOP_DEBUG_FIND_H

#include <elfutils/libdwfl.h>

/* A descriptor of the debug file of mod (build-id id), or -1 (*found gets
 * its path, malloc'd).  root: "" or the target's root ("/proc/PID/root"),
 * searched after the viewer's own /usr/lib/debug.  Candidates, in
 * elfutils' order: <R>/usr/lib/debug/.build-id/xx/yyyy.debug for R = ""
 * then root, then for a debuglink: itself when absolute, else next to
 * file_name, in its .debug/, and under <R>/usr/lib/debug<dir>.  Each is
 * opened through safe_file.c (a regular file; a sealed copy if another
 * user can change it) and taken only when its build-id is id. */
int mt_debug_find(const char *root, const unsigned char *id, int len, const char *file_name,
                  const char *debuglink, char **found);

/* fd itself, or a sealed copy of it (safe_file.c), when it is a regular
 * file whose build-id is want; else -1.  fd is consumed. */
int mt_debug_check_fd(int fd, const unsigned char *want, int len);

#endif
