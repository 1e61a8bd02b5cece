/* shm_owner.h -- whose segment is it?  Anyone may create a file named
 * memtop-<pid> in a shared directory, so a name proves nothing: a segment
 * stands for a process only when the file's owner is that process's user
 * or root (docs/shm-protocol.md, "Naming and trust").  Used by everything
 * that finds a segment by pid: --list, -p, the viewer, launch mode. */
#ifndef MEMTOP_SHM_OWNER_H
#define MEMTOP_SHM_OWNER_H

#include <stddef.h>
#include <sys/types.h>

#include "shm_segment.h"

/* How well a file owned by `owner` may stand for a pid, best last. */
typedef enum mt_owner_rank {
    MT_OWNER_FOREIGN, /* not trusted */
    MT_OWNER_ROOT,    /* root's file (a root process that changed its uid) */
    MT_OWNER_MATCH,   /* the process's user (its effective uid); the
                       * viewer itself when the process is gone */
} mt_owner_rank;

/* The real and effective uid of pid (/proc/<pid>/status); -1 when they
 * cannot be read (no such process). */
int mt_proc_uids(int pid, uid_t *ruid, uid_t *euid);

mt_owner_rank mt_owner_rank_for(uid_t owner, int pid);

/* MT_OK if the opened seg may stand for pid: its file's owner (fstat at
 * open) is trusted for pid (its user as we see it) and its header names pid
 * or pid's own pid in its PID namespace (mt_proc_nspid).  Else MT_E_UNTRUSTED
 * ("foreign owner: ...") or MT_E_CORRUPT (another pid in the header). */
mt_errc mt_segment_check_owner(const mt_segment *seg, int pid, mt_err *err);

/* The file that holds pid's segment in dir, into path: of memtop-<pid> and
 * memtop-<pid>-<suffix>, the regular file with the best owner rank (the
 * exact name first, then the newest); the exact name when there is none,
 * so that errors name it.  When pid maps a segment of its own that is not
 * that file (a private /dev/shm, as in a container: mt_maps_segment), the
 * path to it through /proc/<pid>/root instead.  -1 if the path does not
 * fit.  The choice is
 * only a lookup: whoever opens the file checks its owner again on the
 * descriptor (mt_segment_check_owner). */
int mt_shm_locate(const char *dir, int pid, char *path, size_t n);

/* Removes path only if it is (lstat) a regular file or a symbolic link
 * owned by the caller's euid: never another user's file, never what a link
 * points to.  0 when removed or absent, else -1 with errno set. */
int mt_shm_unlink_own(const char *path);

/* mt_shm_unlink_own on pid's segment in dir (the choice of mt_shm_locate
 * in dir only): what a
 * launching memtop removes once its child has ended. */
int mt_shm_unlink_pid(const char *dir, int pid);

#endif
