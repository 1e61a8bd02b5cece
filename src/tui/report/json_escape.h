/* json_escape.h -- writing strings as JSON string literals.  Segment
 * strings (paths, command lines) are arbitrary bytes: control characters,
 * quotes and backslashes are escaped, and bytes that are not valid UTF-8
 * become U+FFFD, so the output is always valid JSON. */
#ifndef MEMTOP_JSON_ESCAPE_H
#define MEMTOP_JSON_ESCAPE_H

#include <stdio.h>

/* Writes "..." (with the quotes) for the NUL-terminated s; NULL -> null. */
void mt_json_string(FILE *f, const char *s);

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0 (the
 * exporter's labels and pprof strings replace such bytes with U+FFFD too). */
int mt_utf8_len(const unsigned char *s);

#endif
