/* export.c -- choosing the export format and writing the file (see
 * export.h). */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

/* A new file is created 0600, whatever the umask: a snapshot names the
 * target's code and data sizes, which are the target owner's business. */
static FILE *create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

int mt_export_file(const char *path, const mt_export_src *src, char *err, size_t n)
{
    FILE *f = create(path);
    if (!f) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (has_ext(path, ".json"))
        mt_export_json(f, src);
    else if (has_ext(path, ".csv"))
        mt_export_csv(f, src);
    else if (has_ext(path, ".folded"))
        mt_export_folded(f, src);
    else
        mt_export_text(f, src);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
