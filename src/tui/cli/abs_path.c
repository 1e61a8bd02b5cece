/* abs_path.c -- see abs_path.h. */
#include "abs_path.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int mt_abs_path(const char *in, char *out, size_t n)
{
    char cwd[PATH_MAX];
    if (in[0] == '/')
        return snprintf(out, n, "%s", in) < (int)n ? 0 : -1;
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return snprintf(out, n, "%s/%s", cwd, in) < (int)n ? 0 : -1;
}
