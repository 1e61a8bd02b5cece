/* record_pattern.h -- the grammar of a recording's file name (MEMTOP_RECORD,
 * memtop --record, the viewer's `r`): %p the pid, %e the executable's base
 * name, %t the unix time in seconds, %n a counter, %% a percent sign.
 *
 * Why here: the target expands a name (libmemtop.so, record_path.c) and
 * memtop checks one before the target sees it (a bad name there is one
 * line among the program's output, and the program runs unrecorded), so
 * both must read the same grammar.  Header-only: libmemtop.so links no
 * part of src/ipc. */
#ifndef MT_RECORD_PATTERN_H
#define MT_RECORD_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* What each sequence stands for. */
typedef struct mt_rec_vals {
    const char *pid, *exe, *time, *n;
} mt_rec_vals;

/* The value of the sequence %c, or NULL if there is none such. */
static inline const char *mt_rec_seq(char c, const mt_rec_vals *v)
{
    switch (c) {
    case 'p':
        return v->pid;
    case 'e':
        return v->exe;
    case 't':
        return v->time;
    case 'n':
        return v->n;
    case '%':
        return "%";
    default:
        return NULL; /* another letter, or the end of a lone % */
    }
}

/* Expands pattern into out[cap].  False if the pattern is empty, holds
 * another % sequence, or does not fit (out is then "" or cut). */
static inline bool mt_rec_pattern_expand(const char *pattern, const mt_rec_vals *v, char *out,
                                         size_t cap)
{
    size_t len = 0;
    if (cap)
        out[0] = '\0';
    if (!pattern || !*pattern || cap == 0)
        return false;
    for (const char *p = pattern; *p; p++) {
        char one[2] = {*p, 0};
        const char *piece = *p == '%' ? mt_rec_seq(*++p, v) : one;
        if (!piece)
            return false;
        size_t n = strlen(piece);
        if (len + n + 1 > cap)
            return false;
        memcpy(out + len, piece, n);
        len += n;
        out[len] = '\0';
    }
    out[len] = '\0';
    return true;
}

/* Appends the literal text s to out[cap] at *len as a pattern naming it:
 * each '%' doubled (a directory named "w%nq" must not become "w0q");
 * false if it does not fit. */
static inline bool mt_rec_pattern_escape(const char *s, char *out, size_t cap, size_t *len)
{
    for (; *s; s++) {
        size_t k = *s == '%' ? 2 : 1;
        if (*len + k + 1 > cap)
            return false;
        memset(out + *len, *s, k);
        *len += k;
    }
    if (*len < cap)
        out[*len] = '\0';
    return true;
}

/* Whether pattern holds the sequence %c (c a letter of the grammar). */
static inline bool mt_rec_pattern_has(const char *pattern, char c)
{
    for (const char *p = pattern; p && *p; p++)
        if (*p == '%' && (*++p == c || !*p))
            return *p == c;
    return false;
}

#endif
