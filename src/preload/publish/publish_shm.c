/* publish_shm.c -- create and fill the shared-memory segment (target side).
 *
 * Only the publisher thread (and the exit path, under the publish lock)
 * writes here; the hooks never touch the segment, so no viewer can slow an
 * allocation.  The file is sized sparse with ftruncate, and every byte is
 * committed with posix_fallocate before it is first written: on a full
 * /dev/shm that fails cleanly instead of killing the target with SIGBUS.
 * The directory is shared with every other user: names are chosen so that
 * nobody can take them first (mt_shm_seal, docs/shm-protocol.md).
 */
#define _GNU_SOURCE
#include "publish_shm.h"

#include "core_log.h"
#include "core_procinfo.h"
#include "publish_status.h"
#include "shm_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COMMIT_MIN (64ull << 10)

static uint64_t layout(mt_shm_private *h)
{
    uint64_t off = MT_HEADER_BYTES;
    h->defs_off = off;
    h->defs_cap = MT_DEFS_CAP;
    off += MT_DEFS_CAP;
    h->modules_off = off;
    h->modules_cap = MT_MODULES_CAP;
    off += MT_MODULES_CAP;
    for (unsigned i = 0; i < MT_SLOTS; i++) {
        h->slots[i].off = off;
        h->slots[i].cap = MT_SLOT_CAP;
        off += MT_SLOT_CAP;
    }
    return off;
}

/* Stores the layout (offsets and capacities) into the header. */
static void store_layout(mt_shm_header *h, const mt_shm_private *p)
{
    h->defs_off = p->defs_off;
    h->defs_cap = p->defs_cap;
    h->modules_off = p->modules_off;
    h->modules_cap = p->modules_cap;
    for (unsigned i = 0; i < MT_SLOTS; i++) {
        h->slots[i].off = p->slots[i].off;
        h->slots[i].cap = p->slots[i].cap;
    }
}

/* 16 hex digits nobody can predict: getrandom, else (no entropy yet) the
 * clock, the pid and a stack address mixed. */
static void random_hex(char out[17])
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = ((uint64_t)ts.tv_nsec + ((uint64_t)ts.tv_sec << 30)) * 0x9e3779b97f4a7c15ull;
        v ^= (uint64_t)(uintptr_t)&ts ^ ((uint64_t)getpid() << 40);
    }
    for (int i = 0; i < 16; i++)
        out[i] = "0123456789abcdef"[(v >> (4 * i)) & 15];
    out[16] = '\0';
}

/* The segment is built under a temporary name and renamed into place once
 * sealed (mt_shm_seal), so nobody ever sees a half-written segment.  The
 * name ends in a random suffix so that nobody can take it first:
 * .memtop-<pid>.<16 hex digits>, created O_EXCL|O_NOFOLLOW. */
static int open_fresh(mt_shm_writer *w, const char *dir, int pid)
{
    int fd = -1;
    for (int i = 0; i < 8 && fd < 0; i++) {
        char hex[17];
        random_hex(hex);
        snprintf(w->tmp_path, sizeof w->tmp_path, "%s/.%s%d.%s", dir, MT_SHM_PREFIX, pid, hex);
        fd = open(w->tmp_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    return fd;
}

/* The committed-up-to watermark of the region holding `off`, with the
 * region's bounds. */
static uint64_t *region_mark(mt_shm_writer *w, uint64_t off, uint64_t *start, uint64_t *limit)
{
    const mt_shm_private *h = &w->p;
    if (off < h->modules_off) {
        *start = h->defs_off;
        *limit = h->modules_off;
        return &w->committed[0];
    }
    if (off < h->slots[0].off) {
        *start = h->modules_off;
        *limit = h->slots[0].off;
        return &w->committed[1];
    }
    for (unsigned i = MT_SLOTS; i-- > 0;) {
        if (off >= h->slots[i].off) {
            *start = h->slots[i].off;
            *limit = h->slots[i].off + h->slots[i].cap;
            return &w->committed[2 + i];
        }
    }
    return NULL;
}

bool mt_shm_commit(mt_shm_writer *w, uint64_t off, uint64_t len)
{
    uint64_t start, limit;
    uint64_t *mark = w->base ? region_mark(w, off, &start, &limit) : NULL;
    if (!mark || off + len > limit)
        return false;
    uint64_t end = off + len;
    if (*mark == 0)
        *mark = start;
    if (end <= *mark)
        return true;
    /* Grow geometrically by a quarter of the region's committed size (at
     * least 64 KiB): a big process makes few calls (~30 from 64 KiB to
     * 64 MiB) and commits at most a quarter more than it writes.  Doubling
     * left up to half of a 60 MiB segment committed and never written:
     * RAM on /dev/shm, which memtop_segment_bytes shows. */
    uint64_t have = *mark - start;
    uint64_t to = *mark + (have / 4 > COMMIT_MIN ? have / 4 : COMMIT_MIN);
    if (to < end)
        to = end;
    to = (to + COMMIT_MIN - 1) & ~(COMMIT_MIN - 1);
    if (to > limit)
        to = limit;
    int rc = posix_fallocate(w->fd, (off_t)*mark, (off_t)(to - *mark));
    if (rc != 0) {
        if (!w->grow_errno) { /* once: a full /dev/shm fails every publish */
            w->grow_errno = rc;
            w->hdr->grow_errno = (uint32_t)rc;
            mt_log(MT_LOG_WARN,
                   "cannot grow segment %s: %s (data that does not fit is dropped; "
                   "not repeated)",
                   w->path, strerror(rc));
        }
        mt_shm_set_flag(w, MT_FLAG_SEGMENT_FULL);
        return false;
    }
    *mark = to;
    return true;
}

uint64_t mt_shm_committed(mt_shm_writer *w, uint64_t off)
{
    uint64_t start, limit;
    uint64_t *mark = w->base ? region_mark(w, off, &start, &limit) : NULL;
    return mark && *mark > off ? *mark - off : 0;
}

static void fill_identity(mt_shm_header *h, int pid)
{
    h->version = MT_SHM_VERSION;
    h->endian_mark = MT_SHM_ENDIAN_MARK;
    h->header_bytes = MT_HEADER_BYTES;
    h->word_bits = 64;
    h->pid = pid;
    h->ppid = getppid();
    h->uid = getuid();
    h->proc_start_ticks = mt_self_start_ticks();
    mt_proc_exe(h->exe, sizeof h->exe);
    mt_proc_cmdline(h->cmdline, sizeof h->cmdline);
}

/* Replaces dest with our segment, if dest is still `expect`: a leftover
 * of ours whose exclusive lock the caller holds (mt_shm_lock_leftover), or
 * a FIFO or link of ours (never a segment).  Under that lock no other
 * target replaces the leftover: one that finds the name taken must lock
 * it first, one that finds it free renames with RENAME_NOREPLACE.  Only a
 * removal without the lock (rm, an older memtop) could free the name for
 * such a one between our check and our rename, so the names are
 * exchanged, and the file that comes out under our temporary name must be
 * `expect` (then removed); anything else is put back.  1: done; 0: dest is
 * no longer `expect` (look again); -1: failed (errno). */
static int replace_file(mt_shm_writer *w, const char *dest, const struct stat *expect)
{
    struct stat st;
    if (lstat(dest, &st) != 0 || !mt_same_file(expect, &st))
        return 0;
    if (renameat2(AT_FDCWD, w->tmp_path, AT_FDCWD, dest, RENAME_EXCHANGE) != 0) {
        if (errno == ENOENT)
            return 0;
        if (errno != EINVAL && errno != ENOSYS)
            return -1;
        /* No exchange in this file system: checked just above, under the lock. */
        return rename(w->tmp_path, dest) == 0 ? 1 : -1;
    }
    if (lstat(w->tmp_path, &st) == 0 && mt_same_file(expect, &st)) {
        unlink(w->tmp_path); /* the leftover, now under our temporary name */
        return 1;
    }
    /* Someone's segment: give its name back (if even that fails, it stays
     * under our unpredictable temporary name, and we under its name). */
    return renameat2(AT_FDCWD, w->tmp_path, AT_FDCWD, dest, RENAME_EXCHANGE) == 0 ? 0 : 1;
}

/* replace_file for the leftover whose exclusive lock fd holds; closes fd
 * (the lock goes with it: on the file replaced, now unlinked, or left). */
static int replace_locked(mt_shm_writer *w, int fd, const char *dest)
{
    struct stat locked;
    int rc = fstat(fd, &locked) == 0 ? replace_file(w, dest, &locked) : -1;
    close(fd);
    return rc;
}

/* Can a shared lock on dest be had at once: nobody holds it exclusively?
 * true when dest cannot be opened (the caller's next try decides). */
static bool shared_free(const char *dest)
{
    int fd = open(dest, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return true;
    bool ok = flock(fd, LOCK_SH | LOCK_NB) == 0;
    close(fd);
    return ok;
}

/* How long a leftover's exclusive lock is waited for: its holders (the
 * viewer's --list probe and --clean, a target replacing it) hold it for
 * microseconds, unless the scheduler stops them meanwhile.  The wait holds
 * the publisher's lock (create_segment), which a dlclose's module sync on
 * another thread may then spin on: kept short. */
#define EXCLUSIVE_WAIT_MS 100

/* mt_shm_lock_leftover on dest, told apart from a running process's
 * shared lock (*busy): an exclusive holder, who takes the lock only to
 * look at the file or replace it, is waited for, 1 ms at a time.  Before,
 * a target starting while `memtop --list` probed its pid's leftover took
 * the probe for a live target in another PID namespace and published
 * under a random name. */
static int lock_leftover_waiting(const char *dest, bool *busy)
{
    for (int waited = 0;; waited++) {
        int fd = mt_shm_lock_leftover(AT_FDCWD, dest, busy);
        if (fd >= 0 || !*busy)
            return fd;
        if (shared_free(dest)) /* a shared holder, or the exclusive one just left */
            return mt_shm_lock_leftover(AT_FDCWD, dest, busy);
        if (waited == EXCLUSIVE_WAIT_MS)
            return -1; /* still held: busy, as a running process's */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* Replaces the file in_way (lstat of dest, of our user) if nobody holds
 * it: a leftover under its exclusive lock, a FIFO or link as it is.  A
 * directory stays.  As replace_file; 0 with *busy when a running process
 * holds it. */
static int replace_own(mt_shm_writer *w, const char *dest, const struct stat *in_way, bool *busy)
{
    *busy = false;
    if (S_ISDIR(in_way->st_mode))
        return 0;
    if (!S_ISREG(in_way->st_mode))
        return replace_file(w, dest, in_way);
    int fd = lock_leftover_waiting(dest, busy);
    return fd < 0 ? 0 : replace_locked(w, fd, dest);
}

/* Gives our segment the name dest: when no file has it
 * (RENAME_NOREPLACE: of two targets with one pid sealing at once, the
 * second finds the first's file), or when the file there is a leftover of
 * ours that no running process holds (replace_own).  1: done; 0: in the
 * way (*in_way: the file there; *busy: a running process of ours holds
 * it); -1: failed (errno).  Where the file system has no RENAME_NOREPLACE
 * (not tmpfs, a kernel before 3.15), a free name is taken by rename. */
static int take_name(mt_shm_writer *w, const char *dest, struct stat *in_way, bool *busy)
{
    *busy = false;
    for (int tries = 0; tries < 4; tries++) {
        if (renameat2(AT_FDCWD, w->tmp_path, AT_FDCWD, dest, RENAME_NOREPLACE) == 0)
            return 1;
        bool noreplace = errno == EEXIST;
        if (!noreplace && errno != EINVAL && errno != ENOSYS)
            return -1;
        if (lstat(dest, in_way) != 0) {
            if (errno != ENOENT)
                return -1;
            if (!noreplace) /* free, and no other way to take it */
                return rename(w->tmp_path, dest) == 0 ? 1 : -1;
            continue; /* removed meanwhile */
        }
        if (in_way->st_uid != geteuid())
            return 0;
        int rc = replace_own(w, dest, in_way, busy);
        if (rc != 0 || *busy || S_ISDIR(in_way->st_mode))
            return rc;
    }
    return 0; /* changing under us all along: publish aside */
}

/* Our own memtop-<pid>-<suffix> in dir, if there is one: the name our
 * pre-exec image published under (reusing it lets a viewer see the exec),
 * or a leftover of a dead process of ours with our pid; not one a running
 * process holds.  Returns the descriptor holding its exclusive lock
 * (mt_shm_lock_leftover: no other target takes it meanwhile), its path in
 * out; -1 if none.  getdents64, not opendir: no allocation in the target. */
static int find_own_aside(const char *dir, int pid, char *out, size_t n)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    char prefix[32], buf[4096] __attribute__((aligned(8)));
    size_t plen = (size_t)snprintf(prefix, sizeof prefix, "%s%d-", MT_SHM_PREFIX, pid);
    int found = -1;
    ssize_t got;
    while (found < 0 && (got = getdents64(dfd, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < got && found < 0;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf + off);
            off += d->d_reclen;
            struct stat st;
            bool busy;
            if (strncmp(d->d_name, prefix, plen) != 0 ||
                fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
                st.st_uid != geteuid() || (found = mt_shm_lock_leftover(dfd, d->d_name, &busy)) < 0)
                continue;
            int r = snprintf(out, n, "%s/%s", dir, d->d_name);
            if (r < 0 || (size_t)r >= n) {
                close(found);
                found = -1;
            }
        }
    }
    close(dfd);
    return found;
}

/* Moves our segment to a name of its own, memtop-<pid>-<suffix>, in dir:
 * our leftover found by find_own_aside, replaced under its lock, else a
 * new random one (RENAME_NOREPLACE).  The name into aside; false (errno)
 * if neither can be had. */
static bool move_aside(mt_shm_writer *w, const char *dir, char *aside, size_t n)
{
    int fd = find_own_aside(dir, w->p.pid, aside, n);
    if (fd >= 0 && replace_locked(w, fd, aside) > 0)
        return true;
    char hex[17];
    random_hex(hex);
    int r = snprintf(aside, n, "%s/%s%d-%s", dir, MT_SHM_PREFIX, w->p.pid, hex);
    errno = ENAMETOOLONG;
    return r > 0 && (size_t)r < n &&
           renameat2(AT_FDCWD, w->tmp_path, AT_FDCWD, aside, RENAME_NOREPLACE) == 0;
}

/* The name memtop-<pid> is not ours to take: another user's file holds it
 * (squatted, or a leftover of their process with our pid), or (busy) the
 * live segment of a process of ours with the same pid in another PID
 * namespace.  Publish as memtop-<pid>-<16 random hex digits> instead, a
 * name nobody can take first, and say which file was in the way (once per
 * program image; only with MEMTOP_LOG=info when busy: containers of a pod
 * meet it on every start).  Readers find it by its owner and the target's
 * maps (docs/shm-protocol.md, "Naming and trust"). */
static bool publish_aside(mt_shm_writer *w, const struct stat *in_way, bool busy)
{
    char dir[sizeof w->path], aside[sizeof w->path];
    snprintf(dir, sizeof dir, "%s", w->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (!move_aside(w, dir, aside, sizeof aside)) {
        int e = errno;
        mt_log(MT_LOG_WARN,
               "%s is in the way (owned by uid %u) and %s cannot be created: %s; memtop "
               "shows this process without data",
               w->path, (unsigned)in_way->st_uid, aside, strerror(e));
        mt_status_fail(MT_STATUS_PUBLISH, e, aside);
        return false;
    }
    if (busy)
        mt_log(MT_LOG_INFO,
               "%s is the segment of a running process with this pid (another PID namespace): "
               "publishing as %s",
               w->path, aside);
    else
        mt_log(MT_LOG_WARN, "%s is in the way (owned by uid %u, %s): publishing as %s", w->path,
               (unsigned)in_way->st_uid,
               in_way->st_uid != geteuid() ? "not by this process's user" : "not a segment", aside);
    snprintf(w->path, sizeof w->path, "%s", aside);
    return true;
}

/* Unmaps (if `unmap`) and closes the segment, and forgets it. */
static void release(mt_shm_writer *w, bool unmap)
{
    if (w->base) {
        if (unmap)
            munmap(w->base, w->bytes);
        close(w->fd);
    }
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

/* Makes the header valid: everything else first, the magic last (release),
 * so a reader that sees the magic sees a complete header.  Then gives the
 * file its name: memtop-<pid> when that is free, or our own and held by no
 * running process (take_name: a leftover of a dead process of ours with
 * our pid, or of our own pre-exec image, replaced atomically under its
 * lock), else a name of our own (publish_aside).  Of two processes with
 * one pid sealing at once, one takes the name and the other finds it held:
 * neither replaces the other's segment. */
bool mt_shm_seal(mt_shm_writer *w)
{
    __atomic_store_n(&w->hdr->magic, MT_SHM_MAGIC, __ATOMIC_RELEASE);
    struct stat in_way;
    bool busy;
    int rc = take_name(w, w->path, &in_way, &busy);
    if (rc > 0 || (rc == 0 && publish_aside(w, &in_way, busy)))
        return true;
    if (rc < 0) {
        int e = errno;
        mt_log(MT_LOG_WARN, "cannot publish %s: %s; memtop shows this process without data",
               w->path, strerror(e));
        mt_status_fail(MT_STATUS_PUBLISH, e, w->path);
    }
    unlink(w->tmp_path);
    release(w, true);
    return false;
}

/* The lock that says "live" (docs/shm-protocol.md, "Held while live")
 * is taken through fd, the descriptor the segment was created and mapped
 * with; once fd is closed the mapping alone holds it: a flock belongs to
 * the open file description, which the mapping keeps open.  MADV_DONTFORK
 * keeps the mapping out of every child, made by fork() or not (_Fork,
 * clone: no atfork handler runs in them), so the lock ends with this
 * process's mapping (munmap, exit, exec).  The descriptor kept to grow the
 * file (mt_shm_commit) is a second open of it, a description without the
 * lock: a child that inherits it holds nothing.  Returns that descriptor;
 * fd itself where either step fails (then a child that inherits fd, or the
 * mapping, keeps the lock while it lives, as before). */
static int hold_live(mt_shm_writer *w, int fd)
{
    w->dontfork = madvise(w->base, w->bytes, MADV_DONTFORK) == 0;
    if (!w->dontfork)
        return fd;
    /* Our unpredictable temporary name: nobody else has it; checked anyway. */
    int grow = open(w->tmp_path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat a, b;
    if (grow >= 0 && fstat(fd, &a) == 0 && fstat(grow, &b) == 0 && mt_same_file(&a, &b)) {
        close(fd);
        return grow;
    }
    if (grow >= 0)
        close(grow);
    return fd;
}

bool mt_shm_own_exists(const char *dir, int pid)
{
    char path[MT_PATH_MAX + 32];
    int r = snprintf(path, sizeof path, "%s/%s%d", dir, MT_SHM_PREFIX, pid);
    struct stat st;
    return r > 0 && (size_t)r < sizeof path &&
           fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           st.st_uid == geteuid();
}

bool mt_shm_create(mt_shm_writer *w, const char *dir, int pid)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    snprintf(w->path, sizeof w->path, "%s/%s%d", dir, MT_SHM_PREFIX, pid);
    uint64_t total = layout(&w->p);
    w->p.pid = pid;
    int fd = open_fresh(w, dir, pid);
    if (fd < 0) {
        int e = errno;
        mt_log(MT_LOG_WARN, "cannot create %s: %s; memtop shows this process without data",
               w->tmp_path, strerror(e));
        mt_status_fail(MT_STATUS_CREATE, e, w->path);
        return false;
    }
    fchmod(fd, 0600); /* whatever the umask did: owner only */
    /* Held while live (hold_live).  Without flock, the name is taken as
     * before. */
    flock(fd, LOCK_SH | LOCK_NB);
    void *base = MAP_FAILED;
    int rc = ftruncate(fd, (off_t)total) == 0 ? posix_fallocate(fd, 0, MT_HEADER_BYTES) : errno;
    if (rc == 0)
        base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        rc = rc ? rc : errno;
        mt_log(MT_LOG_WARN, "cannot set up %s: %s; memtop shows this process without data", w->path,
               strerror(rc));
        mt_status_fail(MT_STATUS_SETUP, rc, w->path);
        close(fd);
        unlink(w->tmp_path);
        return false;
    }
    w->base = base;
    w->bytes = total;
    w->fd = hold_live(w, fd);
    w->hdr = base;
    store_layout(w->hdr, &w->p);
    w->hdr->segment_bytes = total;
    fill_identity(w->hdr, pid);
    return true;
}

bool mt_shm_append_def(mt_shm_writer *w, uint32_t id, const uint64_t *frames, uint32_t n,
                       uint16_t flags, uint64_t hash, uint64_t first_seen_ns)
{
    mt_shm_private *p = &w->p;
    uint64_t need = mt_def_bytes(n);
    if (p->defs_used + need > p->defs_cap || !mt_shm_commit(w, p->defs_off + p->defs_used, need))
        return false;
    unsigned char *at = w->base + p->defs_off + p->defs_used;
    mt_shm_def d = {.id = id,
                    .nframes = (uint16_t)n,
                    .flags = flags,
                    .hash = hash,
                    .first_seen_ns = first_seen_ns};
    memcpy(at, &d, sizeof d);
    memcpy(at + sizeof d, frames, n * sizeof *frames);
    p->defs_used += need;
    p->defs_count++;
    /* Record first, then the length, then the count (release each). */
    __atomic_store_n(&w->hdr->defs_used, p->defs_used, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->defs_count, p->defs_count, __ATOMIC_RELEASE);
    return true;
}

int64_t mt_shm_append_module(mt_shm_writer *w, const mt_shm_module *m)
{
    mt_shm_private *p = &w->p;
    if (p->modules_used + sizeof *m > p->modules_cap ||
        !mt_shm_commit(w, p->modules_off + p->modules_used, sizeof *m))
        return -1;
    memcpy(w->base + p->modules_off + p->modules_used, m, sizeof *m);
    uint64_t idx = p->modules_count++;
    p->modules_used += sizeof *m;
    __atomic_store_n(&w->hdr->modules_used, p->modules_used, __ATOMIC_RELEASE);
    __atomic_store_n(&w->hdr->modules_count, p->modules_count, __ATOMIC_RELEASE);
    return (int64_t)idx;
}

void mt_shm_mark_unloaded(mt_shm_writer *w, int64_t index, uint64_t seq, uint32_t unload_trace)
{
    if (!w->base || index < 0 || (uint64_t)index >= w->p.modules_count)
        return;
    mt_shm_module *rec =
        (mt_shm_module *)(w->base + w->p.modules_off + (uint64_t)index * sizeof *rec);
    __atomic_store_n(&rec->unload_trace, unload_trace, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->unload_seq, seq, __ATOMIC_RELEASE); /* after its unload_trace */
}

bool mt_shm_revive_module(mt_shm_writer *w, int64_t index)
{
    if (!w->base || index < 0 || (uint64_t)index + 1 != w->p.modules_count)
        return false;
    mt_shm_module *rec =
        (mt_shm_module *)(w->base + w->p.modules_off + (uint64_t)index * sizeof *rec);
    __atomic_store_n(&rec->unload_seq, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&rec->unload_trace, 0, __ATOMIC_RELAXED);
    return true;
}

void mt_shm_change_flags(mt_shm_writer *w, uint32_t set, uint32_t clear)
{
    w->p.flags = (w->p.flags & ~clear) | set;
    if (w->hdr)
        __atomic_store_n(&w->hdr->flags, w->p.flags, __ATOMIC_RELEASE);
}

void mt_shm_set_flag(mt_shm_writer *w, uint32_t flag)
{
    mt_shm_change_flags(w, flag, 0);
}

void mt_shm_unlink(mt_shm_writer *w)
{
    if (w->base)
        unlink(w->path);
}

void mt_shm_forget(mt_shm_writer *w)
{
    release(w, !w->dontfork);
}
