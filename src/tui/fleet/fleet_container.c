/* fleet_container.c -- see fleet_container.h.  Reads /proc/<pid>/cgroup
 * (the unified hierarchy's line "0::/path", else the last line) and keeps
 * the path's last component; a cgroup the exporter shares (a bare unshare)
 * or anything unexpected falls back to the PID namespace. */
#include "fleet_container.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc_file.h"
#include "shm_maps.h"

/* The last component of the cgroup path of the line starting at line. */
static void cgroup_name(const char *line, char *buf, size_t n)
{
    const char *path = strstr(line, ":/");
    if (!path)
        return;
    path += 1;
    size_t len = strcspn(path, "\n");
    const char *end = path + len, *last = end;
    while (last > path && last[-1] != '/')
        last--;
    if (end > last)
        snprintf(buf, n, "%.*s", (int)(end - last), last);
}

/* The name of pid's cgroup ("" if unknown). */
static void cgroup_of(int pid, char *buf, size_t n)
{
    char text[4096];
    buf[0] = '\0';
    if (mt_proc_read(pid, "cgroup", text, sizeof text) <= 0)
        return;
    const char *unified = strstr(text, "0::/");
    const char *line = unified && (unified == text || unified[-1] == '\n') ? unified : NULL;
    if (!line) /* cgroup v1: the last line */
        for (const char *p = text; (p = strchr(p, '\n')) && p[1]; p++)
            line = p + 1;
    cgroup_name(line ? line : text, buf, n);
}

void mt_container_label(int pid, char *buf, size_t n)
{
    buf[0] = '\0';
    uint64_t ns = mt_proc_pidns(pid);
    if (!ns || ns == mt_proc_pidns(getpid()))
        return;
    /* a cgroup of its own names the container; one shared with us does not */
    char mine[256];
    cgroup_of(pid, buf, n);
    cgroup_of(getpid(), mine, sizeof mine);
    if (!buf[0] || strcmp(buf, mine) == 0)
        snprintf(buf, n, "pid:[%llu]", (unsigned long long)ns);
}
