/* core_log.c -- diagnostics from inside the target.
 *
 * Messages are formatted into a stack buffer and written with a raw write(2)
 * system call (not a cancellation point: core_nocancel.h), so
 * logging never allocates and never takes a stdio lock (it may run inside an
 * allocation hook or after fork).  Output goes to stderr unless
 * MEMTOP_LOG_FILE names a file; "%p" in that name becomes the pid.
 */
#include "core_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int g_log_level = MT_LOG_WARN;
static int g_log_fd = 2;

static void expand_pattern(char *out, size_t cap, const char *pattern)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            int n = snprintf(out + o, cap - o, "%d", (int)getpid());
            o += (n > 0 && (size_t)n < cap - o) ? (size_t)n : 0;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

void mt_log_setup(int level, const char *file_pattern)
{
    g_log_level = level;
    if (!file_pattern || !*file_pattern)
        return;
    char path[1024];
    expand_pattern(path, sizeof path, file_pattern);
    /* It may be in a shared directory such as /tmp: no planted link is
     * followed, no FIFO blocks, and only a regular file of our own with one
     * link is used (not a hard link another user planted to one of ours). */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        st.st_nlink == 1) {
        g_log_fd = fd;
        return;
    }
    int e = fd < 0 ? errno : EPERM;
    if (fd >= 0)
        close(fd);
    mt_log(MT_LOG_WARN, "cannot open MEMTOP_LOG_FILE '%s': %s; logging to stderr", path,
           fd < 0 ? strerror(e) : "not a regular file of this process's user with one link");
}

void mt_log(int level, const char *fmt, ...)
{
    if (level > g_log_level)
        return;
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "memtop[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    /* A raw system call: write(2) is a cancellation point, and a line may
     * be logged on a program's thread inside a hook (core_nocancel.h). */
    long w = syscall(SYS_write, g_log_fd, buf, len);
    (void)w;
    errno = saved;
}
