/* publish_shm.h -- the target's side of the shared-memory segment. */
#ifndef MT_SHM_WRITER_H
#define MT_SHM_WRITER_H

#include "shm_layout.h"

#include <stdbool.h>
#include <stddef.h>

/* The writer's own copy of every layout field and counter.  The segment is
 * written by memtop but may be scribbled on by any process of the same
 * user, so the target only ever STORES these to the header and never
 * loads them back: a corrupt header cannot steer the target's writes.
 * One exception, by design: a publish without an age scan copies the age
 * buckets and oldest births of the previous slot (publish_snapshot.c), at an
 * offset and count from the writer's own state.  Scribbling there can
 * falsify the ages published next, never steer a write. */
typedef struct mt_shm_private {
    int pid;
    uint32_t flags;
    uint32_t latest_slot;
    uint64_t publish_count;
    uint64_t defs_off, defs_cap, defs_used, defs_count;
    uint64_t modules_off, modules_cap, modules_used, modules_count;
    mt_shm_slot_ref slots[MT_SLOTS]; /* seq is our own counter */
} mt_shm_private;

typedef struct mt_shm_writer {
    int fd;              /* to grow the file; not the one that holds the lock */
    unsigned char *base; /* NULL when there is no segment */
    bool dontfork;       /* no child inherits the mapping (MADV_DONTFORK) */
    uint64_t bytes;
    mt_shm_header *hdr; /* write-only, see mt_shm_private */
    mt_shm_private p;
    char path[MT_PATH_MAX + 32];
    char tmp_path[MT_PATH_MAX + 40];
    /* Committed up to (absolute offset), per region: defs, modules, slots. */
    uint64_t committed[2 + MT_SLOTS];
    int grow_errno; /* the first failure to grow the file: logged once */
} mt_shm_writer;

/* Creates the segment for $dir/memtop-<pid> (0600) under an unpredictable
 * temporary name, its shared flock held by its mapping alone (no child
 * inherits it); mt_shm_seal puts it in place.  Returns false and logs on
 * failure. */
bool mt_shm_create(mt_shm_writer *w, const char *dir, int pid);

/* True if $dir/memtop-<pid> is a regular file of this user: the segment of
 * this process's pre-exec image (or a leftover of a dead process of ours
 * with this pid).  One fstatat. */
bool mt_shm_own_exists(const char *dir, int pid);

/* Publishes the header's magic once the caller has filled the settings,
 * and renames the segment to its final name: memtop-<pid>, or when another
 * user's file or the live segment of a process of ours with this pid
 * (another PID namespace) holds that name, memtop-<pid>-<random> (path
 * then holds that name).  Never replaces a running process's segment,
 * even when it seals at the same moment.  False (and the segment is gone)
 * if it cannot be renamed. */
bool mt_shm_seal(mt_shm_writer *w);

/* Appends one trace definition; false when the region is full. */
bool mt_shm_append_def(mt_shm_writer *w, uint32_t id, const uint64_t *frames, uint32_t n,
                       uint16_t flags, uint64_t hash, uint64_t first_seen_ns);

/* Appends one module record; returns its index or -1 when full. */
int64_t mt_shm_append_module(mt_shm_writer *w, const mt_shm_module *m);

/* Sets a module record's unload_seq (dlclose seen), after its
 * unload_trace (the next trace id when it was seen gone; 0: not known). */
void mt_shm_mark_unloaded(mt_shm_writer *w, int64_t index, uint64_t seq, uint32_t unload_trace);

/* Marks the last module record loaded again (unload_seq 0, then its
 * unload_trace); false, changing nothing, if index is not the last one. */
bool mt_shm_revive_module(mt_shm_writer *w, int64_t index);

/* Makes bytes [off, off+len) of the segment safe to touch (fallocate). */
bool mt_shm_commit(mt_shm_writer *w, uint64_t off, uint64_t len);

/* How many bytes from off on (up to its region's end) are committed
 * already: safe to touch without a new mt_shm_commit. */
uint64_t mt_shm_committed(mt_shm_writer *w, uint64_t off);

/* Header flags (MT_FLAG_*): clears `clear`, then sets `set`. */
void mt_shm_change_flags(mt_shm_writer *w, uint32_t set, uint32_t clear);
void mt_shm_set_flag(mt_shm_writer *w, uint32_t flag);
void mt_shm_unlink(mt_shm_writer *w);
/* Forgets the segment without touching it (fork child: it is the
 * parent's): closes the inherited descriptor, and unmaps the mapping only
 * where the child has it (MADV_DONTFORK failed).  Unmapping in a child
 * without it could unmap whatever was mapped there since the fork. */
void mt_shm_forget(mt_shm_writer *w);

#endif
