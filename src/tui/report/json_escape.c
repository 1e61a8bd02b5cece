/* json_escape.c -- JSON string literals from arbitrary bytes (see
 * json_escape.h). */
#include "json_escape.h"

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0.  Stops at a NUL because a
 * NUL is never a continuation byte. */
int mt_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

static void put_ascii(FILE *f, unsigned char c)
{
    switch (c) {
    case '"':
        fputs("\\\"", f);
        break;
    case '\\':
        fputs("\\\\", f);
        break;
    case '\b':
        fputs("\\b", f);
        break;
    case '\f':
        fputs("\\f", f);
        break;
    case '\n':
        fputs("\\n", f);
        break;
    case '\r':
        fputs("\\r", f);
        break;
    case '\t':
        fputs("\\t", f);
        break;
    default:
        if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

void mt_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int len = mt_utf8_len(p);
        if (len == 1)
            put_ascii(f, *p);
        else if (len > 1)
            fwrite(p, 1, (size_t)len, f);
        else
            fputs("\\ufffd", f);
        p += len ? len : 1;
    }
    fputc('"', f);
}
