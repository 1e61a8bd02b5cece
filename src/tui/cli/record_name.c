/* record_name.c -- see record_name.h. */
#include "record_name.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "errors.h"
#include "record_pattern.h"
#include "shm_layout.h"

int mt_record_name_abs(const char *in, char *out, size_t n)
{
    char cwd[PATH_MAX];
    size_t len = 0;
    if (n == 0)
        return -1;
    out[0] = '\0';
    if (in[0] != '/' && (!getcwd(cwd, sizeof cwd) || !mt_rec_pattern_escape(cwd, out, n, &len) ||
                         !mt_rec_pattern_escape("/", out, n, &len)))
        return -1;
    return snprintf(out + len, n - len, "%s", in) < (int)(n - len) ? 0 : -1;
}

int mt_record_name_check(const char *opt, const char *given, const char *pattern, const char *exe)
{
    char out[MT_PATH_MAX];
    const char *base = strrchr(exe, '/');
    /* the longest each can be: a pid below 2^22, a time of 11 digits, the
     * last counter (record_path.c) */
    mt_rec_vals longest = {"4194304", base ? base + 1 : exe, "99999999999", "99999"};
    mt_rec_vals shortest = {"", "", "", ""};
    if (!mt_rec_pattern_expand(given, &shortest, out, sizeof out) && strlen(given) < sizeof out) {
        mt_errorf("%s: bad file name '%s': use %%p %%e %%t %%n %%%% only", opt, given);
        return -1;
    }
    if (!mt_rec_pattern_expand(pattern, &longest, out, sizeof out)) {
        mt_errorf("%s: the file name is too long (at most %u characters once %%p %%e %%t %%n are "
                  "filled in): %s",
                  opt, MT_PATH_MAX - 1, given);
        return -1;
    }
    return 0;
}

/* pattern expanded into out[n] if it names the same file at every start:
 * no sequence but %%. */
static bool fixed_name(const char *pattern, char *out, size_t n)
{
    mt_rec_vals none = {"", "", "", ""};
    return !mt_rec_pattern_has(pattern, 'p') && !mt_rec_pattern_has(pattern, 'e') &&
           !mt_rec_pattern_has(pattern, 't') && !mt_rec_pattern_has(pattern, 'n') &&
           mt_rec_pattern_expand(pattern, &none, out, n);
}

/* The kernel's file system of dir when no file can be made in it ("the
 * proc file system"), else NULL.  root passes faccessat's W_OK there (its
 * permission checks are overridden), and the target's O_CREAT then fails
 * after PROG has started. */
static const char *pseudo_fs(const char *dir)
{
    static const struct {
        unsigned long magic;
        const char *name;
    } kinds[] = {
        {PROC_SUPER_MAGIC, "the proc file system"},
        {SYSFS_MAGIC, "sysfs"},
        {CGROUP_SUPER_MAGIC, "a cgroup file system"},
        {CGROUP2_SUPER_MAGIC, "a cgroup2 file system"},
        {DEBUGFS_MAGIC, "debugfs"},
        {TRACEFS_MAGIC, "tracefs"},
        {SECURITYFS_MAGIC, "securityfs"},
        {BPF_FS_MAGIC, "the bpf file system"},
        {DEVPTS_SUPER_MAGIC, "devpts"},
    };
    struct statfs fs;
    if (statfs(dir, &fs) != 0)
        return NULL; /* not known: the target's open says */
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((unsigned long)fs.f_type == kinds[i].magic)
            return kinds[i].name;
    return NULL;
}

int mt_record_name_usable(const char *pattern)
{
    char path[MT_PATH_MAX], dir[MT_PATH_MAX];
    struct stat st;
    if (fixed_name(pattern, path, sizeof path) && lstat(path, &st) == 0) {
        mt_errorf("--record: %s exists: memtop never overwrites a recording", path);
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", pattern);
    char *slash = strrchr(dir, '/'); /* the name is absolute */
    slash[slash == dir] = '\0';
    if (!fixed_name(dir, path, sizeof path))
        return 0; /* a sequence in the directory: the target's to resolve */
    int err = stat(path, &st) != 0                                 ? errno
              : !S_ISDIR(st.st_mode)                               ? ENOTDIR
              : faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) ? errno
                                                                   : 0;
    const char *pseudo = err ? NULL : pseudo_fs(path);
    if (err)
        mt_errorf("--record: cannot create a file in %s: %s", path, strerror(err));
    else if (pseudo)
        mt_errorf("--record: cannot create a file in %s: it is %s, not a disk", path, pseudo);
    return err || pseudo ? -1 : 0;
}
