/* debug_find.c -- see debug_find.h. */
#include "debug_find.h"

#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_file.h"

#define MAX_CANDIDATES 6

/* fd (a regular file, *st) or its copy if its build-id is want, else -1;
 * copied when foreign (mt_copy_fd), else as mt_stable_fd decides. */
static int checked(int fd, const struct stat *st, bool foreign, const unsigned char *want, int len)
{
    const char *why;
    fd = foreign ? mt_copy_fd(fd, st, MT_COPY_LIMIT, &why)
                 : mt_stable_fd(fd, st, MT_COPY_LIMIT, &why);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *id = NULL;
    bool same = elf && dwelf_elf_gnu_build_id(elf, &id) == len && memcmp(id, want, len) == 0;
    elf_end(elf);
    if (!same) {
        close(fd);
        return -1;
    }
    return fd;
}

int mt_debug_check_fd(int fd, const unsigned char *want, int len)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    return checked(fd, &st, false, want, len);
}

/* fd of candidate if it is a regular file whose build-id is want; a file
 * under the target's root (foreign) is always read from a copy. */
static int debug_candidate(const char *candidate, bool foreign, const unsigned char *want, int len)
{
    struct stat st;
    const char *why;
    int fd = mt_open_regular(candidate, &st, &why);
    return fd < 0 ? -1 : checked(fd, &st, foreign, want, len);
}

static void build_id_path(char *out, const char *root, const unsigned char *id, int len)
{
    int at = snprintf(out, PATH_MAX, "%s/usr/lib/debug/.build-id/%02x/", root, id[0]);
    for (int i = 1; i < len && at < PATH_MAX - 8; i++)
        at += snprintf(out + at, PATH_MAX - at, "%02x", id[i]);
    snprintf(out + at, PATH_MAX - at, ".debug");
}

/* The places to look, in order; how many. */
static int candidate_paths(char out[MAX_CANDIDATES][PATH_MAX], const char *root,
                           const unsigned char *id, int len, const char *file_name,
                           const char *debuglink)
{
    int n = 0;
    build_id_path(out[n++], "", id, len);
    if (root[0])
        build_id_path(out[n++], root, id, len);
    if (debuglink && debuglink[0] == '/') {
        snprintf(out[n++], PATH_MAX, "%s%s", root, debuglink);
        return n;
    }
    const char *slash = strrchr(file_name, '/');
    if (!debuglink || !slash)
        return n;
    int dir = (int)(slash - file_name);
    snprintf(out[n++], PATH_MAX, "%.*s/%s", dir, file_name, debuglink);
    snprintf(out[n++], PATH_MAX, "%.*s/.debug/%s", dir, file_name, debuglink);
    /* under /usr/lib/debug: the module's directory as the target names it */
    size_t r = strlen(root);
    const char *own = root[0] && strncmp(file_name, root, r) == 0 ? file_name + r : file_name;
    snprintf(out[n++], PATH_MAX, "%s/usr/lib/debug%.*s/%s", root, (int)(slash - own), own,
             debuglink);
    return n;
}

int mt_debug_find(const char *root, const unsigned char *id, int len, const char *file_name,
                  const char *debuglink, char **found)
{
    char paths[MAX_CANDIDATES][PATH_MAX];
    int n = candidate_paths(paths, root, id, len, file_name, debuglink);
    for (int i = 0; i < n; i++) {
        bool foreign = root[0] && strncmp(paths[i], root, strlen(root)) == 0;
        int fd = debug_candidate(paths[i], foreign, id, len);
        if (fd >= 0) {
            *found = strdup(paths[i]);
            return fd;
        }
    }
    return -1;
}
