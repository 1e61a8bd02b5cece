/* health.c -- whether a snapshot's data is exact (see health.h). */
#include "health.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

static const char head[] = "NOT exact: ";
#define HEAD_LEN (sizeof head - 1)

/* Appends one reason to buf at *k (after "; " unless it is the first),
 * bounded. */
static void add(char *buf, size_t n, size_t *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t n, size_t *k, const char *fmt, ...)
{
    if (*k + 2 >= n)
        return;
    if (*k > HEAD_LEN) {
        memcpy(buf + *k, "; ", 3);
        *k += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + *k, n - *k, fmt, ap);
    va_end(ap);
    *k += m > 0 ? (size_t)m : 0;
}

/* A sampled target's figures are estimates: "sampled 1/512 KiB" first,
 * then "; " and what else is wrong, if anything (bounded by n). */
static void prefix_sampling(uint64_t rate, char *buf, size_t n)
{
    char what[48];
    if (!rate)
        return;
    mt_fmt_sampling(rate, what, sizeof what);
    size_t w = strlen(what), rest = strlen(buf), sep = rest ? 2 : 0;
    if (w + sep + 1 > n)
        return;
    if (w + sep + rest + 1 > n)
        rest = n - 1 - w - sep;
    memmove(buf + w + sep, buf, rest);
    memcpy(buf, what, w);
    if (sep)
        memcpy(buf + w, "; ", 2);
    buf[w + sep + rest] = '\0';
}

/* mt_health_line into a buffer of n > HEAD_LEN + 1 bytes. */
static void line_into(const mt_view *v, const mt_export_rec *rec, char *buf, size_t n)
{
    memcpy(buf, head, HEAD_LEN + 1);
    mt_allocators_inexact_text(&v->allocs, buf + HEAD_LEN, n - HEAD_LEN);
    size_t k = HEAD_LEN + strlen(buf + HEAD_LEN);
    const mt_shm_totals *to = &v->snap.slot.totals;
    if (to->unknown_free_count)
        add(buf, n, &k, "%llu unknown frees", (unsigned long long)to->unknown_free_count);
    if (to->untracked_alloc_count)
        add(buf, n, &k, "%llu untracked", (unsigned long long)to->untracked_alloc_count);
    if (to->missed_free_count)
        add(buf, n, &k, "%llu missed frees", (unsigned long long)to->missed_free_count);
    /* the table's bound: backtraces seen since are counted in (overflow),
     * totals exact but not which code holds what */
    if ((v->snap.flags & MT_FLAG_TRACES_FULL) && v->snap.slot.max_traces)
        add(buf, n, &k, "trace table full (%llu traces): new backtraces counted in (overflow)",
            (unsigned long long)v->snap.slot.max_traces);
    else if (v->snap.flags & MT_FLAG_TRACES_FULL) /* an older target: its bound not said */
        add(buf, n, &k, "trace table full: new backtraces counted in (overflow)");
    if (to->dropped_traces || (v->snap.flags & MT_FLAG_SEGMENT_FULL))
        add(buf, n, &k, "%llu trace%s dropped", (unsigned long long)to->dropped_traces,
            mt_plural(to->dropped_traces));
    if (rec && rec->events_dropped) {
        char d[MT_DAT_LOST_LINE_MAX];
        add(buf, n, &k, "recording: %s",
            mt_dat_lost_line(rec->events_dropped, rec->dropped_why, d, sizeof d));
    }
    if (rec && rec->inexact_start)
        add(buf, n, &k, "recording started without its initial state");
    if (rec && mt_export_rec_culled_inexact(rec))
        add(buf, n, &k, "culled recording: live misses blocks younger than %llu ms",
            (unsigned long long)rec->cull_ms);
    if (k == HEAD_LEN)
        buf[0] = '\0'; /* nothing to say: exact */
    prefix_sampling(mt_view_sample_rate(v), buf, n);
}

void mt_health_line(const mt_view *v, const mt_export_rec *rec, char *buf, size_t n)
{
    /* made whole, then cut to n: data that is not exact never reads as
     * exact ("") for want of room (mt_health_exact asked with 8 bytes, and
     * memtop --serve called every process exact) */
    char whole[MT_HEALTH_LINE_MAX];
    line_into(v, rec, whole, sizeof whole);
    if (n)
        snprintf(buf, n, "%s", whole);
}
