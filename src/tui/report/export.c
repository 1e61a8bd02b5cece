/* export.c -- choosing the export format and writing the file (see
 * export.h).  The file is opened by out_file.c's rules: a named file is
 * never reached through a symlink nor taken from another user. */
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

int mt_export_file(const char *path, const mt_export_src *src, char *err, size_t n)
{
    if (mt_export_stdout(path))
        fflush(stdout); /* after what --batch printed there */
    int fd = mt_export_stdout(path) ? dup(STDOUT_FILENO) : mt_out_open_named(path);
    if (fd < 0 && mt_export_stdout(path))
        fd = -errno;
    if (fd < 0) {
        snprintf(err, n, "cannot write %s: %s", path, mt_out_strerror(-fd));
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
