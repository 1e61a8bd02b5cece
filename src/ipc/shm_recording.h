/* shm_recording.h -- the viewer's copy of the target's recording status
 * (header.recording, see shm_layout.h), validated. */
#ifndef MEMTOP_SHM_RECORDING_H
#define MEMTOP_SHM_RECORDING_H

#include <stdbool.h>

#include "dat_lost.h"
#include "shm_segment.h"

/* Copy the status out of the header, with its dropped events by cause
 * (header.rec_dropped_why, dat_format.h MT_DAT_LOST_*; all 0 in an older
 * target's segment): one set that existed together, read under the
 * header's seqlock (rec_seq; for a segment without it, two copies in a
 * row that agree).  Strings NUL-terminated within their fields.
 * MT_E_CORRUPT for an unknown state or an unterminated string (a segment
 * written by something else than libmemtop.so); MT_E_BUSY when no stable
 * read came within a bounded number of tries (~10 ms: a target that is
 * writing the status, or died while writing it): the status is not known.
 * On an error out and why are zeroed. */
mt_errc mt_segment_recording_why(const mt_segment *seg, mt_shm_recording *out,
                                 uint64_t why[MT_REC_WHY_MAX], mt_err *err);

/* The lease of the recording (header.rec_lease_ms, rec_end_reason; both
 * 0 in an older target's segment): ms, its bound, 0 when no viewer holds
 * it (MEMTOP_RECORD, MT_CMD_RECORD_START); end_reason, the MT_DAT_END_*
 * the last recording ended with, 0 while none has. */
typedef struct mt_rec_lease_info {
    uint32_t ms;
    uint32_t end_reason;
} mt_rec_lease_info;

/* The same with the lease, read in the same set (lease may be NULL). */
mt_errc mt_segment_recording_lease(const mt_segment *seg, mt_shm_recording *out,
                                   uint64_t why[MT_REC_WHY_MAX], mt_rec_lease_info *lease,
                                   mt_err *err);

/* The same without the causes. */
mt_errc mt_segment_recording(const mt_segment *seg, mt_shm_recording *out, mt_err *err);

/* r's dropped events by cause into w (dat_lost.h indexes): the header's
 * causes (why, MT_REC_WHY_MAX counts; NULL: not known) with the ones this
 * viewer does not know as MT_DAT_LOST_OTHER, and what they do not cover of
 * r->events_dropped as MT_DAT_LOST_NOT_SAID (an older target's).  Causes
 * that add up to more than events_dropped are no set that existed (an
 * older target read its counters apart): not known, all NOT_SAID.  Sums
 * saturate: the counts are untrusted. */
void mt_recording_dropped_why(const mt_shm_recording *r, const uint64_t *why,
                              uint64_t w[MT_DAT_LOST_WHY_N]);

/* "5 events dropped: disk behind 3, writer stalled (wait cap) 2" (r's
 * events_dropped, named by the causes in why, MT_REC_WHY_MAX counts or
 * NULL: not known), or "" when none was dropped.  Returns buf. */
char *mt_recording_dropped(const mt_shm_recording *r, const uint64_t *why, char *buf, size_t n);

/* `memtop -p PID --record -` has the target record into
 * $TMPDIR/memtop-stream-XXXXXX/stream.dat, which memtop relays to its
 * standard output and removes at once (cli/record_stream.c): a status
 * with such a path names a stream, not a file one could open. */
#define MT_STREAM_DIR_PREFIX "memtop-stream-"
#define MT_STREAM_FILE "stream" MT_DAT_SUFFIX
bool mt_recording_is_stream(const char *path);

/* A short line for the viewer's header, e.g. "REC /tmp/x.dat 12.3 MB" or
 * "recording failed: write error: No space left on device (ENOSPC)";
 * dropped events with their causes when why (MT_REC_WHY_MAX counts) is
 * not NULL: "(recording inexact: 5 events dropped: disk behind 5)"; a
 * stream's "REC a stream (--record -) 12.3 MB", "recorded a stream ...". */
void mt_recording_line(const mt_shm_recording *r, const uint64_t *why, char *out, unsigned cap);

#endif
