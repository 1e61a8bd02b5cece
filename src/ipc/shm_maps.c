/* shm_maps.c -- who maps a segment, from /proc/<pid>/maps (see
 * shm_maps.h). */
#include "shm_maps.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shm_liveness.h"
#include "shm_path.h"
#include "proc_file.h"

/* One line "start-end perms offset maj:min inode   path"; 0 if it names a
 * file. */
static int parse_line(char *line, mt_map_entry *m)
{
    unsigned long long start, end, ino;
    unsigned maj, mnr;
    char perms[8];
    int off = 0;
    if (sscanf(line, "%llx-%llx %7s %*x %x:%x %llu %n", &start, &end, perms, &maj, &mnr, &ino,
               &off) != 6 ||
        off == 0 || ino == 0)
        return -1;
    m->writable = perms[1] == 'w';
    line[strcspn(line, "\n")] = '\0';
    m->start = start;
    m->end = end;
    m->dev = makedev(maj, mnr);
    m->ino = (ino_t)ino;
    m->path = line + off;
    return 0;
}

int mt_maps_scan(int pid, mt_map_visit fn, void *ctx)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    int fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        mt_map_entry m;
        if (parse_line(line, &m) == 0)
            rc = fn(pid, &m, ctx);
    }
    free(line);
    fclose(f);
    return rc;
}

typedef struct holder_q {
    dev_t dev;
    ino_t ino;
} holder_q;

static int visit_holder(int pid, const mt_map_entry *m, void *ctx)
{
    (void)pid;
    const holder_q *q = ctx;
    return m->dev == q->dev && m->ino == q->ino;
}

static int pid_of(const char *name)
{
    char *end;
    long v = strtol(name, &end, 10);
    return *name >= '1' && *name <= '9' && *end == '\0' && v < 1L << 30 ? (int)v : 0;
}

/* True if pid is alive, not us, started at start_ticks (0: any) and maps
 * q's file. */
static int holds(int pid, const holder_q *q, uint64_t start_ticks)
{
    uint64_t ticks;
    char st;
    if (pid == getpid() || mt_proc_start_ticks(pid, &ticks, &st) != 0 || st == 'Z' || st == 'X')
        return 0;
    if (start_ticks && ticks != start_ticks)
        return 0;
    return mt_maps_scan(pid, visit_holder, (void *)q) == 1;
}

int mt_maps_holder(dev_t dev, ino_t ino, uint64_t start_ticks)
{
    holder_q q = {dev, ino};
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        int pid = pid_of(e->d_name);
        if (pid > 0 && holds(pid, &q, start_ticks))
            found = pid;
    }
    closedir(d);
    return found;
}

typedef struct seg_q {
    int nspid;
    bool *preload;
    char *buf;
    size_t n;
    dev_t *dev;
    ino_t *ino;
} seg_q;

static int visit_segment(int pid, const mt_map_entry *m, void *ctx)
{
    const seg_q *q = ctx;
    const char *base = strrchr(m->path, '/');
    if (q->preload && mt_maps_is_preload(m->path))
        *q->preload = true;
    if (m->path[0] != '/' || !base || mt_shm_parse_name(base + 1) != q->nspid)
        return 0; /* "(deleted)" at the end does not parse either */
    int r = snprintf(q->buf, q->n, "/proc/%d/root%s", pid, m->path);
    if (r < 0 || (size_t)r >= q->n)
        return 0;
    *q->dev = m->dev;
    *q->ino = m->ino;
    return 1;
}

bool mt_maps_path_deleted(const char *path, size_t *len)
{
    static const char suffix[] = " (deleted)";
    size_t n = strlen(path), cut = sizeof suffix - 1;
    bool gone = n > cut && strcmp(path + n - cut, suffix) == 0;
    *len = gone ? n - cut : n;
    return gone;
}

typedef struct gone_q {
    int nspid;
    char *buf;
    size_t n;
} gone_q;

static int visit_deleted(int pid, const mt_map_entry *m, void *ctx)
{
    (void)pid;
    const gone_q *q = ctx;
    size_t len;
    if (m->path[0] != '/' || !mt_maps_path_deleted(m->path, &len) || len >= q->n)
        return 0;
    memcpy(q->buf, m->path, len);
    q->buf[len] = '\0';
    const char *base = strrchr(q->buf, '/');
    return mt_shm_parse_name(base + 1) == q->nspid;
}

bool mt_maps_segment_deleted(int pid, char *buf, size_t n)
{
    gone_q q = {mt_proc_nspid(pid), buf, n};
    return n > 0 && q.nspid > 0 && mt_maps_scan(pid, visit_deleted, &q) == 1;
}

bool mt_maps_is_preload(const char *path)
{
    const char *base = strrchr(path, '/');
    return base && strncmp(base + 1, "libmemtop.so", 12) == 0;
}

int mt_maps_segment(int pid, char *buf, size_t n, dev_t *dev, ino_t *ino, bool *preload)
{
    if (preload)
        *preload = false;
    seg_q q = {mt_proc_nspid(pid), preload, buf, n, dev, ino};
    return q.nspid > 0 && mt_maps_scan(pid, visit_segment, &q) == 1 ? 0 : -1;
}

int mt_proc_nspid(int pid)
{
    char buf[4096];
    if (mt_proc_read(pid, "status", buf, sizeof buf) < 0)
        return -1;
    const char *p = strstr(buf, "\nNSpid:");
    if (!p)
        return pid; /* a kernel without NSpid: no namespaces to see */
    p += 7;
    int last = -1;
    char *end;
    for (long v; (v = strtol(p, &end, 10)) > 0 && end != p; p = end)
        last = (int)v;
    return last;
}

uint64_t mt_proc_pidns(int pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/ns/pid", pid);
    return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}
