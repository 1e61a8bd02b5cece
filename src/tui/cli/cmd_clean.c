/* cmd_clean.c -- `memtop --clean`: remove the segments whose process is
 * gone (docs/shm-protocol.md, "Removing").  Whatever a file's name or
 * header says, one that a live process maps or whose lock a running process
 * holds is kept; a link is removed itself, never followed.  The caller's
 * own files only, also as root, unless root asks for every user's
 * (--all-users: a service of its own user that keeps crashing leaves one
 * per crash), each line then naming the file's owner. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caps.h"
#include "commands.h"
#include "memtop_ipc.h"
#include "shm_lock.h"

typedef struct clean_ctx {
    const char *dir;
    bool all_users; /* --all-users: not only the caller's own files */
    int removed;
    int rc;
} clean_ctx;

/* What --all-users needs to apply the rules below to another user's file
 * (root has them all); without any one of them a rule could not be kept,
 * so all three are required. */
static const struct {
    int cap;
    const char *name;
} all_users_caps[] = {
    {CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"}, /* open its header, lock it (mode 0600) */
    {CAP_FOWNER, "CAP_FOWNER"},             /* unlink it from a sticky directory */
    {CAP_SYS_PTRACE, "CAP_SYS_PTRACE"},     /* read every process's maps: who maps it */
};

/* Whether this caller may clean every user's files; if not, says so in one
 * line (the capabilities missing), before anything is touched. */
static bool all_users_allowed(void)
{
    char missing[128] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof all_users_caps / sizeof all_users_caps[0]; i++)
        if (!mt_cap_effective(all_users_caps[i].cap) && len < sizeof missing)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "",
                                    all_users_caps[i].name);
    if (!len)
        return true;
    mt_errorf("--clean --all-users is for root: it needs CAP_DAC_OVERRIDE, CAP_FOWNER and "
              "CAP_SYS_PTRACE to open, lock and remove other users' files and to see every "
              "process's maps (missing %s); nothing removed",
              missing);
    return false;
}

/* " of user NAME" (" of uid N" if the uid has no name) with --all-users:
 * whose file a line is about; else "" (the caller's own). */
static const char *whose(const clean_ctx *c, uid_t uid, char *buf, size_t n)
{
    struct passwd pw, *found = NULL;
    char names[4096];
    if (!c->all_users)
        return "";
    if (getpwuid_r(uid, &pw, names, sizeof names, &found) == 0 && found)
        snprintf(buf, n, " of user %s", found->pw_name);
    else
        snprintf(buf, n, " of uid %u", (unsigned)uid);
    return buf;
}

/* Why the segment at path may be removed, or NULL to keep it.  Only our
 * own files (even as root: another user's file is theirs to clean) unless
 * all_users, and a link is removed itself, never followed. */
static const char *clean_reason(const char *path, int pid, const struct stat *st, bool all_users)
{
    if ((!all_users && st->st_uid != geteuid()) || !(S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)))
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

/* The exclusive lock of the segment file at path (mt_shm_lock_leftover),
 * held while it is removed, so that no target replaces it meanwhile; the
 * file locked and the name's, after the lock, must both still be `st`.
 * -1 to keep the file: a running process holds its lock (one this viewer
 * cannot see: another PID namespace sharing the directory, as the
 * containers of one pod share /dev/shm; said), or it changed or cannot be
 * opened. */
static int lock_unchanged(const char *path, const char *owner, const struct stat *st,
                          const char *why)
{
    bool busy;
    int fd = mt_shm_lock_leftover(AT_FDCWD, path, &busy);
    struct stat locked, named;
    if (busy)
        printf("kept %s%s (%s, but a running process holds its lock)\n", path, owner, why);
    if (fd >= 0 && (fstat(fd, &locked) != 0 || !mt_same_file(&locked, st) ||
                    lstat(path, &named) != 0 || !mt_same_file(&named, st))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int clean_one(clean_ctx *c, const char *path, int pid)
{
    struct stat before, now;
    char buf[300];
    if (lstat(path, &before) != 0)
        return 0;
    const char *why = clean_reason(path, pid, &before, c->all_users);
    if (!why || lstat(path, &now) != 0 || now.st_ino != before.st_ino ||
        now.st_dev != before.st_dev)
        return 0;
    const char *owner = whose(c, now.st_uid, buf, sizeof buf);
    /* Whatever the header says (its pid may be another namespace's), a
     * file that a live process maps is in use: never removed. */
    int holder = S_ISREG(now.st_mode) ? mt_maps_holder(now.st_dev, now.st_ino, 0) : 0;
    if (holder > 0) {
        printf("kept %s%s (%s, but process %d maps it)\n", path, owner, why, holder);
        return 0;
    }
    int lock = S_ISREG(now.st_mode) ? lock_unchanged(path, owner, &now, why) : -1;
    if (S_ISREG(now.st_mode) && lock < 0)
        return 0;
    int rc = unlink(path);
    if (lock >= 0)
        close(lock);
    if (rc != 0) {
        mt_errorf("cannot remove %s: %s", path, strerror(errno));
        return -1;
    }
    printf("removed %s%s (%s)\n", path, owner, why);
    c->removed++;
    return 0;
}

static int clean_visit(int dfd, const char *name, int pid, void *arg)
{
    (void)dfd;
    clean_ctx *c = arg;
    char path[4096];
    int r = snprintf(path, sizeof path, "%s/%s", c->dir, name);
    if (r > 0 && (size_t)r < sizeof path && clean_one(c, path, pid) != 0)
        c->rc = MT_EXIT_FAIL;
    return 0;
}

/* Every segment name, memtop-<pid> and memtop-<pid>-<suffix>. */
int mt_cmd_clean(const mt_opts *o)
{
    if (o->all_users && !all_users_allowed())
        return MT_EXIT_FAIL;
    const char *dir = mt_shm_dir();
    clean_ctx c = {dir, o->all_users, 0, MT_EXIT_OK};
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
