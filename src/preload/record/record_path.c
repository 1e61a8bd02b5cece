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
#include "shm_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNTER 100000u

static bool append(char *out, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > cap)
        return false;
    memcpy(out + *len, s, n + 1);
    *len += n;
    return true;
}

static void exe_base(char *out, size_t cap)
{
    char exe[MT_PATH_MAX];
    mt_proc_exe(exe, sizeof exe);
    const char *slash = strrchr(exe, '/');
    snprintf(out, cap, "%s", slash ? slash + 1 : exe);
    if (!*out)
        snprintf(out, cap, "unknown");
}

bool mt_rec_expand(const char *pattern, unsigned n, char *out, size_t cap)
{
    size_t len = 0;
    char tmp[MT_PATH_MAX];
    if (!pattern || !*pattern || cap == 0)
        return false;
    out[0] = '\0';
    for (const char *p = pattern; *p; p++) {
        char one[2] = {*p, 0};
        const char *piece = one;
        if (*p == '%') {
            switch (*++p) {
            case 'p':
                snprintf(tmp, sizeof tmp, "%d", (int)getpid());
                break;
            case 'e':
                exe_base(tmp, sizeof tmp);
                break;
            case 't':
                snprintf(tmp, sizeof tmp, "%lld", (long long)time(NULL));
                break;
            case 'n':
                snprintf(tmp, sizeof tmp, "%u", n);
                break;
            case '%':
                snprintf(tmp, sizeof tmp, "%%");
                break;
            default:
                return false; /* unknown sequence, or a lone % at the end */
            }
            piece = tmp;
        }
        if (!append(out, cap, &len, piece))
            return false;
    }
    return true;
}

bool mt_rec_pattern_per_process(const char *pattern)
{
    for (const char *p = pattern; p && *p; p++) {
        if (*p != '%')
            continue;
        p++;
        if (*p == 'p' || *p == 'n')
            return true;
        if (!*p)
            break;
    }
    return false;
}

static bool has_counter(const char *pattern)
{
    for (const char *p = pattern; *p; p++)
        if (*p == '%' && *++p == 'n')
            return true;
        else if (!*p)
            break;
    return false;
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
    unsigned limit = has_counter(pattern) ? MAX_COUNTER : 1;
    for (unsigned n = 0; n < limit; n++) {
        if (!mt_rec_expand(pattern, n, path, cap) || (fork_child && !fork_name(path, cap)))
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
