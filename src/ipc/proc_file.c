/* proc_file.c -- reading one small file of /proc/<pid>/ whole (see
 * proc_file.h). */
#include "proc_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

ssize_t mt_proc_read(int pid, const char *name, char *buf, size_t cap)
{
    char path[64];
    if (pid <= 0 || cap < 2 || snprintf(path, sizeof path, "/proc/%d/%s", pid, name) >= 64)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}
