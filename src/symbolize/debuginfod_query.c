/* debuginfod_query.c -- see debuginfod_query.h. */
#include "debuginfod_query.h"

#include <elfutils/debuginfod.h>
#include <stdlib.h>

#define CANCELLED "no symbols (debuginfod cancelled)"
#define TIMED_OUT "no symbols (debuginfod timed out)"

static bool passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static struct timespec in_seconds(unsigned s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += s;
    return t;
}

void mt_debuginfod_init(mt_debuginfod *d)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    const char *max = getenv("DEBUGINFOD_MAXTIME");
    char *end = NULL;
    unsigned long s = max ? strtoul(max, &end, 10) : 0;
    *d = (mt_debuginfod){.enabled = urls && *urls, .timeout_s = MT_DEBUGINFOD_TIMEOUT_S};
    if (max && *max && !*end && s > 0 && s <= 3600)
        d->timeout_s = (unsigned)s;
}

bool mt_debuginfod_ready(const mt_debuginfod *d)
{
    return d->enabled && !__atomic_load_n(&d->cancelled, __ATOMIC_RELAXED) &&
           passed(&d->quiet_until);
}

/* libdebuginfod calls this about once a second while a query runs (also
 * while a server sends nothing); non-zero aborts the query. */
static int progress(debuginfod_client *c, long done, long total)
{
    (void)done, (void)total;
    mt_debuginfod *d = debuginfod_get_user_data(c);
    if (!d)
        return 0;
    if (__atomic_load_n(&d->cancelled, __ATOMIC_RELAXED))
        d->aborted = CANCELLED;
    else if (passed(&d->deadline))
        d->aborted = TIMED_OUT;
    return d->aborted != NULL;
}

void mt_debuginfod_arm(mt_debuginfod *d, Dwfl *dwfl)
{
    d->aborted = NULL;
    d->deadline = in_seconds(d->timeout_s);
    debuginfod_client *c = d->enabled ? dwfl_get_debuginfod_client(dwfl) : NULL;
    if (c) {
        debuginfod_set_user_data(c, d);
        debuginfod_set_progressfn(c, progress);
    }
}

static const char *why(const mt_debuginfod *d)
{
    return __atomic_load_n(&d->cancelled, __ATOMIC_RELAXED) ? CANCELLED : TIMED_OUT;
}

const char *mt_debuginfod_skipped(const mt_debuginfod *d)
{
    return d->enabled ? why(d) : NULL;
}

const char *mt_debuginfod_done(mt_debuginfod *d)
{
    const char *aborted = d->aborted;
    d->aborted = NULL;
    if (aborted)
        d->quiet_until = in_seconds(MT_DEBUGINFOD_BACKOFF_S);
    return aborted;
}

int mt_debuginfod_fetch(mt_debuginfod *d, Dwfl *dwfl, const unsigned char *id, int len)
{
    if (!mt_debuginfod_ready(d))
        return -1;
    mt_debuginfod_arm(d, dwfl);
    debuginfod_client *c = dwfl_get_debuginfod_client(dwfl);
    int fd = c ? debuginfod_find_debuginfo(c, id, len, NULL) : -1;
    return fd >= 0 ? fd : -1;
}

void mt_debuginfod_cancel(mt_debuginfod *d)
{
    __atomic_store_n(&d->cancelled, true, __ATOMIC_RELAXED);
}
