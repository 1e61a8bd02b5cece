/* shm_maps.h -- who maps a segment.  A file name says nothing about where
 * its process runs: in another PID namespace the header's pid is not ours,
 * and in another mount namespace the file is not in our /dev/shm at all.
 * /proc/<pid>/maps names every file a process maps, by device and inode,
 * so it answers both "is the process that made this segment alive?" and
 * "where is pid's segment?" (docs/shm-protocol.md, "Identity and
 * liveness").  Used by the liveness check, --clean, -p and --list. */
#ifndef MEMTOP_SHM_MAPS_H
#define MEMTOP_SHM_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One file mapping of a process, as /proc/<pid>/maps shows it; path is the
 * file's name in the process's own mount namespace. */
typedef struct mt_map_entry {
    uint64_t start, end;
    dev_t dev;
    ino_t ino;
    bool writable; /* mapped with write permission ("rw-p") */
    const char *path;
} mt_map_entry;

/* Calls fn for each file mapping of pid; stops at the first non-zero
 * return and returns it.  -1 if the maps cannot be read (gone, or another
 * user's process and we are not root). */
typedef int (*mt_map_visit)(int pid, const mt_map_entry *m, void *ctx);
int mt_maps_scan(int pid, mt_map_visit fn, void *ctx);

/* A live process other than memtop itself that maps the file dev:ino and,
 * if start_ticks is not 0, started at start_ticks (the segment's creator,
 * not a viewer): its pid as we see it, else 0.  Only the processes whose
 * maps we may read are looked at (all of them as root). */
int mt_maps_holder(dev_t dev, ino_t ino, uint64_t start_ticks);

/* The segment pid maps as its own: a mapping named memtop-<n> or
 * memtop-<n>-<hex>, n being pid's own pid in its PID namespace (a forked
 * child also maps its parent's segment, under the parent's number).  Its
 * path as we can open it, "/proc/<pid>/root<path in the target's mount
 * namespace>", into buf, its device and inode into dev and ino; -1 if
 * there is none, the maps cannot be read or the path does not fit.
 * preload (may be NULL): set if the lines read (all of them when there is
 * no segment) map libmemtop.so, so that one read of the maps also says
 * whether to ask it why (preload_probe.h). */
int mt_maps_segment(int pid, char *buf, size_t n, dev_t *dev, ino_t *ino, bool *preload);

/* Whether pid maps a segment of its own number whose file is gone from
 * its directory ("... (deleted)" in the maps: removed by hand, or a
 * process with the same pid in another PID namespace sharing the
 * directory replaced it, as targets before the segment lock did); its
 * path in the target's mount namespace, without the suffix, into buf. */
bool mt_maps_segment_deleted(int pid, char *buf, size_t n);

/* Whether a maps path ends in " (deleted)" (its file is gone); *len: its
 * length without that suffix. */
bool mt_maps_path_deleted(const char *path, size_t *len);

/* True if path names libmemtop.so (any directory, any version suffix). */
bool mt_maps_is_preload(const char *path);

/* The last entry of NSpid in /proc/<pid>/status: pid as the process sees
 * itself in its own PID namespace (pid itself outside any); -1 if gone. */
int mt_proc_nspid(int pid);

/* The inode of pid's PID namespace (/proc/<pid>/ns/pid), 0 if unknown. */
uint64_t mt_proc_pidns(int pid);

#endif
