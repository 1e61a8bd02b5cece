/* format.c -- human-readable numbers (see format.h). */
#include "format.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "shm_layout.h"

static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
#define NUNITS (sizeof units / sizeof units[0])

/* Scale v (>= 0) into [0, 1024) with one decimal that does not round up to
 * "1024.0"; returns the unit index. */
static unsigned scale(double *v)
{
    unsigned u = 0;
    while (u + 1 < NUNITS && (*v >= 1024.0 || (u > 0 && *v >= 1023.95))) {
        *v /= 1024.0;
        u++;
    }
    return u;
}

static void fmt_scaled(double v, const char *sign, const char *suffix, char *buf, size_t n)
{
    unsigned u = scale(&v);
    if (u == 0)
        snprintf(buf, n, "%s%.0f B%s", sign, floor(v), suffix);
    else
        snprintf(buf, n, "%s%.1f %s%s", sign, v, units[u], suffix);
}

char *mt_fmt_fixed(double v, int decimals, char *buf, size_t n)
{
    char num[400]; /* DBL_MAX in full, a radix of several bytes */
    snprintf(num, sizeof num, "%.*f", decimals, isfinite(v) ? v : 0.0);
    size_t k = 0;
    for (const char *p = num; *p && k + 1 < n; p++) {
        bool digit = *p == '-' || (*p >= '0' && *p <= '9');
        if (digit || k == 0 || buf[k - 1] != '.')
            buf[k++] = digit ? *p : '.'; /* the radix, one byte or more */
    }
    if (n)
        buf[k] = '\0';
    return buf;
}

char *mt_fmt_bytes(uint64_t bytes, char *buf, size_t n)
{
    if (bytes == MT_UNKNOWN)
        snprintf(buf, n, "?");
    else if (bytes < 1024)
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    else
        fmt_scaled((double)bytes, "", "", buf, n);
    return buf;
}

char *mt_fmt_rate(double bytes_per_s, char *buf, size_t n)
{
    if (!isfinite(bytes_per_s) || fabs(bytes_per_s) < 0.5) {
        snprintf(buf, n, "0 B/s");
        return buf;
    }
    fmt_scaled(fabs(bytes_per_s), bytes_per_s < 0 ? "-" : "+", "/s", buf, n);
    return buf;
}

char *mt_fmt_sampling(uint64_t rate, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    uint64_t v = rate;
    while (u + 1 < sizeof unit / sizeof unit[0] && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    buf[0] = '\0';
    if (rate)
        snprintf(buf, n, "sampled 1/%llu %s", (unsigned long long)v, unit[u]);
    return buf;
}

char *mt_fmt_count(uint64_t count, char *buf, size_t n)
{
    static const char sfx[] = "KMGTPE";
    if (count < 1000000) {
        snprintf(buf, n, "%llu", (unsigned long long)count);
        return buf;
    }
    double v = (double)count;
    unsigned u = 0;
    while (v >= 999.95 && u < sizeof sfx - 1) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, n, "%.1f%c", v, sfx[u - 1]);
    return buf;
}

char *mt_fmt_duration(uint64_t s, char *buf, size_t n)
{
    if (s < 60)
        snprintf(buf, n, "%llus", (unsigned long long)s);
    else if (s < 3600)
        snprintf(buf, n, "%llum%02llus", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    else if (s < 86400)
        snprintf(buf, n, "%lluh%02llum", (unsigned long long)(s / 3600),
                 (unsigned long long)(s % 3600 / 60));
    else
        snprintf(buf, n, "%llud%02lluh", (unsigned long long)(s / 86400),
                 (unsigned long long)(s % 86400 / 3600));
    return buf;
}

char *mt_fmt_sanitize(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
    return s;
}

char *mt_fmt_window(double seconds, char *buf, size_t n)
{
    if (!(seconds > 0))
        snprintf(buf, n, "no window yet");
    else if (seconds < 0.000995) /* thresholds where the rounding changes the unit */
        snprintf(buf, n, "%.2f ms", seconds * 1000);
    else if (seconds < 0.9995)
        snprintf(buf, n, "%.0f ms", seconds * 1000);
    else if (seconds < 9.95)
        snprintf(buf, n, "%.1f s", seconds);
    else
        snprintf(buf, n, "%.0f s", seconds);
    return buf;
}

double mt_fmt_allocator_share(uint64_t allocator, uint64_t live, uint64_t age_s, char *buf,
                              size_t n)
{
    char b[32];
    mt_fmt_bytes(allocator, b, sizeof b);
    if (age_s) {
        snprintf(buf, n, "%s (%llu s ago)", b, (unsigned long long)age_s);
        return -1;
    }
    if (allocator < live) {
        snprintf(buf, n, "%s (below the live heap)", b);
        return -1;
    }
    double share = allocator ? 100.0 * (double)(allocator - live) / (double)allocator : 0.0;
    snprintf(buf, n, "%s, %.0f%% not live", b, share);
    return share;
}

const char *mt_fmt_own_memory(uint64_t tracker, uint64_t segment, char *buf, size_t n)
{
    char t[32], g[32];
    if (tracker == MT_UNKNOWN)
        snprintf(buf, n, "unknown");
    else if (segment == MT_UNKNOWN)
        snprintf(buf, n, "%s + segment unknown", mt_fmt_bytes(tracker, t, sizeof t));
    else
        snprintf(buf, n, "%s + %s segment", mt_fmt_bytes(tracker, t, sizeof t),
                 mt_fmt_bytes(segment, g, sizeof g));
    return buf;
}
