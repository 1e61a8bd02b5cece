/* filter.c -- case-insensitive substring matching for the table filter. */
#include "filter.h"

#include <stddef.h>

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static bool match_at(const unsigned char *t, const unsigned char *p)
{
    for (; *p; t++, p++)
        if (!*t || fold(*t) != fold(*p))
            return false;
    return true;
}

bool mt_filter_empty(const char *pattern)
{
    return !pattern || !*pattern;
}

bool mt_filter_match(const char *text, const char *pattern)
{
    if (mt_filter_empty(pattern))
        return true;
    if (!text)
        return false;
    const unsigned char *t = (const unsigned char *)text;
    const unsigned char *p = (const unsigned char *)pattern;
    for (; *t; t++)
        if (fold(*t) == fold(*p) && match_at(t, p))
            return true;
    return false;
}
