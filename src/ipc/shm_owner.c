/* shm_owner.c -- trusting a segment by its file's owner (see shm_owner.h). */
#include "shm_owner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_maps.h"
#include "shm_path.h"
#include "proc_file.h"

int mt_proc_uids(int pid, uid_t *ruid, uid_t *euid)
{
    char buf[4096];
    if (mt_proc_read(pid, "status", buf, sizeof buf) < 0)
        return -1;
    const char *p = strstr(buf, "\nUid:");
    unsigned long r, e;
    if (!p || sscanf(p + 5, "%lu %lu", &r, &e) != 2)
        return -1;
    *ruid = (uid_t)r;
    *euid = (uid_t)e;
    return 0;
}

mt_owner_rank mt_owner_rank_for(uid_t owner, int pid)
{
    uid_t ruid, euid;
    if (mt_proc_uids(pid, &ruid, &euid) != 0)
        ruid = euid = geteuid(); /* gone: only the viewer's own files */
    /* The effective uid only: the target creates its segment as that user,
     * and a user who starts a setuid-root program (real uid theirs) must
     * not pass a file of theirs off as that root process's. */
    if (owner == euid)
        return MT_OWNER_MATCH;
    return owner == 0 ? MT_OWNER_ROOT : MT_OWNER_FOREIGN;
}

mt_errc mt_segment_check_owner(const mt_segment *seg, int pid, mt_err *err)
{
    if (mt_owner_rank_for(seg->owner, pid) == MT_OWNER_FOREIGN) {
        uid_t ruid, euid;
        if (mt_proc_uids(pid, &ruid, &euid) != 0)
            return mt_err_set(err, MT_E_UNTRUSTED,
                              "foreign owner: the file belongs to uid %u and process %d is "
                              "gone, so it cannot be checked (run memtop as uid %u)",
                              (unsigned)seg->owner, pid, (unsigned)seg->owner);
        return mt_err_set(err, MT_E_UNTRUSTED,
                          "foreign owner: the file belongs to uid %u but process %d runs as "
                          "uid %u (planted by another user?); not trusted",
                          (unsigned)seg->owner, pid, (unsigned)euid);
    }
    if (seg->id.pid != pid && seg->id.pid != mt_proc_nspid(pid))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: it belongs to pid %d",
                          (int)seg->id.pid);
    return MT_OK;
}

typedef struct best {
    const char *exact; /* the name memtop-<pid> */
    int rank;          /* -1: nothing found yet */
    bool is_exact;
    struct timespec ctime;
    char name[256];
} best;

static bool newer(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

static int visit(int dfd, const char *name, int pid, void *ctx)
{
    best *b = ctx;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        strlen(name) >= sizeof b->name)
        return 0;
    int rank = (int)mt_owner_rank_for(st.st_uid, pid);
    bool exact = strcmp(name, b->exact) == 0;
    bool better = rank > b->rank ||
                  (rank == b->rank && !b->is_exact && (exact || newer(&st.st_ctim, &b->ctime)));
    if (better) {
        b->rank = rank;
        b->is_exact = exact;
        b->ctime = st.st_ctim;
        snprintf(b->name, sizeof b->name, "%s", name);
    }
    return 0;
}

static int locate_in_dir(const char *dir, int pid, char *path, size_t n)
{
    if (mt_shm_path(dir, pid, path, n) != 0)
        return -1;
    char exact[64];
    snprintf(exact, sizeof exact, "%s%d", MT_SHM_PREFIX, pid);
    struct stat st; /* the common case, without reading the directory */
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        mt_owner_rank_for(st.st_uid, pid) == MT_OWNER_MATCH)
        return 0;
    best b = {.exact = exact, .rank = -1};
    mt_shm_scan(dir, pid, visit, &b, NULL);
    if (b.rank < 0 || b.is_exact)
        return 0;
    int r = snprintf(path, n, "%s/%s", dir, b.name);
    return r < 0 || (size_t)r >= n ? -1 : 0;
}

int mt_shm_locate(const char *dir, int pid, char *path, size_t n)
{
    if (locate_in_dir(dir, pid, path, n) != 0)
        return -1;
    char mapped[4096];
    dev_t dev;
    ino_t ino;
    struct stat st;
    if (mt_maps_segment(pid, mapped, sizeof mapped, &dev, &ino, NULL) != 0 ||
        (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino))
        return 0; /* nothing mapped (or not ours to read), or the same file */
    int r = snprintf(path, n, "%s", mapped);
    return r < 0 || (size_t)r >= n ? -1 : 0;
}

int mt_shm_unlink_own(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if ((!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) || st.st_uid != geteuid()) {
        errno = EPERM;
        return -1;
    }
    /* In a sticky directory nobody else can swap the name for a file of
     * theirs between lstat and unlink. */
    return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

int mt_shm_unlink_pid(const char *dir, int pid)
{
    char path[4096];
    return locate_in_dir(dir, pid, path, sizeof path) == 0 ? mt_shm_unlink_own(path) : -1;
}
