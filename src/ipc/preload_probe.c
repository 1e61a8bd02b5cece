/* preload_probe.c -- reading a target's libmemtop.so status record (see
 * preload_probe.h and preload_status.h).
 *
 * The record lies in a writable mapping of libmemtop.so (its .data) at a
 * multiple of MT_STATUS_ALIGN; those mappings are page-aligned, so the
 * reader looks for the magic at every such offset of them, a chunk at a
 * time, and then reads the record itself until two reads agree (the target
 * may be writing it).  A record is believed only if its version, size,
 * phase and pid (the process's own, in its PID namespace: a fork child's
 * copy of its parent's failure is not its own) are right. */
#include "preload_probe.h"
#include "text_printable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "preload_status.h"
#include "shm_maps.h"

#define MAX_RANGES 4
#define SCAN_MAX (1ull << 20) /* bytes of one mapping looked at, at most (its .data: ~130 KiB) */
#define CHUNK (64u << 10)
#define READ_TRIES 4

typedef struct lib_maps {
    bool found; /* libmemtop.so is mapped */
    int n;
    uint64_t start[MAX_RANGES], end[MAX_RANGES]; /* its writable mappings */
    dev_t dev[MAX_RANGES];                       /* and the devices of their files */
} lib_maps;

static int visit_lib(int pid, const mt_map_entry *m, void *ctx)
{
    (void)pid;
    lib_maps *l = ctx;
    if (!mt_maps_is_preload(m->path))
        return 0;
    l->found = true;
    if (m->writable && l->n < MAX_RANGES && m->end > m->start) {
        l->start[l->n] = m->start;
        l->dev[l->n] = m->dev;
        l->end[l->n++] = m->end;
    }
    return 0;
}

bool mt_mountinfo_dev_is_fuse(FILE *f, dev_t dev)
{
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned maj, min;
        const char *sep = strstr(line, " - ");
        /* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS] - FSTYPE SOURCE OPTIONS" */
        if (sscanf(line, "%*u %*u %u:%u ", &maj, &min) != 2 || !sep)
            continue; /* a line cut by the buffer is skipped the same way */
        if (makedev(maj, min) == dev)
            return strncmp(sep + 3, "fuse", 4) == 0;
    }
    return false;
}

/* Whether the mapping of a file on device dev must not be read (FUSE, or
 * the mount table cannot be read). */
static bool on_fuse(int pid, dev_t dev)
{
    char name[64];
    snprintf(name, sizeof name, "/proc/%d/mountinfo", pid);
    FILE *f = fopen(name, "re");
    if (!f)
        return true;
    bool fuse = mt_mountinfo_dev_is_fuse(f, dev);
    fclose(f);
    return fuse;
}

/* The address of the record's magic in [start, end), or 0. */
static uint64_t find_magic(int fd, uint64_t start, uint64_t end, unsigned char *buf)
{
    if (end - start > SCAN_MAX)
        end = start + SCAN_MAX;
    for (uint64_t at = start; at < end; at += CHUNK) {
        size_t want = end - at < CHUNK ? (size_t)(end - at) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)at);
        if (got <= 0)
            return 0;
        for (size_t off = 0; off + sizeof(uint64_t) <= (size_t)got; off += MT_STATUS_ALIGN) {
            uint64_t v;
            memcpy(&v, buf + off, sizeof v);
            if (v == MT_STATUS_MAGIC)
                return at + off;
        }
    }
    return 0;
}

/* The record at addr, read until two reads agree; false if it cannot be. */
static bool read_record(int fd, uint64_t addr, mt_status_record *r)
{
    mt_status_record again;
    if (pread(fd, r, sizeof *r, (off_t)addr) != (ssize_t)sizeof *r)
        return false;
    for (int i = 0; i < READ_TRIES; i++) {
        if (pread(fd, &again, sizeof again, (off_t)addr) != (ssize_t)sizeof again)
            return false;
        if (memcmp(r, &again, sizeof again) == 0)
            return true;
        *r = again;
    }
    return false;
}

/* The reason a valid failure record gives. */
static void describe(mt_status_record *r, char *why, size_t n)
{
    char buf[64];
    int code = r->err > 0 && r->err < 4096 ? r->err : 0; /* any value: only a label */
    const char *what = code ? strerror_r(code, buf, sizeof buf) : "unknown error";
    r->path[sizeof r->path - 1] = '\0';
    mt_printable(r->path);
    if (r->phase == MT_STATUS_THREAD)
        snprintf(why, n, "the target cannot start its publisher thread: %s", what);
    else if (r->phase == MT_STATUS_PUBLISH)
        snprintf(why, n, "the target cannot publish its segment: %s (%s)", what, r->path);
    else
        snprintf(why, n, "the target cannot create its segment: %s (%s)", what, r->path);
}

mt_preload_state mt_preload_judge(const mt_status_record *rec, int nspid, char *why, size_t n,
                                  char *path, size_t pn)
{
    if (rec->version != MT_STATUS_VERSION || rec->bytes != sizeof *rec ||
        rec->phase >= MT_STATUS_PHASES) {
        snprintf(why, n, "its libmemtop.so status is of another version (%u) or corrupt",
                 (unsigned)rec->version);
        return MT_PRELOAD_UNKNOWN;
    }
    if (rec->phase == MT_STATUS_NONE || rec->pid != nspid)
        return MT_PRELOAD_PENDING;
    mt_status_record r = *rec;
    describe(&r, why, n);
    if (path)
        snprintf(path, pn, "%s", r.path);
    return MT_PRELOAD_FAILED;
}

/* The state the record at addr gives. */
static mt_preload_state judge(int fd, uint64_t addr, int pid, char *why, size_t n, char *path,
                              size_t pn)
{
    mt_status_record r;
    if (!read_record(fd, addr, &r)) {
        snprintf(why, n, "its libmemtop.so status cannot be read (it keeps changing)");
        return MT_PRELOAD_UNKNOWN;
    }
    return mt_preload_judge(&r, mt_proc_nspid(pid), why, n, path, pn);
}

mt_preload_state mt_preload_probe(int pid, char *why, size_t n, char *path, size_t pn)
{
    lib_maps l = {0};
    if (mt_maps_scan(pid, visit_lib, &l) != 0 || !l.found)
        return MT_PRELOAD_ABSENT;
    char mem[64];
    snprintf(mem, sizeof mem, "/proc/%d/mem", pid);
    int fd = open(mem, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(why, n, "its libmemtop.so status cannot be read (%s: %s)", mem, strerror(errno));
        return MT_PRELOAD_UNKNOWN;
    }
    unsigned char *buf = malloc(CHUNK);
    uint64_t addr = 0;
    int skipped = 0;
    for (int i = 0; buf && i < l.n && !addr; i++) {
        if (on_fuse(pid, l.dev[i]))
            skipped++; /* its server could make the read wait for ever */
        else
            addr = find_magic(fd, l.start[i], l.end[i], buf);
    }
    free(buf);
    mt_preload_state st = MT_PRELOAD_PENDING; /* an older library: no record */
    if (!addr && skipped) {
        snprintf(why, n, "its libmemtop.so status is not read (the library is on FUSE)");
        st = MT_PRELOAD_UNKNOWN;
    } else if (addr)
        st = judge(fd, addr, pid, why, n, path, pn);
    close(fd);
    return st;
}
