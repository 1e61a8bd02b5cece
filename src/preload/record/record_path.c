/* record_path.c -- expand MEMTOP_RECORD patterns and create the file.
 *
 * The file is created with O_EXCL and mode 0600 whatever the umask: a
 * recording holds addresses, the command line and the allocation pattern
 * of the program, and an existing file (perhaps a symlink planted by
 * someone else) is never overwritten or followed.  %n tries 0, 1, 2, ...
 * so successive recordings and forked children get distinct files; a fork
 * child's name also gets ".fork", so the image it may exec (same pid)
 * finds its own %p name free.
 */
#define _GNU_SOURCE
#include "record_path.h"

#include "core_procinfo.h"
#include "record_pattern.h"
#include "shm_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNTER 100000u

static void exe_base(char *out, size_t cap)
{
    char exe[MT_PATH_MAX];
    mt_proc_exe(exe, sizeof exe);
    const char *slash = strrchr(exe, '/');
    snprintf(out, cap, "%s", slash ? slash + 1 : exe);
    if (!*out)
        snprintf(out, cap, "unknown");
}

/* The values of the sequences but %n's, taken once per file created. */
typedef struct {
    char pid[16], exe[MT_PATH_MAX], time[24];
} fixed_vals;

static void fixed_get(fixed_vals *f)
{
    snprintf(f->pid, sizeof f->pid, "%d", (int)getpid());
    exe_base(f->exe, sizeof f->exe);
    snprintf(f->time, sizeof f->time, "%lld", (long long)time(NULL));
}

static bool expand(const char *pattern, const fixed_vals *f, unsigned n, char *out, size_t cap)
{
    char num[16];
    snprintf(num, sizeof num, "%u", n);
    mt_rec_vals v = {f->pid, f->exe, f->time, num};
    return mt_rec_pattern_expand(pattern, &v, out, cap);
}

bool mt_rec_pattern_per_process(const char *pattern)
{
    return mt_rec_pattern_has(pattern, 'p') || mt_rec_pattern_has(pattern, 'n');
}

/* ".fork" before the extension of the last component, or at its end. */
static bool fork_name(char *path, size_t cap)
{
    static const char tag[] = ".fork";
    size_t len = strlen(path), k = sizeof tag - 1;
    if (len + k + 1 > cap)
        return false;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t at = dot && dot != base ? (size_t)(dot - path) : len;
    memmove(path + at + k, path + at, len - at + 1);
    memcpy(path + at, tag, k);
    return true;
}

int mt_rec_create(const char *pattern, bool fork_child, char *path, size_t cap)
{
    unsigned limit = mt_rec_pattern_has(pattern, 'n') ? MAX_COUNTER : 1;
    fixed_vals f;
    fixed_get(&f);
    for (unsigned n = 0; n < limit; n++) {
        if (!expand(pattern, &f, n, path, cap) || (fork_child && !fork_name(path, cap)))
            return -EINVAL;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            fchmod(fd, 0600);
            return fd;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}
