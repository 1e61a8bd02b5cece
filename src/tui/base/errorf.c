/* errorf.c -- memtop's one-line error messages on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "errors.h"

void mt_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("memtop: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
