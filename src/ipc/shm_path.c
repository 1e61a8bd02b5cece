/* shm_path.c -- naming and listing segment files (see shm_path.h). */
#include "shm_path.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm_layout.h"

const char *mt_shm_dir(void)
{
    const char *dir = getenv("MEMTOP_SHM_DIR");
    return dir && *dir ? dir : MT_SHM_DEFAULT_DIR;
}

int mt_shm_path(const char *dir, int pid, char *buf, size_t n)
{
    int r = snprintf(buf, n, "%s/%s%d", dir, MT_SHM_PREFIX, pid);
    return r < 0 || (size_t)r >= n ? -1 : 0;
}

/* A suffix "-<1 to 32 lowercase hex digits>" (MT_SHM_SUFFIX_LEN when the
 * target makes it); true if p is one. */
static bool is_suffix(const char *p)
{
    if (*p++ != '-')
        return false;
    size_t n = strspn(p, "0123456789abcdef");
    return n >= 1 && n <= 32 && p[n] == '\0';
}

int mt_shm_parse_name(const char *name)
{
    size_t plen = strlen(MT_SHM_PREFIX);
    if (strncmp(name, MT_SHM_PREFIX, plen) != 0)
        return -1;
    const char *p = name + plen;
    if (*p < '1' || *p > '9')
        return -1;
    long v = 0;
    for (; *p && *p != '-'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return -1;
    }
    return *p && !is_suffix(p) ? -1 : (int)v;
}

mt_errc mt_shm_scan(const char *dir, int pid, mt_shm_visit fn, void *ctx, mt_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return mt_err_set(err, errno == ENOENT ? MT_E_NOENT : MT_E_IO, "%s: %s", dir,
                          strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        int p = mt_shm_parse_name(e->d_name);
        if (p > 0 && (pid == 0 || p == pid))
            rc = fn(dirfd(d), e->d_name, p, ctx);
    }
    closedir(d);
    return rc == 0 ? MT_OK : mt_err_set(err, MT_E_NOMEM, "out of memory listing %s", dir);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int push_pid(mt_pid_list *l, size_t *cap, int pid)
{
    if (l->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        int *p = realloc(l->pids, ncap * sizeof *p);
        if (!p)
            return -1;
        l->pids = p;
        *cap = ncap;
    }
    l->pids[l->count++] = pid;
    return 0;
}

typedef struct list_acc {
    mt_pid_list *l;
    size_t cap;
} list_acc;

static int visit_push(int dfd, const char *name, int pid, void *ctx)
{
    (void)dfd, (void)name;
    list_acc *a = ctx;
    return push_pid(a->l, &a->cap, pid);
}

mt_errc mt_shm_list(const char *dir, mt_pid_list *out, mt_err *err)
{
    out->pids = NULL;
    out->count = 0;
    list_acc acc = {out, 0};
    mt_errc rc = mt_shm_scan(dir, 0, visit_push, &acc, err);
    if (rc) {
        mt_pid_list_free(out);
        return rc;
    }
    if (out->count)
        qsort(out->pids, out->count, sizeof *out->pids, cmp_int);
    size_t n = 0; /* a pid with several files is listed once */
    for (size_t i = 0; i < out->count; i++)
        if (n == 0 || out->pids[n - 1] != out->pids[i])
            out->pids[n++] = out->pids[i];
    out->count = n;
    return MT_OK;
}

void mt_pid_list_free(mt_pid_list *list)
{
    free(list->pids);
    list->pids = NULL;
    list->count = 0;
}
