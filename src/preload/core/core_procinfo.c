/* core_procinfo.c -- facts about this process from /proc.
 *
 * Read by the publisher thread only.  Uses open/read/close into stack
 * buffers (no stdio, which would allocate).  What the allocator itself
 * says it holds: core_allocator_figures.c.
 */
#define _GNU_SOURCE
#include "core_procinfo.h"

#include "proc_stat.h"
#include "shm_layout.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

ssize_t mt_proc_read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = '\0';
    return n;
}

/* Field `field` of /proc/self/stat (proc_stat.h), 0 if unknown. */
static uint64_t self_stat_number(int field)
{
    char buf[1024];
    uint64_t v = 0;
    if (mt_proc_read_file("/proc/self/stat", buf, sizeof buf) <= 0 ||
        mt_stat_number(buf, field, &v) != 0)
        return 0;
    return v;
}

uint64_t mt_self_start_ticks(void)
{
    return self_stat_number(MT_STAT_START_TICKS);
}

uint32_t mt_proc_threads(void)
{
    return (uint32_t)self_stat_number(MT_STAT_THREADS);
}

void mt_proc_exe(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    out[n < 0 ? 0 : n] = '\0';
}

void mt_proc_cmdline(char *out, size_t cap)
{
    ssize_t n = mt_proc_read_file("/proc/self/cmdline", out, cap);
    while (n > 0 && out[n - 1] == '\0')
        n--; /* setproctitle's padding (redis, nginx): not trailing spaces */
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
}

/* One line of /proc/self/maps ("start-end perms offset dev inode path"):
 * its path if the mapping holds addr and is a file's. */
static bool map_line_path(const char *line, uint64_t addr, char *out, size_t cap)
{
    uint64_t lo = 0, hi = 0;
    const char *p = line;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
        lo = lo * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    if (*p++ != '-')
        return false;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
        hi = hi * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    if (addr < lo || addr >= hi)
        return false;
    for (int field = 0; field < 4 && *p; field++) { /* perms, offset, dev, inode */
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    size_t n = strlen(p);
    if (*p != '/' || n >= cap)
        return false;
    memcpy(out, p, n + 1);
    return true;
}

bool mt_proc_mapped_file(uint64_t addr, char *out, size_t cap)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[4096];
    size_t len = 0;
    bool found = false, eof = false;
    while (!found) {
        char *nl = memchr(buf, '\n', len);
        if (!nl && !eof && len < sizeof buf) {
            ssize_t n = read(fd, buf + len, sizeof buf - len);
            eof = n <= 0;
            len += n > 0 ? (size_t)n : 0;
            continue;
        }
        if (!nl) /* the end, or a line longer than the buffer */
            break;
        *nl = '\0';
        found = map_line_path(buf, addr, out, cap);
        len -= (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, len);
    }
    close(fd);
    return found;
}

uint64_t mt_proc_rss_bytes(void)
{
    char buf[256];
    if (mt_proc_read_file("/proc/self/statm", buf, sizeof buf) <= 0)
        return MT_UNKNOWN;
    const char *p = strchr(buf, ' ');
    if (!p)
        return MT_UNKNOWN;
    uint64_t pages = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (uint64_t)(*p - '0');
    return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}
