/* shm_error.c -- filling mt_err values (see shm_error.h). */
#include "shm_error.h"

#include <stdarg.h>
#include <stdio.h>

mt_errc mt_err_set(mt_err *err, mt_errc code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

const char *mt_errc_name(mt_errc code)
{
    static const char *const names[] = {
        "ok",       "noent",     "perm",    "io",    "notready",  "notmemtop",
        "foreign",  "truncated", "corrupt", "empty", "busy",      "nomem",
        "readonly", "timeout",   "target",  "gone",  "untrusted",
    };
    unsigned i = (unsigned)code;
    return i < sizeof names / sizeof names[0] ? names[i] : "unknown";
}
