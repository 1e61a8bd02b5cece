/* cmd_clean.c -- `memtop --clean`: remove the segments whose process is
 * gone (docs/shm-protocol.md, "Removing").  Whatever a file's name or
 * header says, one that a live process maps or whose lock a running process
 * holds is kept; a link is removed itself, never followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "memtop_ipc.h"
#include "shm_lock.h"

/* Why the segment at path may be removed, or NULL to keep it.  Only our
 * own files (even as root: another user's file is theirs to clean), and a
 * link is removed itself, never followed. */
static const char *clean_reason(const char *path, int pid, const struct stat *st)
{
    if (st->st_uid != geteuid() || !(S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)))
        return NULL;
    mt_segment seg;
    mt_errc rc = mt_segment_open_path(&seg, path, NULL);
    if (rc)
        return rc != MT_E_NOENT && rc != MT_E_PERM && !mt_pid_exists(pid) ? "invalid, no process"
                                                                          : NULL;
    mt_state state = mt_segment_state(&seg);
    bool owner_gone = !mt_pid_exists(seg.id.pid) && !mt_pid_exists(seg.id.ppid);
    mt_segment_close(&seg);
    if (state == MT_STATE_STALE)
        return "stale";
    return state == MT_STATE_EXITED && owner_gone ? "exited, not collected" : NULL;
}

typedef struct clean_ctx {
    const char *dir;
    int removed;
    int rc;
} clean_ctx;

/* The exclusive lock of the segment file at path (mt_shm_lock_leftover),
 * held while it is removed, so that no target replaces it meanwhile; the
 * file locked and the name's, after the lock, must both still be `st`.
 * -1 to keep the file: a running process holds its lock (one this viewer
 * cannot see: another PID namespace sharing the directory, as the
 * containers of one pod share /dev/shm; said), or it changed or cannot be
 * opened. */
static int lock_unchanged(const char *path, const struct stat *st, const char *why)
{
    bool busy;
    int fd = mt_shm_lock_leftover(AT_FDCWD, path, &busy);
    struct stat locked, named;
    if (busy)
        printf("kept %s (%s, but a running process holds its lock)\n", path, why);
    if (fd >= 0 && (fstat(fd, &locked) != 0 || !mt_same_file(&locked, st) ||
                    lstat(path, &named) != 0 || !mt_same_file(&named, st))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int clean_one(const char *path, int pid, int *removed)
{
    struct stat before, now;
    if (lstat(path, &before) != 0)
        return 0;
    const char *why = clean_reason(path, pid, &before);
    if (!why || lstat(path, &now) != 0 || now.st_ino != before.st_ino ||
        now.st_dev != before.st_dev)
        return 0;
    /* Whatever the header says (its pid may be another namespace's), a
     * file that a live process maps is in use: never removed. */
    int holder = S_ISREG(now.st_mode) ? mt_maps_holder(now.st_dev, now.st_ino, 0) : 0;
    if (holder > 0) {
        printf("kept %s (%s, but process %d maps it)\n", path, why, holder);
        return 0;
    }
    int lock = S_ISREG(now.st_mode) ? lock_unchanged(path, &now, why) : -1;
    if (S_ISREG(now.st_mode) && lock < 0)
        return 0;
    int rc = unlink(path);
    if (lock >= 0)
        close(lock);
    if (rc != 0) {
        mt_errorf("cannot remove %s: %s", path, strerror(errno));
        return -1;
    }
    printf("removed %s (%s)\n", path, why);
    (*removed)++;
    return 0;
}

static int clean_visit(int dfd, const char *name, int pid, void *arg)
{
    (void)dfd;
    clean_ctx *c = arg;
    char path[4096];
    int r = snprintf(path, sizeof path, "%s/%s", c->dir, name);
    if (r > 0 && (size_t)r < sizeof path && clean_one(path, pid, &c->removed) != 0)
        c->rc = MT_EXIT_FAIL;
    return 0;
}

/* Every segment name, memtop-<pid> and memtop-<pid>-<suffix>. */
int mt_cmd_clean(const mt_opts *o)
{
    (void)o;
    const char *dir = mt_shm_dir();
    clean_ctx c = {dir, 0, MT_EXIT_OK};
    mt_err err;
    mt_errc e = mt_shm_scan(dir, 0, clean_visit, &c, &err);
    if (e && e != MT_E_NOENT) {
        mt_errorf("%s", err.msg);
        return MT_EXIT_FAIL;
    }
    if (!c.removed)
        printf("no stale segments in %s\n", dir);
    return c.rc;
}
