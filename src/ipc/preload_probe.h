/* preload_probe.h -- does a process run libmemtop.so, and when it has no
 * segment, why not?  A target that cannot create its segment (a full or
 * read-only /dev/shm, no descriptor left) keeps the reason in its own
 * memory (preload_status.h); this reads it from outside, through
 * /proc/<pid>/maps and /proc/<pid>/mem, for -p, --batch, --list and the
 * picker.  Every byte read is untrusted. */
#ifndef MEMTOP_PRELOAD_PROBE_H
#define MEMTOP_PRELOAD_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "preload_status.h" /* MT_STATUS_PATH_MAX */

typedef enum mt_preload_state {
    MT_PRELOAD_ABSENT,  /* pid does not map libmemtop.so (or its maps cannot be read) */
    MT_PRELOAD_PENDING, /* it does and recorded no failure: its segment is yet to come */
    MT_PRELOAD_UNKNOWN, /* it does, but its record cannot be read: why says why */
    MT_PRELOAD_FAILED,  /* it could not create its segment: why says why */
} mt_preload_state;

/* What pid's libmemtop.so says about its segment; why (n bytes, printable
 * characters only) is set for MT_PRELOAD_UNKNOWN and MT_PRELOAD_FAILED,
 * e.g. "the target cannot create its segment: No space left on device
 * (/dev/shm/memtop-1)": the reason first, the path last (a narrow picker
 * cuts it), and for MT_PRELOAD_FAILED path (pn bytes; may be NULL)
 * to the file it failed on, as the target names it (in its own mount
 * namespace; "" if none). */
mt_preload_state mt_preload_probe(int pid, char *why, size_t n, char *path, size_t pn);

/* The state a record read from a process whose own pid (in its PID
 * namespace) is nspid gives, why and path as above.  The record is
 * untrusted: every field is checked, the strings cut and made printable. */
mt_preload_state mt_preload_judge(const mt_status_record *rec, int nspid, char *why, size_t n,
                                  char *path, size_t pn);

/* Whether mountinfo text f (/proc/<pid>/mountinfo) puts device dev on a
 * FUSE file system ("fuse", "fuse.*", "fuseblk").  A page of such a file
 * not yet in memory is read from the FUSE server, which may be a hostile
 * user's and never answer: the probe reads no mapping of one.  A device
 * the text does not list (a btrfs subvolume's) is not FUSE. */
bool mt_mountinfo_dev_is_fuse(FILE *f, dev_t dev);

#endif
