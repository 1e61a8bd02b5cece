/* shm_segment.h -- an opened, validated segment.
 *
 * Opening maps the whole file and validates its header once; the region
 * layout and the process identity are then copied into private memory so
 * that nothing the target writes later can move a region under the reader.
 * Live fields (flags, *_used, *_count, slot sequence words) are re-read and
 * re-validated wherever they are used.  The owner can also shrink the file
 * at any time: every access to the mapping goes through shm_guard.h. */
#ifndef MEMTOP_SHM_SEGMENT_H
#define MEMTOP_SHM_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm_error.h"
#include "shm_layout.h"

/* Region bounds, validated: every region lies inside [header_bytes, size). */
typedef struct mt_layout {
    uint64_t size; /* bytes the reader may touch (segment_bytes) */
    uint64_t defs_off, defs_cap;
    uint64_t modules_off, modules_cap;
    uint64_t slot_off[MT_SLOTS], slot_cap[MT_SLOTS];
} mt_layout;

/* Fixed facts about the target, copied out of the header at open. */
typedef struct mt_identity {
    int32_t pid, ppid;
    uint32_t uid;
    uint64_t proc_start_ticks;
    uint64_t start_unix_ns;
    uint32_t max_depth;
    uint32_t publish_interval_ms;
    uint64_t temporary_ns;
    uint64_t sample_rate_bytes; /* 0: exact; else mean bytes between samples */
    char exe[MT_PATH_MAX];
    char cmdline[MT_CMDLINE_MAX];
} mt_identity;

typedef struct mt_segment {
    int fd;
    unsigned char *base; /* the mapping (read-only unless writable) */
    uint64_t map_bytes;  /* file size at open = mapped bytes */
    bool writable;
    dev_t dev;
    ino_t ino;
    uid_t owner;  /* the file's owner (fstat at open) */
    int host_pid; /* the process as we see it (0: not known; id.pid is its
                   * pid in its own PID namespace) */
    char path[4096];
    mt_layout lay;
    mt_identity id;
} mt_segment;

/* Check a header at base (a mapping of file_bytes bytes) and fill lay and
 * id.  Reads nothing at or beyond file_bytes. */
mt_errc mt_validate_header(const unsigned char *base, uint64_t file_bytes, mt_layout *lay,
                           mt_identity *id, mt_err *err);

/* Open the segment at path: O_RDWR, else O_RDONLY, never following a link
 * or blocking on a FIFO; refuse anything but a regular file, and other
 * users' segments unless root; map and validate.  Says nothing about which
 * process the file stands for: see mt_segment_check_owner. */
mt_errc mt_segment_open_path(mt_segment *seg, const char *path, mt_err *err);

/* Open the segment at path (pid's, as mt_shm_locate found it) and check
 * that it stands for pid (mt_segment_check_owner); a file memtop may not
 * read whose owner is not pid's user or root is MT_E_UNTRUSTED (planted),
 * not MT_E_PERM. */
mt_errc mt_segment_open_for(mt_segment *seg, const char *path, int pid, mt_err *err);

/* mt_segment_open_for of pid's segment in dir (mt_shm_locate). */
mt_errc mt_segment_open_pid(mt_segment *seg, const char *dir, int pid, mt_err *err);

/* Same as open_path on an open descriptor, which seg takes over (closed on
 * failure too).  label names it in seg->path. */
mt_errc mt_segment_open_fd(mt_segment *seg, int fd, bool writable, const char *label, mt_err *err);

void mt_segment_close(mt_segment *seg);

/* The mapped header: dereference it only through shm_guard.h. */
static inline const mt_shm_header *mt_segment_header(const mt_segment *seg)
{
    return (const mt_shm_header *)seg->base;
}

/* The target's pid as we see it: the pid it was attached by, else the
 * header's (its own pid in its PID namespace). */
static inline int mt_segment_pid(const mt_segment *seg)
{
    return seg->host_pid > 0 ? seg->host_pid : (int)seg->id.pid;
}

/* Header flags (acquire); 0 if the file shrank under the load (every read
 * that returns an error then says MT_E_TRUNCATED). */
uint32_t mt_segment_flags(const mt_segment *seg);

/* True if the target failed to grow its file (a full /dev/shm), with the
 * reason ("the target cannot grow its segment: No space left on device")
 * in why. */
bool mt_segment_grow_error(const mt_segment *seg, char *why, size_t n);

/* True if seg->path now names another file than the mapped one (the target
 * exec'd and replaced its segment).  A missing file is not "replaced". */
bool mt_segment_replaced(const mt_segment *seg);

/* MT_E_TRUNCATED if the file shrank below the validated size since open. */
mt_errc mt_segment_check_size(const mt_segment *seg, mt_err *err);

/* The memory the segment file holds now: its allocated blocks (fstat's
 * st_blocks), not its size.  The target sizes the file sparse (about
 * 1 GiB) and commits what it writes (publish_shm.c), so this is what the
 * segment costs the machine: on /dev/shm, RAM (the target's RssShmem is
 * the part it touched).  MT_UNKNOWN without an open file. */
uint64_t mt_segment_held_bytes(const mt_segment *seg);

#endif
