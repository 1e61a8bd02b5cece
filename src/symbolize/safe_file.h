/* safe_file.h -- opening the files the symbolizer reads so that their
 * owner cannot hurt the viewer.
 *
 * The module paths come from a target's segment, written by a user the
 * viewer (often root) does not trust, and so do the files: the target's
 * own executable and libraries, a debug file next to them.  libelf maps
 * the files it reads; if their owner truncates one while libdw reads it,
 * the viewer dies of SIGBUS.  And a path can name a FIFO (open blocks) or
 * a device (open has side effects: /dev/watchdog).
 *
 * So: a path is opened O_PATH first and reopened for reading (through
 * /proc/self/fd) only when fstat shows a regular file, O_NONBLOCK.  A path
 * under a target's root (/proc/PID/root/..., a container's files) is
 * resolved inside that root (openat2 RESOLVE_IN_ROOT; without openat2 no
 * link on it is followed, src/ipc/proc_root.h), so a symlink the target's
 * user planted there cannot name the viewer's own files.  A file
 * that only root or the viewer can change is used as it is (the fast path:
 * /usr/lib, the viewer's own builds).  Any other file is copied into a
 * memfd sealed against every change (F_SEAL_SHRINK|GROW|WRITE|SEAL), and
 * libdw is given the copy: what it maps can no longer shrink.  The copy is
 * bounded (MT_COPY_LIMIT); a larger file is not symbolized.  See
 * docs/security.md "Symbolizing another user's files". */
#ifndef MEMTOP_SAFE_FILE_H
#define MEMTOP_SAFE_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* The largest file copied before it is given to libdw: 512 MiB. */
#define MT_COPY_LIMIT (512ull << 20)

/* Whether a file or directory with these attributes can be changed only by
 * root or by the viewer (euid, egid): owned by root or euid, not writable
 * by others, and group-writable only for group root or egid. */
bool mt_stat_trusted(const struct stat *st, uid_t euid, gid_t egid);

/* Whether path (canonical: no symlink, no "..") is reached only through
 * directories that mt_stat_trusted accepts, so nobody else can change
 * what the path, its directory or a name next to it resolves to. */
bool mt_path_trusted(const char *canon);

/* path opened for reading without blocking, without opening anything but
 * a regular file (*st is its fstat); "/proc/PID/root/REST": REST resolved
 * in that root; -1 with *why: "file deleted" (gone,
 * unreadable) or "no file (JIT/vdso)" (not a regular file). */
int mt_open_regular(const char *path, struct stat *st, const char **why);

/* A descriptor of fd's content that nobody else can change: fd itself
 * when mt_stat_trusted (and not on FUSE, whose server can fail any read),
 * otherwise a sealed memfd copy (fd is closed).  -1 with *why ("file too
 * large to copy safely" above limit bytes, "file changed" when the file
 * shrank or grew while copied, "out of memory"); fd is closed then. */
int mt_stable_fd(int fd, const struct stat *st, uint64_t limit, const char **why);

/* Always the sealed copy (same errors): for a file reached through another
 * process (/proc/PID/root, /proc/PID/map_files), whose owner as the viewer
 * sees it says nothing about who can change it (a container's root without
 * a user namespace owns its files as uid 0). */
int mt_copy_fd(int fd, const struct stat *st, uint64_t limit, const char **why);

#endif
