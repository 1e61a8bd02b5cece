/* gzip_out.h -- writing a buffer gzip-compressed (RFC 1952, zlib's
 * deflate): pprof profiles are gzip files by convention, and every reader
 * (go tool pprof, Parca, Pyroscope) expects one. */
#ifndef MEMTOP_GZIP_OUT_H
#define MEMTOP_GZIP_OUT_H

#include <stddef.h>
#include <stdio.h>

/* Write buf[0..len) to f as one gzip member.  0, or -1 (errno set: ENOMEM
 * when zlib had no memory, else the write's). */
int mt_gzip_write(FILE *f, const void *buf, size_t len);

#endif
