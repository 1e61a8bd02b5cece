/* filter.h -- the `/` filter: a case-insensitive substring match (ASCII
 * case folding; other bytes compare exactly). */
#ifndef MEMTOP_MODEL_FILTER_H
#define MEMTOP_MODEL_FILTER_H

#include <stdbool.h>

/* True when pattern is NULL or "" or occurs in text (NULL text: false). */
bool mt_filter_match(const char *text, const char *pattern);

/* True when pattern is NULL or "" (everything matches). */
bool mt_filter_empty(const char *pattern);

#endif
