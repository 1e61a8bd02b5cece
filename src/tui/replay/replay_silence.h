/* replay_silence.h -- the stretches of a recording in which nothing
 * happened at all: no allocation, no free and no TOTALS record.  The
 * writer thread writes a TOTALS at least once a second while the target
 * runs (docs/recording-format.md, 6 TOTALS), and the hooks stamp every
 * event with the time it was made, so a stretch of MT_SILENCE_MIN_NS with
 * no record time in it is one in which the whole process did not run: it
 * was stopped (SIGSTOP, a debugger, a frozen cgroup).  Live, the viewer
 * says "STOPPED (T)" then; a replay says so instead of "running" (and its
 * rates across it are averages over the stop).
 *
 * Times are marked in buckets of MT_SILENCE_BUCKET_NS during the first
 * pass (one bit each: 1.1 MB for a day), and the silences computed once
 * at its end. */
#ifndef MEMTOP_REPLAY_SILENCE_H
#define MEMTOP_REPLAY_SILENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_SILENCE_BUCKET_NS 100000000ull /* 100 ms */
#define MT_SILENCE_MIN_NS 2000000000ull   /* two TOTALS missed */

typedef struct mt_rsilence {
    uint8_t *seen; /* a bit per bucket that holds a record's time */
    size_t nbytes;
    struct mt_rsilent {
        uint64_t from_ns, to_ns; /* the last record before, the first after */
    } * gaps;
    size_t ngaps;
} mt_rsilence;

/* A record's time: 0, or -1 out of memory (then no silence is known). */
int mt_rsilence_mark(mt_rsilence *s, uint64_t t_ns);
/* The silences between lo_ns and hi_ns: 0, or -1 out of memory. */
int mt_rsilence_finish(mt_rsilence *s, uint64_t lo_ns, uint64_t hi_ns);
/* The silence t_ns falls in (from < t < to): true with its ends. */
bool mt_rsilence_at(const mt_rsilence *s, uint64_t t_ns, uint64_t *from_ns, uint64_t *to_ns);
/* How much of [lo_ns, hi_ns] lies in silences, in ns. */
uint64_t mt_rsilence_within(const mt_rsilence *s, uint64_t lo_ns, uint64_t hi_ns);
void mt_rsilence_free(mt_rsilence *s);

#endif
