/* export.c -- choosing the export format and writing the file (see
 * export.h).  The file is opened by out_file.c's rules: a named file is
 * never reached through a symlink nor taken from another user, and is
 * written whole or not at all (a temporary file renamed into place), but
 * in place, not atomically, where its directory refuses a temporary file
 * and it is the user's own (out_file.c). */
#include "export.h"

#include "out_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

bool mt_export_stdout(const char *path)
{
    return path[0] == '-' && (path[1] == '\0' || path[1] == '.');
}

/* To a file path names, written whole or not at all (out_file.h; tmp "":
 * a device or the in-place fallback, nothing to rename): 0, or -1 with a
 * message in err. */
static int export_whole(const char *path, const mt_export_src *src, char *err, size_t n)
{
    char tmp[4096];
    int fd = mt_out_open_whole(path, tmp, sizeof tmp);
    if (fd < 0) {
        snprintf(err, n, "cannot write %s: %s", path, mt_out_strerror(-fd));
        return -1;
    }
    if (mt_export_fd(fd, path, src, err, n) != 0) {
        if (tmp[0])
            unlink(tmp);
        return -1;
    }
    int rc = tmp[0] ? mt_out_commit_whole(tmp, path) : 0;
    if (rc != 0)
        snprintf(err, n, "cannot write %s: %s", path, mt_out_strerror(-rc));
    return rc ? -1 : 0;
}

int mt_export_file(const char *path, const mt_export_src *src, char *err, size_t n)
{
    if (!mt_export_stdout(path))
        return export_whole(path, src, err, n);
    fflush(stdout); /* after what --batch printed there */
    int fd = dup(STDOUT_FILENO);
    if (fd < 0) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return mt_export_fd(fd, path, src, err, n);
}

int mt_export_fd(int fd, const char *path, const mt_export_src *src, char *err, size_t n)
{
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    int bad = 0;
    if (has_ext(path, ".tree.json"))
        mt_export_tree_json(f, src);
    else if (has_ext(path, ".pb.gz") || has_ext(path, ".pprof"))
        bad = mt_export_pprof(f, src) != 0;
    else if (has_ext(path, ".json"))
        mt_export_json(f, src);
    else if (has_ext(path, ".csv"))
        mt_export_csv(f, src);
    else if (has_ext(path, ".folded"))
        mt_export_folded(f, src);
    else
        mt_export_text(f, src);
    bad |= ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
