/* proc_file.c -- see proc_file.h. */
#include "proc_file.h"
#include "shm_maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAPS_LINES_MAX 100000 /* a hostile maps file is still read in bounded time */

/* Whether a and b are the same file; true when either cannot be read. */
static bool same_file(const char *a, const char *b)
{
    struct stat x, y;
    if (stat(a, &x) != 0 || stat(b, &y) != 0)
        return true;
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

bool mt_proc_root(int pid, char *out, unsigned n)
{
    out[0] = '\0';
    char root[32], ns[32];
    snprintf(root, sizeof root, "/proc/%d/root", pid);
    snprintf(ns, sizeof ns, "/proc/%d/ns/mnt", pid);
    if (pid <= 0 || (same_file(root, "/") && same_file(ns, "/proc/self/ns/mnt")))
        return false; /* our own root and mounts (or the process is gone) */
    return snprintf(out, n, "%s", root) < (int)n;
}

/* The first file-backed mapping of pid overlapping [start, end) into
 * *lo, *hi; false if none (or pid is gone). */
static bool file_mapping(int pid, uint64_t start, uint64_t end, uint64_t *lo, uint64_t *hi)
{
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
    FILE *f = fopen(maps, "re");
    if (!f)
        return false;
    char line[512];
    bool found = false;
    for (int i = 0; !found && i < MAPS_LINES_MAX && fgets(line, sizeof line, f); i++) {
        bool whole = strchr(line, '\n') != NULL;
        uint64_t a, b, inode;
        found =
            sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %*x:%*x %" SCNu64, &a, &b, &inode) == 3 &&
            inode != 0 && a < end && start < b;
        *lo = a, *hi = b;
        while (!whole && fgets(line, sizeof line, f)) /* the rest of a long line */
            whole = strchr(line, '\n') != NULL;
    }
    fclose(f);
    return found;
}

int mt_proc_module_alts(int pid, const char *path, uint64_t start, uint64_t end,
                        char out[MT_PROC_ALT_MAX][PATH_MAX])
{
    if (pid <= 0 || path[0] != '/')
        return 0;
    size_t len;
    mt_maps_path_deleted(path, &len);
    int n = 0;
    if (snprintf(out[n], PATH_MAX, "/proc/%d/root%.*s", pid, (int)len, path) < PATH_MAX)
        n++;
    uint64_t lo, hi;
    if (start < end && file_mapping(pid, start, end, &lo, &hi))
        snprintf(out[n++], PATH_MAX, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, lo, hi);
    return n;
}
