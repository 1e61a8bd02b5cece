/* format.h -- human-readable numbers for memtop's text output: sizes in
 * binary units, signed rates, large counts and durations. */
#ifndef MEMTOP_FORMAT_H
#define MEMTOP_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "0 B", "1023 B", "1.5 KiB", "12.3 MiB"; MT_UNKNOWN -> "?". */
char *mt_fmt_bytes(uint64_t bytes, char *buf, size_t n);

/* Signed bytes per second: "+1.2 KiB/s", "-3.0 MiB/s", "0 B/s". */
char *mt_fmt_rate(double bytes_per_s, char *buf, size_t n);

/* The Allocator figure beside the live heap: "12.4 MiB, 9% not live"
 * (fragmentation and free lists); "12.4 MiB (3 s ago)" when the
 * allocator's figures are age_s > 0 seconds older than the heap's (no
 * share of anything); "12.4 MiB (below the live heap)" when allocator <
 * live (taken at another time, as a replay's cursor between two totals,
 * or not every allocator counted): never "0% not live" there.  Returns the
 * percentage not live, or -1 when none is shown. */
double mt_fmt_allocator_share(uint64_t allocator, uint64_t live, uint64_t age_s, char *buf,
                              size_t n);

/* memtop's own memory in the target: "29.6 MiB + 54.3 MiB segment" (its
 * bookkeeping, totals.tracker_bytes, and what its shared segment holds,
 * mt_view.segment_bytes), "22.4 MiB + segment unknown" when the second is
 * MT_UNKNOWN (a recording does not store it), "unknown" without the first.
 * The two are apart: the segment is shared memory, in the target's RSS
 * only where it touched it. */
const char *mt_fmt_own_memory(uint64_t tracker, uint64_t segment, char *buf, size_t n);

/* Exact below one million, else "1.2M", "3.4G". */
char *mt_fmt_count(uint64_t count, char *buf, size_t n);

/* What a sampled target's figures are: "sampled 1/512 KiB" for a mean of
 * 512 KiB between samples (MEMTOP_SAMPLE); "" for rate 0 (exact). */
char *mt_fmt_sampling(uint64_t rate, char *buf, size_t n);

/* The mark of an estimated figure: "~" when sampled (rate > 0), else "". */
static inline const char *mt_est_mark(uint64_t rate)
{
    return rate ? "~" : "";
}

/* The plural ending of a count's noun: "" for 1, else "s" ("1 trace",
 * "2 traces"). */
static inline const char *mt_plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* A window of time as the growth columns' headings give it: "3 ms" below
 * a second (a short program's growth is over its whole run), "0.40 ms"
 * below a millisecond, "4.5 s" below ten, else "36 s"; "no window yet"
 * for 0. */
char *mt_fmt_window(double seconds, char *buf, size_t n);

/* v with `decimals` digits after a '.' whatever LC_NUMERIC says (the
 * viewer runs under the user's locale): for JSON, CSV and metrics.  A
 * non-finite v gives "0". */
char *mt_fmt_fixed(double v, int decimals, char *buf, size_t n);

/* The last component of path ("libc.so.6" of "/lib/x/libc.so.6"); path
 * itself when it has no '/' or ends with one. */
static inline const char *mt_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* "45s", "12m03s", "5h02m", "3d05h". */
char *mt_fmt_duration(uint64_t seconds, char *buf, size_t n);

/* Replace control characters in s with '?' so that text output stays one
 * line per item whatever bytes a target's paths or command line hold. */
char *mt_fmt_sanitize(char *s);

#endif
