/* proc_stat.h -- the one parser of a /proc/<pid>/stat line, shared by the
 * viewer (shm_liveness.c: is the segment's creator still alive?) and the
 * preload (core_procinfo.c: the start time it writes into the segment header,
 * the thread count it publishes).  Header-only because the preload links
 * no memtop_ipc code; inside the target it must not allocate and must stay
 * async-signal-safe, so it only walks the caller's buffer (no stdio, no
 * strtoull's locale).
 *
 * Field 2 (comm) may contain spaces and ')': fields are counted from the
 * last ')' of the line.  Fields are 1-based as in proc(5): 3 is the state
 * letter, 20 the thread count, 22 the start time in clock ticks. */
#ifndef MEMTOP_PROC_STAT_H
#define MEMTOP_PROC_STAT_H

#include <stdint.h>
#include <string.h>

/* Start of field `want` (>= 3) of the NUL-terminated stat line buf; NULL
 * if the line is not one. */
static inline const char *mt_stat_field(const char *buf, int want)
{
    const char *p = strrchr(buf, ')');
    if (!p)
        return NULL;
    p++;
    for (int field = 2; field < want; field++) {
        if (*p != ' ')
            return NULL;
        p++;
        if (field + 1 < want)
            p += strcspn(p, " ");
    }
    return p;
}

/* The unsigned decimal number field `want` of buf holds; -1 if there is
 * none (an empty or non-numeric field). */
static inline int mt_stat_number(const char *buf, int want, uint64_t *out)
{
    const char *p = mt_stat_field(buf, want);
    if (!p || *p < '0' || *p > '9')
        return -1;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (uint64_t)(*p++ - '0');
    *out = v;
    return 0;
}

#define MT_STAT_STATE 3
#define MT_STAT_THREADS 20
#define MT_STAT_START_TICKS 22

#endif
